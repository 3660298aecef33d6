#!/usr/bin/env bash
# t_report_html: `gpuio report --html` writes one self-contained page (no
# external URL, no src=/href= to anything) that headless Chromium loads with
# no script error and whose screenshot shows the charts: the GPU busy/idle
# bar's blue (busy) and red (idle on file reads) in the top part of the page,
# and the device latency histograms. The page's own JS puts the number of
# charts in <html data-charts> and counts errors in <html data-js-errors>.
source "$(dirname "$0")/lib.sh"
export GPUIO_SRC
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || skip "chromium not installed (apt-get install chromium)"

python3 "$GPUIO_SRC/tests/report_gen.py" gpu-idle "$TMP/run.gpuio"
"$GPUIO" report --html "$TMP/report.html" "$TMP/run.gpuio" || fail "report --html failed"
[ -s "$TMP/report.html" ] || fail "no page written"
if grep -Eio '(https?:|ftp:)//|src=|href=|@import|url\(' "$TMP/report.html" >"$TMP/ext.txt"; then
  cat "$TMP/ext.txt"; fail "the page refers to something outside itself"
fi
grep -q "<svg class=chart" "$TMP/report.html" || fail "no chart in the page"

# Chromium as root needs --no-sandbox; a private profile keeps it quiet
CH=("$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$TMP/profile"
    --enable-logging=stderr --v=0 --window-size=1100,1400 --hide-scrollbars)
timeout 120 "${CH[@]}" --virtual-time-budget=3000 --dump-dom "file://$TMP/report.html" \
  >"$TMP/dom.html" 2>"$TMP/chrome-dom.err" || { tail -20 "$TMP/chrome-dom.err"; fail "chromium --dump-dom failed"; }
grep -q 'data-charts="[1-9]' "$TMP/dom.html" || { head -c 600 "$TMP/dom.html"; fail "page script did not run"; }
grep -q 'data-js-errors="' "$TMP/dom.html" && fail "script errors recorded in the DOM"
if grep -E 'CONSOLE|Uncaught|SyntaxError' "$TMP/chrome-dom.err"; then fail "console errors"; fi
echo "ok   loads with no console errors: $(grep -o 'data-charts="[0-9]*"' "$TMP/dom.html")"

timeout 120 "${CH[@]}" --screenshot="$TMP/shot.png" "file://$TMP/report.html" \
  >/dev/null 2>"$TMP/chrome-shot.err" || { tail -20 "$TMP/chrome-shot.err"; fail "chromium --screenshot failed"; }
pycheck report_truth.screenshot "$TMP/shot.png" || fail "the screenshot does not show the charts"
# a trainer with thread states and NVTX steps (gen_capture gpuwait): the
# launching thread's table, its column in the gaps, the NVTX step chart
GEN="$GPUIO_TESTS/gen_capture"
if [ -x "$GEN" ]; then
  "$GEN" gpuwait "$TMP/w.gpuio" >/dev/null || fail "gen_capture gpuwait failed"
  "$GPUIO" report --html "$TMP/w.html" "$TMP/w.gpuio" || fail "report --html (gpuwait) failed"
  timeout 120 "${CH[@]}" --virtual-time-budget=3000 --dump-dom "file://$TMP/w.html" \
    >"$TMP/wdom.html" 2>"$TMP/chrome-w.err" || { tail -20 "$TMP/chrome-w.err"; fail "chromium (gpuwait) failed"; }
  grep -q 'data-js-errors="' "$TMP/wdom.html" && fail "gpuwait page: script errors"
  if grep -E 'CONSOLE|Uncaught|SyntaxError' "$TMP/chrome-w.err"; then fail "gpuwait page: console errors"; fi
  grep -q '<td class="l">waiting_for_data</td><td>15.50 ms</td>' "$TMP/wdom.html" ||
    fail "gpuwait page: no launching-thread table with its 15.50 ms waiting for data"
  grep -q '<figcaption>STEPS (4: the loop.s NVTX range "train_step"' "$TMP/wdom.html" ||
    fail "gpuwait page: no NVTX step chart"
  echo "ok   gpuwait page: launching thread's states and NVTX steps, no errors"
else
  echo "note: $GEN not built: the gpuwait page is not checked"
fi
echo "PASS: the HTML report is self-contained, loads without errors and shows its charts"
