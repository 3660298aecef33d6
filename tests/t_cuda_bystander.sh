#!/usr/bin/env bash
# t_cuda_bystander: CUDA API uprobes are put only in the traced process.
#
# Ground truth is the code itself: a uprobe is a breakpoint byte (int3, 0xcc
# on x86) written into the probed function in each process the kernel
# installs it for. Two copies of cuda_calls (the real libcudart.so.13) wait;
# gpuio traces one (-p). The first byte of cudaMalloc, read from each
# process's memory (/proc/PID/mem), must be 0xcc in the traced one and the
# library file's own byte in the bystander, in both attach flavours
# (uprobe.multi and classic perf uprobes), before and after both make their
# calls; the traced one's calls are in the capture, the bystander's are not.
# With -a (every process traced) the bystander's byte is 0xcc too: the
# check can tell the two apart.
source "$(dirname "$0")/lib.sh"
need_root
CALLS="$GPUIO_TESTS/cuda_calls"
[ -x "$CALLS" ] || fail "$CALLS missing (make test-progs)"
[ "$(uname -m)" = x86_64 ] || skip "the breakpoint byte checked here is x86's int3"
"$CALLS" > /dev/null 2>&1 || { [ $? -eq 77 ] && skip "cuda_calls built without libcudart (no CUDA toolkit)"; }

chmod 0755 "$TMP"

# byte_at PID SYMBOL: "file=XX mem=XX" for SYMBOL of the process's libcudart
cat > "$TMP/byte.py" <<'EOF'
import re, subprocess, sys
pid, sym = int(sys.argv[1]), sys.argv[2]
maps = [l.split() for l in open(f"/proc/{pid}/maps") if "libcudart.so" in l]
path = maps[0][5]
# the symbol's address in the file (st_value) -> file offset through its PT_LOAD
value = None
for l in subprocess.run(["readelf", "-W", "--dyn-syms", path], capture_output=True,
                        text=True, check=True).stdout.splitlines():
    f = l.split()
    if len(f) >= 8 and f[7].split("@")[0] == sym and f[6] != "UND":
        value = int(f[1], 16)
        break
assert value is not None, f"{sym} not in {path}"
off = None
for l in subprocess.run(["readelf", "-W", "-l", path], capture_output=True, text=True,
                        check=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        p_off, p_vaddr, p_filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if p_vaddr <= value < p_vaddr + p_filesz:
            off = value - p_vaddr + p_off
assert off is not None, "no PT_LOAD holds the symbol"
# the mapping of the process that holds that file offset
for m in maps:
    lo, hi = (int(x, 16) for x in m[0].split("-"))
    moff = int(m[2], 16)
    if moff <= off < moff + (hi - lo):
        addr = lo + off - moff
        break
else:
    raise SystemExit("offset not mapped")
with open(path, "rb") as f:
    f.seek(off)
    fb = f.read(1)[0]
with open(f"/proc/{pid}/mem", "rb") as f:
    f.seek(addr)
    mb = f.read(1)[0]
print(f"file={fb:02x} mem={mb:02x}")
EOF

byte_of() { python3 "$TMP/byte.py" "$1" cudaMalloc || fail "cannot read cudaMalloc in pid $1"; }
file_of() { local x=${1#file=}; echo "${x%% *}"; }
mem_of() { echo "${1#*mem=}"; }

# run_case LABEL ALL(0|1) [env...]: trace one waiting cuda_calls, a second one waits beside it
run_case() {
  local label=$1 all=$2 go="$TMP/$1.go"
  shift 2
  rm -f "$go"
  spawn -l "$TMP/$label.t.out" traced "$CALLS" --wait "$go" --linger 2000
  local tpid=$SPAWNED
  spawn -l "$TMP/$label.y.out" bystander "$CALLS" --wait "$go" --linger 2000
  local ypid=$SPAWNED
  wait_lines "$TMP/$label.t.out" 1
  wait_lines "$TMP/$label.y.out" 1
  local target=(-p "$tpid")
  [ "$all" = 1 ] && target=(-a)
  spawn -e "$TMP/$label.err" gpuio env "$@" "$GPUIO" trace -v "${target[@]}" -d 20s -o "$TMP/$label.json"
  local gpid=$SPAWNED
  poll -t 15 grep -q "cuda uprobes: .*libcudart" "$TMP/$label.err" || true
  # -a finds libraries at its first rescan; -p at start
  poll -t 3 grep -q tracing "$TMP/$label.err" || true
  sleep 1.5
  local t y
  t=$(byte_of "$tpid")
  y=$(byte_of "$ypid")
  echo "$label: traced pid $tpid: $t; bystander pid $ypid: $y"
  [ "$(mem_of "$t")" = cc ] || { cat "$TMP/$label.err"; fail "$label: no breakpoint in the traced process ($t)"; }
  [ "$(file_of "$t")" != cc ] || fail "$label: the library file itself starts cudaMalloc with 0xcc?"
  if [ "$all" = 1 ]; then
    [ "$(mem_of "$y")" = cc ] || fail "$label: -a traces every process, yet no breakpoint in pid $ypid ($y)"
  else
    [ "$(mem_of "$y")" = "$(file_of "$y")" ] || fail "$label: bystander pid $ypid has a breakpoint ($y)"
  fi
  touch "$go"
  sleep 0.2
  if [ "$all" != 1 ]; then
    y=$(byte_of "$ypid")
    [ "$(mem_of "$y")" = "$(file_of "$y")" ] ||
      fail "$label: bystander pid $ypid has a breakpoint after its calls ($y)"
  fi
  wait "$tpid" || fail "$label: traced cuda_calls failed"
  wait "$ypid" || fail "$label: bystander cuda_calls failed"
  kill -INT "$gpid"
  wait "$gpid" || { cat "$TMP/$label.err"; fail "$label: gpuio trace failed"; }
  # the traced process's calls are in the capture, the bystander's are not
  GPUIO_SRC="$GPUIO_SRC" python3 - "$TMP/$label.gpuio" "$tpid" "$ypid" "$all" <<'EOF' || fail "$label: CUDA records by pid"
import os, struct, sys
path, tpid, ypid, all_ = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
data = open(path, "rb").read()
hsize = struct.unpack_from("<I", data, 12)[0]
if struct.unpack_from("<I", data, 8)[0] == 2:   # version 2: frames; unpack the records verbatim
    sys.path.insert(0, os.environ["GPUIO_SRC"] + "/tests")
    import gpu_records
    data = data[:hsize] + b"".join(r for _, r in gpu_records.v2_records(data, hsize))
pos, n = hsize, {}
while pos + 24 <= len(data):
    typ, size, pid = struct.unpack_from("<HHI", data, pos)
    if size < 24 or pos + size > len(data):
        break
    if typ == 11:   # GPUIO_REC_CUDA_API
        n[pid] = n.get(pid, 0) + 1
    pos += size
assert n.get(tpid, 0) >= 8, f"traced pid {tpid}: {n.get(tpid, 0)} CUDA calls ({n})"
if all_:
    assert n.get(ypid, 0) >= 8, f"-a: pid {ypid}: {n.get(ypid, 0)} CUDA calls ({n})"
else:
    assert n.get(ypid, 0) == 0, f"bystander pid {ypid} in the capture ({n})"
print(f"CUDA API records by pid: {n}")
EOF
  echo "ok   $label"
}

run_case multi 0
run_case classic 0 GPUIO_CUDA_UPROBE_MODE=uprobe
run_case every 1
echo "PASS: t_cuda_bystander"
