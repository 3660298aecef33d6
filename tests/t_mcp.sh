#!/usr/bin/env bash
# t_mcp: `gpuio mcp`, the Model Context Protocol server (user/mcp/,
# docs/mcp.md), driven by a scripted client (tests/checks/mcp_truth.py) over
# its stdin and stdout, one JSON-RPC message a line:
#   - the command line: no --allow, a missing --allow directory or
#     --trace-processor is refused (status 2, said); --help lists the tools;
#   - initialize answers the client's protocol version when it is one of
#     2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, else 2025-11-25; ping;
#     tools/list: the 7 tools, each with an object inputSchema;
#   - the tools answer as `gpuio report --json` run apart on the same
#     captures: two real PyTorch DataLoader loops traced here
#     (torch_lib.sh's CPU-bound scenario at two per-sample costs): the same
#     headlines, loop verdict and recommendations, the same loops with their
#     time by state and cause, call sites and steps, the same files (with
#     --files N), no GPU gaps with a note; report_gen.py's gpu-idle capture:
#     the same GPU gaps; --hosts over the two: the same straggler and cause;
#     list_captures: the files put there, sizes and mtimes as stat says;
#   - errors: malformed JSON -32700, a batch or a non-object -32600, an
#     unknown method -32601, bad params -32602, bad tool arguments isError;
#     notifications and responses get no reply; a 2 MiB line gets -32600 and
#     the next line is served; hostile ids, method names, file names (control
#     bytes, quotes, invalid UTF-8, a newline) come back as valid JSON;
#   - paths: outside the allowed directory, ALLOW/../, a relative ../, a
#     symlink pointing out, a sibling directory named ALLOW2, a missing path
#     outside: all refused as outside; a symlink inside is followed;
#   - sql_query (where ../shared/tools/trace_processor_shell exists, else
#     said and not checked): rows as the shell gives them run by hand on
#     `gpuio convert`'s export, exact values whatever they hold (quotes,
#     newlines, control bytes, blobs, NULL), max_rows, one statement only,
#     the shell's error; without a trace processor it says it is
#     unavailable;
#   - the server survives all of it and exits 0 at the end of stdin, its
#     temporary directory removed.
# No timing is asserted (a reply wait of 600 s guards against a hang only).
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/torch_lib.sh"
need_torch
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"

# ---- the command line
rc=0; "$GPUIO" mcp </dev/null >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--allow" "$TMP/err" && [ ! -s "$TMP/out" ] ||
  { cat "$TMP/err"; fail "gpuio mcp without --allow: status $rc, not 2 with a reason"; }
rc=0; "$GPUIO" mcp --allow "$TMP/missing" </dev/null 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "missing" "$TMP/err" || { cat "$TMP/err"; fail "--allow a missing directory: status $rc"; }
rc=0; "$GPUIO" mcp --allow "$TMP" --trace-processor "$TMP/no-tp" </dev/null 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] || { cat "$TMP/err"; fail "--trace-processor a missing file: status $rc"; }
"$GPUIO" mcp --help >"$TMP/help" || fail "gpuio mcp --help failed"
for t in list_captures report_headline report_loops report_files report_gpu_gaps hosts_straggler sql_query; do
  grep -q "$t" "$TMP/help" || fail "gpuio mcp --help does not name $t"
done

# ---- the captures: ALLOW holds them, OUTSIDE and ALLOW2 are out of bounds
mkdir -p "$TMP/allow/job" "$TMP/allow/dumps" "$TMP/outside" "$TMP/allow2"
ALLOW=$(realpath "$TMP/allow")
torch_cpu_bound "$TMP/a.json" "$GPUIO" trace -q --no-export --capture "$ALLOW/job/a.gpuio" --
TORCH_CPU_US=8000 torch_cpu_bound "$TMP/b.json" "$GPUIO" trace -q --no-export --capture "$ALLOW/job/b.gpuio" --
python3 "$GPUIO_SRC/tests/report_gen.py" gpu-idle "$ALLOW/gpu.gpuio" || fail "report_gen.py gpu-idle failed"
HPATH="$ALLOW/"$'h\x01"q\\\xff\nx.gpuio'
"$GEN" hostile "$HPATH" >/dev/null || fail "gen_capture hostile failed"
head -c 8192 /dev/urandom >"$ALLOW/junk.gpuio"
DUMP="$ALLOW/dumps/gpuio-dump-20260101-000000-1-manual.pftrace"
"$GPUIO" convert -q "$ALLOW/job/a.gpuio" -o "$DUMP" || fail "gpuio convert failed"
cp "$ALLOW/gpu.gpuio" "$ALLOW/dumps/.gpuio-dump-1.gpuio"    # a dump in the making
cp "$ALLOW/job/a.gpuio" "$TMP/outside/o.gpuio"
cp "$ALLOW/job/a.gpuio" "$TMP/allow2/x.gpuio"
ln -s "$TMP/outside/o.gpuio" "$ALLOW/escape.gpuio"
ln -s job/a.gpuio "$ALLOW/link.gpuio"

# ---- the conversation (sql_query: with Perfetto's shell where there is one)
TP=$(tp_path) || { TP=""; tp_note "sql_query's rows (it must say it is unavailable)"; }
# the server finds ../shared/tools/ itself when it is this tree's build/gpuio: let it
PASS_TP=1
[ "$(realpath "$GPUIO")" = "$(realpath -m "$GPUIO_SRC/build/gpuio")" ] && [ -n "$TP" ] &&
  [ "$(realpath "$TP")" = "$(realpath -m "$GPUIO_SRC/../shared/tools/trace_processor_shell")" ] && PASS_TP=0
[ -n "$TP" ] || PASS_TP=0
pycheck mcp_truth.conversation "$GPUIO" "$ALLOW" "$TMP/outside/o.gpuio" "$TMP/allow2/x.gpuio" \
  "$HPATH" "$TP" "$PASS_TP" "$GPUIO_SRC/user/export/sql/gpuio.sql" "$TMP" \
  "$ALLOW/job/a.gpuio" "$ALLOW/job/b.gpuio" "$ALLOW/gpu.gpuio" "$HPATH" "$ALLOW/junk.gpuio" \
  "$DUMP" "$ALLOW/link.gpuio" || { tail -n 20 "$TMP/mcp.err"; fail "gpuio mcp's answers"; }

# ---- no trace processor anywhere: a copy outside the source tree, a bare PATH
if PATH=/usr/bin:/bin command -v trace_processor_shell >/dev/null; then
  echo "note: trace_processor_shell is on /usr/bin:/bin: its absence is not checked"
else
  mkdir -p "$TMP/bin" "$TMP/srv2"
  cp "$GPUIO" "$TMP/bin/gpuio"
  pycheck mcp_truth.unavailable "$TMP/bin/gpuio" "$ALLOW" "$TMP/srv2" ||
    { tail -n 20 "$TMP/srv2/mcp2.err"; fail "gpuio mcp without a trace processor"; }
fi
echo "PASS: gpuio mcp answers as gpuio report does, refuses what it must, survives the rest"
