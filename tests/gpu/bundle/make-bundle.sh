#!/usr/bin/env bash
# tests/gpu/bundle/make-bundle.sh BUILD BUNDLE_GPUIO — `make gpu-bundle`: one
# folder that runs on a GPU machine with nothing installed (no BPF toolchain,
# no package registry): BUILD/gpu-bundle/.
#
#   run.sh                      the one script (tests/gpu/bundle/run.sh)
#   build/gpuio                 libbpf, libelf and zlib linked in statically;
#                               glibc dynamic (a static binary cannot reliably
#                               dlopen libcuda and NVML, as doctor and the monitor
#                               do), libmicrohttpd and what it needs in build/lib
#                               (RUNPATH $ORIGIN/lib)
#   build/libgpuio-cupti.so     the collector (needs only glibc: it dlopens libcupti)
#   tests/...                   gpu_check.{sh,cu,py} (built there with nvcc),
#                               train_gpu.py, check_trace.py, summarize.py
# Checks what it made: every library each binary needs resolves, in an empty
# environment, inside the folder or to glibc's own; no RUNPATH leaves it; the
# whole is at most 48 MiB.
set -euo pipefail
BUILD=$1
BIN=$2
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=$(cd "$BUILD" && pwd)/gpu-bundle
LIMIT=$((48 << 20))
# glibc's own libraries: the machine's, whatever its version (>= the one built on)
GLIBC='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv)\b'

rm -rf "$OUT"
mkdir -p "$OUT/build/lib" "$OUT/tests/gpu/bundle"
install -m 0755 "$BIN" "$OUT/build/gpuio"
install -m 0755 "$BUILD/libgpuio-cupti.so" "$OUT/build/libgpuio-cupti.so"
strip --strip-debug "$OUT/build/gpuio" "$OUT/build/libgpuio-cupti.so"
# libraries beside it: everything ldd names that is not glibc's
ldd "$OUT/build/gpuio" | awk '$2 == "=>" {print $1, $3}' | while read -r name path; do
  [[ $name =~ $GLIBC ]] && continue
  install -m 0644 "$(readlink -f "$path")" "$OUT/build/lib/$name"
done
install -m 0755 "$SRC/tests/gpu/bundle/run.sh" "$OUT/run.sh"
install -m 0644 "$SRC/tests/gpu/bundle/summarize.py" "$OUT/tests/gpu/bundle/"
install -m 0644 "$SRC/tests/gpu/gpu_check.cu" "$SRC/tests/gpu/gpu_check.py" \
  "$SRC/tests/gpu/train_gpu.py" "$OUT/tests/gpu/"
install -m 0755 "$SRC/tests/gpu/gpu_check.sh" "$OUT/tests/gpu/"
install -m 0644 "$SRC/tests/check_trace.py" "$OUT/tests/"
(cd "$SRC" && git describe --always --dirty 2>/dev/null || echo unknown) > "$OUT/VERSION"

# ---- checks: self-contained, small ----
bad=0
# the binaries: ldd (in an empty environment) resolves the whole tree
for f in "$OUT/build/gpuio" "$OUT/build/libgpuio-cupti.so"; do
  while read -r line; do
    case $line in
      *"not found"*) echo "make-bundle: $f: $line" >&2; bad=1 ;;
      *"=> $OUT/build/lib/"*) ;;
      *"=>"*) name=${line%% *}
              [[ $name =~ $GLIBC ]] || { echo "make-bundle: $f: $line (outside the bundle)" >&2; bad=1; } ;;
    esac
  done < <(env -i /usr/bin/ldd "$f" 2>&1 | sed 's/^[[:space:]]*//')
done
# what each carried library needs is carried too (or is glibc's)
for f in "$OUT"/build/lib/*; do
  for need in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ $need =~ $GLIBC ]] || [ -e "$OUT/build/lib/$need" ] ||
      { echo "make-bundle: $f needs $need, not in the bundle" >&2; bad=1; }
  done
done
# no search path that leaves the folder
for f in "$OUT/build/gpuio" "$OUT/build/libgpuio-cupti.so" "$OUT"/build/lib/*; do
  rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p; s/.*(RPATH).*\[\(.*\)\]/\1/p')
  case $rp in ''|'$ORIGIN/lib'|'$ORIGIN') ;; *) echo "make-bundle: $f: search path $rp leaves the bundle" >&2; bad=1 ;; esac
done
size=$(du -sb "$OUT" | cut -f1)
if [ "$size" -gt "$LIMIT" ]; then
  echo "make-bundle: $OUT is $size bytes, over the 48 MiB limit" >&2
  bad=1
fi
[ "$bad" -eq 0 ] || exit 1
echo "gpu-bundle: $OUT ($((size >> 10)) KiB): ./run.sh [OUTDIR] on the GPU machine"
