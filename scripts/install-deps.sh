#!/usr/bin/env bash
# Install every build, test and benchmark dependency of gpuio on Debian 12.
# Idempotent: does nothing when everything is already present.
set -euo pipefail

build_pkgs=(make gcc clang llvm libbpf-dev libelf-dev zlib1g-dev bpftool pkg-config libmicrohttpd-dev help2man)
test_pkgs=(fio python3 e2fsprogs util-linux procps liburing-dev libclang-rt-14-dev protobuf-compiler time chromium curl
           man-db libprotobuf32 git
           prometheus python3-yaml debhelper dpkg-dev fakeroot lintian    # promtool; deploy manifests; make deb
           prometheus-alertmanager openssl iproute2                       # tests/t_alert_dump.sh
           python3-torch)   # DataLoader workloads (tests/torch_lib.sh), for /usr/bin/python3
bench_pkgs=(bpftrace linux-perf strace time)
vm_pkgs=(qemu-system-x86 busybox-static cpio xz-utils zstd)

want=("${build_pkgs[@]}")
case "${1:-all}" in
  build) ;;
  test)  want+=("${test_pkgs[@]}") ;;
  bench) want+=("${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
  all)   want+=("${test_pkgs[@]}" "${bench_pkgs[@]}" "${vm_pkgs[@]}") ;;
  *) echo "usage: $0 [build|test|bench|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "gpuio: missing packages: ${missing[*]}; run this script as root (sudo $0)" >&2
  exit 1
fi
echo "gpuio: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# a machine booted a minute ago: apt-daily may hold the dpkg lock; wait for it
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
