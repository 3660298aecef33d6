# tests/monitor_lib.sh — sourced by tests/t_monitor_*.sh (after lib.sh):
# start/stop a `gpuio monitor` daemon, scrape it with curl, and a strict
# Prometheus text-format parser (prom_parse FILE > FILE.json). The daemon is
# a registered process (tests/lib/proc.sh: SIGTERM at exit); the cgroups
# mk_cgroup made are removed at exit, after every process; a test's own
# teardown goes to on_exit.
command -v curl >/dev/null || skip "curl not installed (scripts/install-deps.sh test)"
MON_PID=""
MON_RUN="$TMP/run"
MON_PORT=${MON_PORT:-$((19500 + RANDOM % 400))}
CGV2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CGROUPS=()

on_exit 'for cg in "${CGROUPS[@]}"; do rmdir "$cg" 2>/dev/null || true; done'

# mon_start ARGS...: the daemon in the background, ready when /metrics answers
mon_start() {
  spawn -l "$TMP/monitor.log" monitor \
    "$GPUIO" monitor --run-dir "$MON_RUN" --dump-dir "$TMP/dumps" "$@"
  MON_PID=$SPAWNED
  wait_for -t 20 -i 0.1 -f "$TMP/monitor.log" -m "the monitor never answered on port $MON_PORT" \
    "/metrics on port $MON_PORT" _mon_up
}
_mon_up() {
  curl -sf "http://127.0.0.1:$MON_PORT/metrics" -o /dev/null 2>/dev/null && return 0
  proc_alive "$MON_PID" || { cat "$TMP/monitor.log"; fail "the monitor exited at start"; }
  return 1
}
mon_stop() {
  local rc=0
  kill -TERM "$MON_PID"; wait "$MON_PID" || rc=$?
  proc_unreg "$MON_PID"
  MON_PID=""
  [ "$rc" = 0 ] || fail "the monitor exited non-zero on SIGTERM"
}
# scrape FILE: GET /metrics with a real HTTP client, then the strict parse (FILE.json)
scrape() {
  curl -sf --max-time 20 "http://127.0.0.1:$MON_PORT/metrics" -o "$1" || fail "curl /metrics failed"
  prom_parse "$1" > "$1.json" || fail "/metrics is not valid Prometheus text format (see above)"
  if command -v promtool >/dev/null; then
    promtool check metrics < "$1" > "$TMP/promtool.out" 2>&1 || true
    grep -qiE 'error' "$TMP/promtool.out" && { cat "$TMP/promtool.out"; fail "promtool rejects /metrics"; }
  fi
  return 0
}
# mk_cgroup NAME: a child of the cgroup v2 root; prints its path
mk_cgroup() {
  [ -n "$CGV2" ] || skip "no cgroup v2 mount"
  local p="$CGV2/$1"
  mkdir -p "$p" || skip "cannot create a cgroup under $CGV2"
  CGROUPS+=("$p")
  echo "$p"
}

# Strict text-format 0.0.4 parser: every line must be a HELP/TYPE comment or a
# sample; names and labels well-formed, escapes legal, one contiguous group
# per family, TYPE before samples, no duplicate series, counters end _total
# and are >= 0, histograms have ascending le, cumulative buckets, +Inf ==
# _count and a _sum. Prints {"name{sorted labels}": value, ...} as JSON.
prom_parse() {
  python3 - "$1" <<'PYEOF'
import json, math, re, sys
NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*$')
LNAME = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*$')
text = open(sys.argv[1], encoding="utf-8").read()
if not text.endswith("\n"): sys.exit("page does not end with a newline")
types, helps, seen_fam, done_fam, series, out = {}, {}, [], set(), set(), {}
hist = {}
cur = None
def fam_of(name):
    for suf in ("_bucket", "_sum", "_count"):
        if name.endswith(suf) and types.get(name[:-len(suf)]) == "histogram":
            return name[:-len(suf)]
    return name
def err(n, msg): sys.exit(f"line {n}: {msg}")
for n, line in enumerate(text.split("\n")[:-1], 1):
    if line.startswith("#"):
        m = re.match(r'# (HELP|TYPE) (\S+) (.*)$', line)
        if not m: continue
        kind, name, rest = m.groups()
        if not NAME.match(name): err(n, f"bad metric name {name!r}")
        if kind == "TYPE":
            if name in types: err(n, f"second TYPE for {name}")
            if rest not in ("counter", "gauge", "histogram", "summary", "untyped"): err(n, f"bad type {rest!r}")
            if name in done_fam or name in seen_fam: err(n, f"TYPE after samples of {name}")
            types[name] = rest
        else:
            if name in helps: err(n, f"second HELP for {name}")
            helps[name] = rest
        continue
    if not line.strip(): err(n, "blank line")
    m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$', line)
    if not m: err(n, f"not a sample: {line!r}")
    name, _, lab, val = m.group(1), m.group(2), m.group(3), m.group(4)
    labels = {}
    if lab:
        i = 0
        while i < len(lab):
            lm = re.match(r'([a-zA-Z_][a-zA-Z0-9_]*)="', lab[i:])
            if not lm: err(n, f"bad label at {lab[i:]!r}")
            k = lm.group(1); i += lm.end(); v = ""
            while True:
                if i >= len(lab): err(n, "unterminated label value")
                c = lab[i]
                if c == "\\":
                    if i + 1 >= len(lab) or lab[i+1] not in '\\"n': err(n, "illegal escape")
                    v += {"\\": "\\", '"': '"', "n": "\n"}[lab[i+1]]; i += 2; continue
                if c == '"': i += 1; break
                if c == "\n": err(n, "raw newline in label")
                v += c; i += 1
            if k in labels: err(n, f"duplicate label {k}")
            labels[k] = v
            if i < len(lab):
                if lab[i] != ",": err(n, f"expected ',' at {lab[i:]!r}")
                i += 1
    try:
        fv = float(val)
    except ValueError:
        err(n, f"bad value {val!r}")
    fam = fam_of(name)
    if fam not in types: err(n, f"sample of {name} without a TYPE")
    if cur != fam:
        if fam in done_fam: err(n, f"family {fam} is not contiguous")
        if cur: done_fam.add(cur)
        cur = fam; seen_fam.append(fam)
    t = types[fam]
    if t == "counter":
        if not name.endswith("_total"): err(n, f"counter {name} does not end in _total")
        if fv < 0 or math.isnan(fv): err(n, f"counter {name} = {fv}")
    key = name + "{" + ",".join(f'{k}="{labels[k]}"' for k in sorted(labels)) + "}"
    if key in series: err(n, f"duplicate series {key}")
    series.add(key); out[key] = fv
    if t == "histogram":
        base = {k: v for k, v in labels.items() if k != "le"}
        hk = fam + repr(sorted(base.items()))
        h = hist.setdefault(hk, {"b": [], "sum": None, "count": None, "line": n})
        if name.endswith("_bucket"):
            if "le" not in labels: err(n, "bucket without le")
            le = float("inf") if labels["le"] == "+Inf" else float(labels["le"])
            if h["b"] and (le <= h["b"][-1][0] or fv < h["b"][-1][1]): err(n, f"buckets not ascending/cumulative in {hk}")
            h["b"].append((le, fv))
        elif name.endswith("_sum"): h["sum"] = fv
        elif name.endswith("_count"): h["count"] = fv
for hk, h in hist.items():
    if not h["b"] or h["b"][-1][0] != float("inf"): sys.exit(f"histogram {hk}: no +Inf bucket")
    if h["count"] is None or h["sum"] is None: sys.exit(f"histogram {hk}: no _sum/_count")
    if h["b"][-1][1] != h["count"]: sys.exit(f"histogram {hk}: +Inf {h['b'][-1][1]} != _count {h['count']}")
json.dump(out, sys.stdout)
PYEOF
}

# start_in_cgroup CG CMD...: run CMD (in the background, its pid in $CGPID,
# registered) inside cgroup CG, moved there by this shell while CMD is held
# stopped: the process being measured does no I/O of its own to join the
# cgroup (a `echo $$ > cgroup.procs` from inside would count its pid's bytes
# as its own).
start_in_cgroup() {
  local cg=$1; shift
  spawn "$1 in $cg" sh -c 'kill -STOP $$; exec "$@"' sh "$@"
  CGPID=$SPAWNED
  poll -t 2 -i 0.01 _stopped "$CGPID" || true
  echo "$CGPID" > "$cg/cgroup.procs" || fail "cannot move $CGPID into $cg"
  kill -CONT "$CGPID"
}
_stopped() { [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" = T ]; }
