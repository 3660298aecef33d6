#!/usr/bin/env bash
# t_deploy_metrics: the Prometheus rules and the Grafana dashboard shipped in
# scripts/deploy/ query only what a live `gpuio monitor` serves.
#  (a) promtool check rules, and promtool test rules gpuio-rules.test.yml
#      (synthetic series: recording-rule values, alerts firing or not);
#  (b) the dashboard is JSON with a ${datasource} variable, its PromQL parses
#      (promtool, Grafana's variables filled in); every metric and
#      label named by a panel target, a template variable, a rule or an alert
#      annotation is extracted (recording-rule outputs, job:…/instance:…,
#      are resolved to the families their rules read);
#  (c) a live monitor (--window 0, stand-in NVML with one GPU process,
#      --cuda-uprobes with a stand-in libcuda) while dd writes and reads
#      (buffered, cache-dropped, O_DIRECT) an ext4 loop image from a Slurm
#      step's and a Kubernetes container's cgroup: every family referenced is
#      on /metrics (I/O families with samples), and every label selected or
#      grouped by is on a series of a family that expression reads. The
#      recorder's families (--window > 0, the default) come from a second,
#      short run of the monitor with a window.
# Without promtool, (b) and (c) still run and the test ends as skipped.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/monitor_lib.sh"
D="$GPUIO_SRC/scripts/deploy"
RULES="$D/prometheus/gpuio-rules.yml"; DASH="$D/grafana/gpuio-dashboard.json"

# (a)
NO_PROMTOOL=""
if command -v promtool >/dev/null; then
  promtool check rules "$RULES" || fail "promtool check rules $RULES"
  (cd "$D/prometheus" && promtool test rules gpuio-rules.test.yml) || fail "promtool test rules gpuio-rules.test.yml"
else
  NO_PROMTOOL="promtool not installed (Debian package prometheus): rules not checked by promtool"
  echo "note: $NO_PROMTOOL"
fi

# (c) the live page
[ -n "$CGV2" ] || skip "no cgroup v2 mount"
FAKE_NVML="$GPUIO_TESTS/fake_nvml.d"; FAKE_CUDA="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
for f in "$FAKE_NVML/libnvidia-ml.so.1" "$FAKE_CUDA" "$GPUIO_TESTS/fake_libcuda_calls"; do
  [ -e "$f" ] || fail "$f missing (make test-progs)"
done
# block series need real disk I/O: an ext4 image on a loop device
truncate -s 64M "$TMP/fs.img"; mkfs.ext4 -q -F "$TMP/fs.img"; mkdir -p "$TMP/mnt"
LOOP=$(losetup -f --show "$TMP/fs.img") || skip "no loop device"
on_exit "umount $TMP/mnt 2>/dev/null; losetup -d $LOOP 2>/dev/null"
mount -o noatime "$LOOP" "$TMP/mnt"
# cgroups whose paths name a Slurm step and a Kubernetes container (the
# identity labels); only the directories made here are removed, deepest first
mkcg() {
  local p=$CGV2 part parts
  IFS=/ read -ra parts <<< "$1"
  for part in "${parts[@]}"; do
    p="$p/$part"
    [ -d "$p" ] || { mkdir "$p" || skip "cannot create cgroup $p"; CGROUPS=("$p" "${CGROUPS[@]}"); }
  done
}
SLURM=system.slice/slurmstepd.scope/job_$$/step_0
POD=0f3c2b1a_9e8d_4c7b_a6f5_$(printf %012x $$)
KUBE=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$POD.slice/cri-containerd-$(echo $$ | sha256sum | cut -c1-64).scope
mkcg "$SLURM"; mkcg "$KUBE"
# one process on the stand-in GPU (memory and SM utilisation series)
spawn gpu-process sleep 300; GPUPROC=$SPAWNED
printf 'gpus 1\nutil 0 40 10\nproc 0 %s 2147483648 30\n' "$GPUPROC" > "$TMP/nvml.txt"
LD_LIBRARY_PATH="$FAKE_NVML" FAKE_NVML_FILE="$TMP/nvml.txt" \
  mon_start --window 0 --listen 127.0.0.1:$MON_PORT --top-k 200 --cuda-uprobes

# each job: buffered write + fsync (VFS writes, dirtied pages, block writes),
# drop the file from the page cache (iflag=nocache count=0), a buffered read
# (page-cache misses), an O_DIRECT read (block reads)
IO='dd if=/dev/zero of="$1" bs=64k count=64 conv=fsync status=none &&
    dd if="$1" iflag=nocache count=0 status=none &&
    dd if="$1" of=/dev/null bs=64k status=none &&
    dd if="$1" of=/dev/null bs=64k iflag=direct status=none'
for j in slurm:"$SLURM" kube:"$KUBE"; do
  start_in_cgroup "$CGV2/${j#*:}" sh -c "$IO" sh "$TMP/mnt/${j%%:*}"
  wait "$CGPID" || fail "dd in ${j#*:}"
done
# CUDA calls (stand-in libcuda.so.1) from both jobs: the daemon's /proc scan
# (every 10 s) probes the library, then each program makes its calls
for cg in "$SLURM" "$KUBE"; do
  rm -f "$TMP/go"
  spawn -l "$TMP/calls.out" fake_libcuda_calls sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CGV2/$cg" \
    "$GPUIO_TESTS/fake_libcuda_calls" "$FAKE_CUDA" --wait "$TMP/go"
  CALLS=$SPAWNED
  poll -t 30 -i 0.1 grep -qF "$(realpath "$FAKE_CUDA"): " "$TMP/monitor.log" || true
  grep -qF "$(realpath "$FAKE_CUDA"): " "$TMP/monitor.log" || { cat "$TMP/monitor.log"; fail "the CUDA library was not probed"; }
  touch "$TMP/go"; wait "$CALLS" || fail "fake_libcuda_calls in $cg failed"
done
sleep 2.5                                  # a refresh tick
scrape "$TMP/m.txt"
mon_stop
# the flight recorder's families exist only with a window (the default 60s)
mon_start --window 5s --listen 127.0.0.1:$MON_PORT
scrape "$TMP/rec.txt"
mon_stop

# (b) and the comparison
python3 - "$TMP/m.txt" "$TMP/rec.txt" "$RULES" "$DASH" "$TMP/dash-rules.yml" <<'PYEOF' || fail "the rules or the dashboard query what /metrics does not have (FAIL lines above)"
import json, re, sys
import yaml

# labels Prometheus itself puts on scraped series: never on /metrics
TARGET_LABELS = {"instance", "job", "__name__"}
# families that must have samples, not only a # TYPE line: the I/O this test did
NEED_SAMPLES = re.compile(r"gpuio_(cgroup|process|device)_(vfs|pagecache|block|bytes|ops|service|queue|writeback|dirtied)")
# what the brief asks the rules and panels to show: guards the extractor itself
MUST_REFERENCE = {"gpuio_cgroup_vfs_bytes_total", "gpuio_cgroup_vfs_latency_seconds",
                  "gpuio_cgroup_pagecache_read_bytes_total", "gpuio_cgroup_pagecache_miss_bytes_total",
                  "gpuio_device_bytes_total", "gpuio_device_service_seconds",
                  "gpuio_gpu_process_sm_utilization_ratio", "gpuio_gpu_process_memory_bytes",
                  "gpuio_cgroup_cuda_calls_total", "gpuio_monitor_map_full_total",
                  "gpuio_monitor_map_evictions_total", "gpuio_recorder_lost_total"}
main_txt, rec_txt, rules_f, dash_f, dash_rules_f = sys.argv[1:6]
bad = []

def load(txt):
    """family -> TYPE, family -> [label dict of each sample] (_bucket/_sum/_count folded in)."""
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", open(txt).read(), re.M))
    series = {f: [] for f in types}
    for key in json.load(open(txt + ".json")):        # prom_parse's strict parse
        name, lab = key.split("{", 1)
        fam = next((name[:-len(s)] for s in ("_bucket", "_sum", "_count")
                    if name.endswith(s) and types.get(name[:-len(s)]) == "histogram"), name)
        series[fam].append(dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', lab)))
    return types, series

types, series = load(main_txt)
rtypes, rseries = load(rec_txt)                       # --window 5s: the recorder's families
for f in rtypes:
    if f.startswith("gpuio_recorder_"):
        types[f], series[f] = rtypes[f], rseries[f]

# every expression: (where, PromQL, labels its annotations print)
rules = yaml.safe_load(open(rules_f))
recorded, exprs = {}, []
for g in rules["groups"]:
    for r in g["rules"]:
        if "record" in r:
            recorded[r["record"]] = r["expr"]
        exprs.append(("rule " + r.get("record", r.get("alert", "?")), r["expr"],
                      re.findall(r"\$labels\.(\w+)", json.dumps(r.get("annotations", {})))))
dash = json.load(open(dash_f))
tl = dash["templating"]["list"]
if not any(v["type"] == "datasource" and v.get("query") == "prometheus" for v in tl):
    bad.append("dashboard: no datasource variable of type prometheus")
def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))
for p in walk(dash["panels"]):
    if p["type"] == "row":
        continue
    if not p.get("targets"):
        bad.append(f"panel '{p['title']}': no targets")
    for t in p.get("targets", []):
        if t.get("datasource", p.get("datasource", {})).get("uid") != "${datasource}":
            bad.append(f"panel '{p['title']}' {t['refId']}: datasource is not ${{datasource}}")
        exprs.append((f"panel '{p['title']}' {t['refId']}", t["expr"], []))
for v in tl:
    if v["type"] == "query":
        exprs.append((f"variable ${v['name']}", v["query"]["query"] if isinstance(v["query"], dict) else v["query"], []))
# the panels' PromQL, Grafana's variables filled in, as recording rules for
# `promtool check rules` to parse (label_values(SELECTOR, l): the selector)
dash_promql = [re.sub(r"\$\{?\w+\}?", ".*", re.sub(r"\$__rate_interval", "1m",
               re.sub(r"^label_values\((.*),\s*\w+\s*\)$", r"\1", e)))
               for where, e, _ in exprs if not where.startswith("rule ")]
with open(dash_rules_f, "w") as out:
    yaml.safe_dump({"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr_{i}", "expr": e} for i, e in enumerate(dash_promql)]}]}, out)

def fam_of(name):
    """a sample name in PromQL -> its family on the page (x_bucket -> x for histograms)"""
    for s in ("_bucket", "_sum", "_count"):
        if name.endswith(s) and types.get(name[:-len(s)]) == "histogram":
            return name[:-len(s)]
    return name

def sources(name, where):
    """the monitor's families a metric name reads: itself, or what a recording rule reads"""
    if ":" in name:                                    # job:…, instance:…: made by the rules
        if name not in recorded:
            bad.append(f"{where}: {name} is no recording rule of {rules_f}")
            return set()
        return set().union(*[sources(n, where) for n in names(recorded[name])])
    return {fam_of(name)}

def unquote(e):
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', e)       # label values are not names

def names(e):
    """metric names in PromQL: gpuio_… identifiers and recording-rule names (with a colon)"""
    return {n for n in re.findall(r"(?<![\w:])([a-zA-Z_:][\w:]*)", unquote(e))
            if n.startswith("gpuio_") or (":" in n and n.split(":")[1].startswith("gpuio_"))}

used, label_uses = {}, []     # family -> [where]; (where, label, families)
for where, e, ann in exprs:
    q = unquote(e)
    fams = set().union(*[sources(n, where) for n in names(e)]) if names(e) else set()
    for f in fams:
        used.setdefault(f, []).append(where)
    # by/on/…(labels): any family of the expression; {label=…} and label_values(m, label): that metric's
    for m in re.finditer(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", q):
        label_uses += [(where, l.strip(), fams) for l in m.group(1).split(",") if l.strip()]
    label_uses += [(where, l, fams) for l in ann]
    for m in re.finditer(r"([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}", q):
        if m.group(1) in names(e):
            label_uses += [(where, l, sources(m.group(1), where))
                           for l in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", m.group(2))]
    for m in re.finditer(r"label_values\(\s*([\w:]+)\s*(?:\{[^}]*\})?\s*,\s*(\w+)\s*\)", q):
        label_uses.append((where, m.group(2), sources(m.group(1), where)))

for f in sorted(MUST_REFERENCE - set(used)):
    bad.append(f"{f} is not queried by any rule or panel")
for f, where in sorted(used.items()):
    if f not in types:
        bad.append(f"{f} is not on /metrics (queried by {', '.join(sorted(set(where)))})")
    elif NEED_SAMPLES.match(f) and not series[f]:
        bad.append(f"{f} has no samples on /metrics after the I/O (queried by {where[0]})")
    else:
        print(f"ok   {f}: {len(series[f]) or '# TYPE only, no'} samples, queried {len(where)}x")
for where, l, fams in label_uses:
    fams = fams & set(types)                           # an absent family is reported above
    if l in TARGET_LABELS or not fams:
        continue
    if not any(l in s for f in fams for s in series[f]):
        bad.append(f"{where}: label {l} is on no series of {', '.join(sorted(fams))}")
for b in dict.fromkeys(bad):                           # each once, in order
    print("FAIL", b)
print(f"{len(exprs)} expressions, {len(used)} families, {len({l for _, l, _ in label_uses})} labels checked")
sys.exit(1 if bad else 0)
PYEOF
if [ -z "$NO_PROMTOOL" ]; then   # every panel's and variable's PromQL parses
  promtool check rules "$TMP/dash-rules.yml" > "$TMP/dash-rules.out" 2>&1 ||
    { cat "$TMP/dash-rules.out"; fail "promtool rejects the dashboard's PromQL"; }
  echo "promtool: the dashboard's $(grep -o '[0-9]* rules' "$TMP/dash-rules.out") (panel targets, variables) parse"
fi
[ -z "$NO_PROMTOOL" ] || skip "$NO_PROMTOOL (the live checks passed)"
echo "rules and dashboard match the live /metrics"
