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

pycheck report_truth.roles_demo "$TMP/demo.json" "$TMP/demo.out" "$TMP/demo" ||
  fail "demo: roles or checkpoints wrong"
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

pycheck report_truth.roles_torch "$TMP/py.json" "$TMP/py.out" ||
  fail "py: roles, checkpoint or small files wrong"
grep -q "80 of 80 data files read are small" "$TMP/py.txt" || fail "py: headline does not count 80 small data files"
echo "PASS: files by role: the demo's checkpoints and shards, a torch program's data, code and checkpoint"
