#!/usr/bin/env bash
# mkman.sh GPUIO OUTDIR: the man pages gpuio(1) and gpuio-CMD(1), from each
# command's own --help (one source: the text users see) plus NAME,
# DESCRIPTION, EXAMPLES and SEE ALSO from scripts/man/NAME.h2m, with help2man.
#
# help2man recognises only "Usage:" and "Options:" (capitalised) as the
# SYNOPSIS and OPTIONS of a --help text; gpuio's --help writes "usage:" and
# "options:". So each page's --help goes through help_sections below on its
# way to help2man: the usage lines become "Usage:" / "or:" (SYNOPSIS), an
# "Options:" line is put before the first list of options (OPTIONS, with the
# --help's own headings as subsections), gpuio's "commands:" becomes a
# COMMANDS section, and the --help's "examples:" are left to the .h2m's
# EXAMPLES (which explain each one). The words of --help are not changed.
set -euo pipefail
gpuio=$(readlink -f "$1"); out=$2; here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ver=$("$gpuio" --version | awk '{print $2}')

cat > "$tmp/help_sections.awk" <<'AWK'
# state: 0 before the usage line, 1 in the usage block, 2 the rest
st == 0 && /^[Uu]sage: / {
	sub(/^[Uu]sage: /, "Usage: "); sub(/  +.*$/, ""); print; st = 1; next
}
st == 1 {
	if ($0 ~ /^ +gpuio /) { l = $0; sub(/^ +/, "", l); sub(/  +.*$/, "", l); print "   or: " l; next }
	if ($0 ~ /^ +[^ ]/) next        # what a usage line does: the DESCRIPTION says it
	st = 2
}
/^[Ee]xamples?:$/ { skip = 1; next }
skip { if ($0 ~ /^ /) next; skip = 0 }
/^Options:$/ { opts = 1 }
!opts && /^(options|targets \(one of\)):$/ {
	print "Options:"; opts = 1; if ($0 == "options:") next
}
!opts && /^  *-/ { print "Options:"; opts = 1 }
/^commands:$/ { print "*Commands*"; next }
{ print }
AWK

# one page per scripts/man/gpuio*.h2m (the Makefile's MAN_PAGES is the same list)
for h2m in "$here"/gpuio*.h2m; do
  name=$(basename "$h2m" .h2m)
  page=${name#gpuio-}
  [ "$name" = gpuio ] && page=""
  # help2man runs "PROG --help" and "PROG --version": a wrapper per page
  wrap="$tmp/$name"
  printf '#!/bin/sh\n[ "$1" = --version ] && { echo "%s %s"; exit 0; }\n"%s" %s "$@" | awk -f "%s"\n' \
    "$name" "$ver" "$gpuio" "$page" "$tmp/help_sections.awk" > "$wrap"
  chmod +x "$wrap"
  help2man --no-info --section=1 --source="gpuio $ver" --manual="gpuio manual" \
    --include="$h2m" --output="$out/$name.1" "$wrap"
done
