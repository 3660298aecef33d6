#!/usr/bin/env bash
# t_report_roles: `gpuio report` sorts files by role (data, code, checkpoint,
# other) on two real traced workloads, each its own ground truth:
#  (a) the bundled demo (tests/progs/demo_loader): it writes and fsyncs its
#      dataset shards, workers read them, then one checkpoint per epoch. The
#      report lists exactly those checkpoints (the shards, written then read,
#      are data), the data role holds exactly the shards' bytes, and there is
#      no "small files" recommendation; the HTML file table has the role.
#  (b) /usr/bin/python3 with Debian's python3-torch: `import torch` (a
#      thousand .py/.pyc/.so files), then 80 files of 16 KiB written and read
#      back, then torch.save + os.fsync of ckpt.pt. The data role is exactly
#      those 80 files and their bytes, every interpreter file is code, the one
#      checkpoint is ckpt.pt with its size, and "small files" counts the 80
#      data files (the shard recommendation says 80 of 80, not 1000+).
source "$(dirname "$0")/lib.sh"
need_root
DEMO="$GPUIO_TESTS/demo_loader"
[ -x "$DEMO" ] || fail "$DEMO not built (make test-progs)"

# ---- (a) the demo: 2 workers, 3 epochs ----
"$GPUIO" trace -q --no-export --capture "$TMP/demo.gpuio" -- \
  "$DEMO" "$TMP/demo" 2 3 >"$TMP/demo.out" 2>"$TMP/demo.err" \
  || { cat "$TMP/demo.err"; fail "gpuio trace -- demo_loader failed"; }
cat "$TMP/demo.out"
"$GPUIO" report --json --files all "$TMP/demo.gpuio" >"$TMP/demo.json" || fail "demo: report --json failed"
"$GPUIO" report "$TMP/demo.gpuio" >"$TMP/demo.txt" || fail "demo: report failed"
"$GPUIO" report --html "$TMP/demo.html" "$TMP/demo.gpuio" >/dev/null || fail "demo: report --html failed"
sed -n '/^HEADLINES/,/^$/p;/^CHECKPOINTS/,/^FILES (/p' "$TMP/demo.txt"

python3 - "$TMP/demo.json" "$TMP/demo.out" "$TMP/demo" <<'EOF' || fail "demo: roles or checkpoints wrong"
import json, re, sys
rep, out, d = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
# the program says what it did: "8 shards of 4 MiB read by 2 workers for 3 epochs;
# one 8 MiB checkpoint per epoch"
m = re.search(r"(\d+) shards of (\d+) MiB read by (\d+) workers for (\d+) epochs; "
              r"one (\d+) MiB checkpoint per epoch", out)
assert m, f"demo_loader printed no summary: {out!r}"
shards, shard_mib, _, epochs, ckpt_mib = map(int, m.groups())
MiB = 1 << 20
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond
ck = rep["checkpoints"]
want = [f"{d}/checkpoint-{e}.pt" for e in range(epochs)]
check(sorted(c["path"] for c in ck) == want,
      f"checkpoints {[c['path'] for c in ck]} == the {epochs} the program wrote")
for c in ck:
    check(c["bytes"] == ckpt_mib * MiB and c["ended_by"] == "fsync",
          f"{c['path']}: {c['bytes']} bytes then {c['ended_by']}")
files = {f["path"]: f for f in rep["files"]}
for s in range(shards):
    f = files.get(f"{d}/shard-{s:02d}.bin")
    check(f is not None and f["role"] == "data" and f["write_bytes"] == shard_mib * MiB
          and f["read_bytes"] == epochs * shard_mib * MiB,
          f"shard-{s:02d}: written, fsynced, then read: role {f and f['role']}")
for p in want:
    check(files.get(p, {}).get("role") == "checkpoint", f"{p}: role checkpoint")
r = rep["roles"]
check(r["data"]["files"] == shards and r["data"]["read_bytes"] == shards * epochs * shard_mib * MiB
      and r["data"]["write_bytes"] == shards * shard_mib * MiB, f"data role {r['data']}")
check(r["checkpoint"]["files"] == epochs and r["checkpoint"]["write_bytes"] == epochs * ckpt_mib * MiB
      and r["checkpoint"]["read_bytes"] == 0, f"checkpoint role {r['checkpoint']}")
check(sum(x["files"] for x in r.values()) == rep["files_total"], "every file has one role")
check(rep["small_files"]["count"] == 0, f"small files {rep['small_files']}")
check(not [x for x in rep["recommendations"] if x["kind"] == "shard"], "no shard recommendation")
sys.exit(1 if bad else 0)
EOF
grep -q "^FILES BY ROLE" "$TMP/demo.txt" || fail "demo: text report has no files-by-role table"
grep -q "^  \* 3 checkpoint(s)" "$TMP/demo.txt" || fail "demo: headline does not say 3 checkpoints"
grep -q "<th class=l>role</th>" "$TMP/demo.html" || fail "demo: the HTML file table has no role column"
grep -q "<td class=l>checkpoint</td>" "$TMP/demo.html" && grep -q "<td class=l>data</td>" "$TMP/demo.html" \
  || fail "demo: the HTML file table names no data / checkpoint role"
echo "ok   (a) demo: exactly the program's checkpoints, shards are data"

# ---- (b) Python with torch ----
PY=/usr/bin/python3
[ -x "$PY" ] || skip "(b): $PY not installed"
"$PY" -c 'import torch' 2>/dev/null || skip "(b): python3-torch not importable by $PY (apt-get install python3-torch)"
cat >"$TMP/roles_torch.py" <<'EOF'
import json, os, sys
import torch
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
paths = [f"{d}/sample-{i:03d}.bin" for i in range(80)]
for p in paths:                      # the dataset: written, then read below
    with open(p, "wb") as f:
        f.write(os.urandom(16384))
got = 0
for p in paths:
    with open(p, "rb") as f:
        got += len(f.read())
ck = f"{d}/ckpt.pt"
with open(ck, "wb") as f:
    torch.save({"w": torch.zeros(512 * 1024), "step": 100}, f)
    f.flush()
    os.fsync(f.fileno())
print(json.dumps({"files": {p: os.path.getsize(p) for p in paths}, "read": got,
                  "ckpt": ck, "ckpt_bytes": os.path.getsize(ck)}))
EOF
"$GPUIO" trace -q --no-export --capture "$TMP/py.gpuio" -- \
  "$PY" "$TMP/roles_torch.py" "$TMP/py" >"$TMP/py.out" 2>"$TMP/py.err" \
  || { cat "$TMP/py.err"; fail "gpuio trace -- python3 failed"; }
"$GPUIO" report --json --files all "$TMP/py.gpuio" >"$TMP/py.json" || fail "py: report --json failed"
"$GPUIO" report "$TMP/py.gpuio" >"$TMP/py.txt" || fail "py: report failed"
sed -n '/^HEADLINES/,/^SUMMARY/p;/^FILES BY ROLE/,/^$/p' "$TMP/py.txt"

python3 - "$TMP/py.json" "$TMP/py.out" <<'EOF' || fail "py: roles, checkpoint or small files wrong"
import json, re, sys
rep, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond
want = truth["files"]
nbytes = sum(want.values())
check(truth["read"] == nbytes == 80 * 16384, f"the program read back its {len(want)} files")
files = {f["path"]: f for f in rep["files"]}
data = {p: f for p, f in files.items() if f["role"] == "data"}
check(set(data) == set(want), f"data role: {len(data)} files, the program's {len(want)} "
      f"(extra {sorted(set(data) - set(want))[:5]}, missing {sorted(set(want) - set(data))[:5]})")
check(all(files[p]["read_bytes"] == n for p, n in want.items() if p in files),
      "each data file: read bytes == the size written")
r = rep["roles"]
check(r["data"]["files"] == len(want) and r["data"]["read_bytes"] == nbytes
      and r["data"]["write_bytes"] == nbytes, f"data role {r['data']} holds exactly {nbytes} bytes")
interp = re.compile(r"(\.py|\.pyc|\.so(\.[0-9.]+)?)$")
code_like = [p for p in files if interp.search(p)]
check(all(files[p]["role"] == "code" for p in code_like),
      f"every .py/.pyc/.so file is code ({len(code_like)}): "
      f"{[p for p in code_like if files[p]['role'] != 'code'][:5]}")
code = [p for p, f in files.items() if f["role"] == "code"]
check(any(p.endswith(".py") for p in code) and any(re.search(r"\.so(\.|$)", p) for p in code),
      "code holds the interpreter's .py and .so files")
check(any("-packages/torch/" in p and ".so" in p for p in code), "code holds torch's own .so files")
check(r["code"]["files"] == len(code) >= 100, f"code role: {r['code']['files']} files")
ck = rep["checkpoints"]
check(len(ck) == 1 and ck[0]["path"] == truth["ckpt"] and ck[0]["bytes"] == truth["ckpt_bytes"]
      and ck[0]["ended_by"] == "fsync", f"checkpoints {[(c['path'], c['bytes'], c['ended_by']) for c in ck]}"
      f" == {truth['ckpt']} {truth['ckpt_bytes']} bytes then fsync")
check(r["checkpoint"]["files"] == 1 and files[truth["ckpt"]]["role"] == "checkpoint", "ckpt.pt is the checkpoint role")
check(sum(x["files"] for x in r.values()) == rep["files_total"], "every file has one role")
s = rep["small_files"]
check(s["count"] == 80 and s["read_files"] == 80 and s["bytes"] == nbytes,
      f"small files {s}: the 80 data files only (of {rep['files_total']} files)")
sh = [x for x in rep["recommendations"] if x["kind"] == "shard"]
check(len(sh) == 1 and "80 of 80 data files" in sh[0]["evidence"], f"shard recommendation {sh}")
sys.exit(1 if bad else 0)
EOF
grep -q "80 of 80 data files read are small" "$TMP/py.txt" || fail "py: headline does not count 80 small data files"
echo "PASS: files by role: the demo's checkpoints and shards, a torch program's data, code and checkpoint"
