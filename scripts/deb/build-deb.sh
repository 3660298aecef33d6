#!/usr/bin/env bash
# build-deb.sh [OUTDIR] — the gpuio Debian package, with Debian's own tools
# (debhelper, dpkg-buildpackage), from this source tree: the tracked files are
# copied to a scratch tree with scripts/deb/debian/ as its debian/ (the
# repository keeps its top level), the changelog takes its version from
# user/gpuio.h (GPUIO_VERSION, the one `gpuio --version` prints), the package
# is built unsigned, and lintian must report no error. The .deb lands in
# OUTDIR (default build/deb).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$SRC/build/deb}" && cd "${1:-$SRC/build/deb}" && pwd)
VERSION=$(sed -n 's/^#define GPUIO_VERSION "\(.*\)"/\1/p' "$SRC/user/gpuio.h")
[ -n "$VERSION" ] || { echo "build-deb: no GPUIO_VERSION in user/gpuio.h" >&2; exit 1; }
for t in dpkg-buildpackage dh lintian fakeroot; do
  command -v "$t" >/dev/null || { echo "build-deb: $t missing (scripts/install-deps.sh all)" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/gpuio-deb.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
TREE="$WORK/gpuio-$VERSION"
mkdir -p "$TREE"
echo "build-deb: gpuio $VERSION: copying the source tree" >&2
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$SRC" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$TREE")
else
  (cd "$SRC" && tar --exclude=./build --exclude=./.git -cf - .) | (cd "$TREE" && tar xf -)
fi
rm -rf "$TREE/debian" && cp -r "$SRC/scripts/deb/debian" "$TREE/debian"
cat > "$TREE/debian/changelog" <<CHL
gpuio ($VERSION) unstable; urgency=medium

  * gpuio $VERSION (scripts/deb/build-deb.sh).

 -- gpuio developers <gpuio-devel@lists.example.org>  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(date +%s)}")
CHL
echo "build-deb: dpkg-buildpackage (log: $OUT/build.log)" >&2
(cd "$TREE" && dpkg-buildpackage -us -uc -b) > "$OUT/build.log" 2>&1 ||
  { tail -n 40 "$OUT/build.log" >&2; echo "build-deb: dpkg-buildpackage failed" >&2; exit 1; }
DEB=$(ls "$WORK"/gpuio_"$VERSION"_*.deb)
lintian --tag-display-limit 0 "$DEB" > "$OUT/lintian.txt" 2>&1 || true
cat "$OUT/lintian.txt" >&2
if grep -q '^E: ' "$OUT/lintian.txt"; then
  echo "build-deb: lintian reports errors" >&2
  exit 1
fi
cp "$DEB" "$OUT/"
echo "$OUT/$(basename "$DEB")"
