#!/usr/bin/env bash
# t_doctor: `gpuio doctor` tells the truth about this machine. Each fact is
# checked against its own source, not against doctor's other output:
#   kernel release = uname -r; BTF present = the file exists;
#   vfs/block/proc/pagecache/io_uring/sched/fault modes = the modes a real `gpuio trace`
#   records in its capture (gpuio info --json), and the refusals it records;
#   CUDA driver: none loadable here -> "no CUDA driver"; with the stand-in
#   libcuda.so.1 on LD_LIBRARY_PATH -> the version its cuDriverGetVersion
#   returns (FAKE_CUDA_DRIVER_VERSION, two values);
#   CUPTI: the real /usr/local/cuda libcupti.so.13 listed with its CUDA 13.x
#   version; GPUIO_CUPTI forces the choice; NVML absent here, and through a
#   stand-in libnvidia-ml.so.1 its GPU count and driver version;
#   --json parses and says the same as the text; not root: says root is
#   needed, exits 1, no crash; a bad option exits 2.
source "$(dirname "$0")/lib.sh"
need_root
FAKE_LIB="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
[ -e "$FAKE_LIB" ] || fail "$FAKE_LIB missing (make test-progs)"
chmod 0755 "$TMP"

rc=0
"$GPUIO" doctor > "$TMP/doc.txt" 2> "$TMP/doc.err" || rc=$?
cat "$TMP/doc.txt"
[ $rc = 0 ] || { cat "$TMP/doc.err"; fail "doctor exited $rc as root on a machine that traces"; }
"$GPUIO" doctor --json > "$TMP/doc.json" 2>> "$TMP/doc.err" || fail "doctor --json failed"

# ground truth for the attach modes: what a real trace gets
"$GPUIO" trace -q -o "$TMP/t.json" -- /bin/true 2> "$TMP/t.err" || { cat "$TMP/t.err"; fail "gpuio trace failed"; }
"$GPUIO" info --json "$TMP/t.gpuio" > "$TMP/info.json" || fail "gpuio info failed"

pycheck doctor.machine "$TMP/doc.json" "$TMP/doc.txt" "$TMP/info.json" || fail "doctor disagrees with the machine"

# CUDA driver: none here, unless the stand-in is on the library path
if ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  pycheck doctor.no_driver "$TMP/doc.json" || fail "a CUDA driver reported where libcuda.so.1 does not load"
  echo "ok   no CUDA driver reported (libcuda.so.1 does not load here)"
fi
for v in 12040 13000; do
  LD_LIBRARY_PATH="$(dirname "$FAKE_LIB")" FAKE_CUDA_DRIVER_VERSION=$v "$GPUIO" doctor --json > "$TMP/drv$v.json" 2>/dev/null
  pycheck doctor.stand_in_driver "$TMP/drv$v.json" "$v" || fail "driver version with the stand-in libcuda.so.1 ($v)"
done

# CUPTI: the toolkit's libcupti.so.13, when this machine has one
real=
for c in /usr/local/cuda/lib64/libcupti.so.13 /usr/local/cuda/targets/*/lib/libcupti.so.13; do
  [ -z "$real" ] && [ -e "$c" ] && real=$c
done
if [ -n "$real" ]; then
  pycheck doctor.cupti_listed "$TMP/doc.json" "$(realpath "$real")" || fail "CUPTI not reported"
  GPUIO_CUPTI="$real" "$GPUIO" doctor --json > "$TMP/ovr.json" 2>/dev/null
  pycheck doctor.cupti_override "$TMP/ovr.json" "$real" || fail "GPUIO_CUPTI not honoured"
  echo "ok   GPUIO_CUPTI=$real is the one used"
else
  echo "note: no /usr/local/cuda libcupti.so.13 here: the CUPTI listing check is skipped"
fi

# NVML: the stand-in libnvidia-ml.so.1 answers with 2 GPUs and its driver version
printf 'gpus 2\n' > "$TMP/nvml.txt"
LD_LIBRARY_PATH="$GPUIO_TESTS/fake_nvml.d" FAKE_NVML_FILE="$TMP/nvml.txt" "$GPUIO" doctor --json > "$TMP/nvml.json" 2>/dev/null
pycheck doctor.nvml_standin "$TMP/nvml.json" || fail "NVML through the stand-in libnvidia-ml.so.1"
echo "ok   NVML: the stand-in's 2 GPUs and driver version"

# not root: what it can say, root needed, exit 1, no crash
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups "$GPUIO" doctor > "$TMP/user.txt" 2>&1 || rc=$?
[ $rc = 1 ] || { cat "$TMP/user.txt"; fail "doctor as nobody exited $rc, want 1"; }
grep -q "run them as root" "$TMP/user.txt" || fail "doctor as nobody does not say root is needed"
grep -q "^  NO   trace .*not tried" "$TMP/user.txt" || fail "doctor as nobody claims attach results"
rc=0
"$GPUIO" doctor --bogus > /dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "a bad option must exit 2 (got $rc)"
echo "PASS: t_doctor"
