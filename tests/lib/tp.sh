# tests/lib/tp.sh — sourced by tests/lib.sh: Perfetto's importer,
# trace_processor_shell, where there is one.
#
# It is $TRACE_PROCESSOR when that is set, else
# ../shared/tools/trace_processor_shell beside the source tree (this
# workspace's copy). A clone elsewhere has no ../shared: every part of a test
# that needs the importer then says so (tp_note) and is not run; the rest of
# the test runs. tests/tp_check.py and tests/compare_exports.py find it the
# same way (tp_check.tp_path).

# tp_path: print the importer's path; 1 when there is none
tp_path() {
  local tp=${TRACE_PROCESSOR:-$GPUIO_SRC/../shared/tools/trace_processor_shell}
  [ -f "$tp" ] && [ -x "$tp" ] || return 1
  echo "$tp"
}
# tp_note WHAT: say that WHAT is not checked for want of the importer
tp_note() {
  echo "note: trace_processor_shell not found (${TRACE_PROCESSOR:+TRACE_PROCESSOR=$TRACE_PROCESSOR, }set TRACE_PROCESSOR=PATH): $* not checked"
}
