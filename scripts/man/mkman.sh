#!/usr/bin/env bash
# mkman.sh GPUIO OUTDIR: the man pages gpuio(1) and gpuio-CMD(1), from each
# command's own --help (one source: the text users see) plus NAME, a longer
# DESCRIPTION where useful, and SEE ALSO from scripts/man/NAME.h2m, with help2man.
set -euo pipefail
gpuio=$(readlink -f "$1"); out=$2; here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ver=$("$gpuio" --version | awk '{print $2}')
# one page per scripts/man/gpuio*.h2m (the Makefile's MAN_PAGES is the same list)
for h2m in "$here"/gpuio*.h2m; do
  name=$(basename "$h2m" .h2m)
  page=${name#gpuio-}
  if [ "$name" = gpuio ]; then wrap="$gpuio"
  else
    # help2man runs "PROG --help" and "PROG --version": a wrapper per command
    wrap="$tmp/$name"
    printf '#!/bin/sh\n[ "$1" = --version ] && { echo "%s %s"; exit 0; }\nexec "%s" %s "$@"\n' \
      "$name" "$ver" "$gpuio" "$page" > "$wrap"
    chmod +x "$wrap"
  fi
  help2man --no-info --section=1 --source="gpuio $ver" --manual="gpuio manual" \
    --include="$here/$name.h2m" --output="$out/$name.1" "$wrap"
done
