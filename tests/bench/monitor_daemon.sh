# tests/bench/monitor_daemon.sh — sourced by the monitor benches
# (monitor_run.sh, monitor_sched.sh): start and stop one `gpuio monitor`.
# The includer sets T (scratch dir), PORT, MON="" and die().
#
#   start_monitor BINARY ARGS...   the daemon, ready when /metrics answers
#                                  (its log in $T/mon.log, its pid in $MON)
#   stop_monitor                   SIGTERM, wait
start_monitor() {
	local bin=$1
	shift
	"$bin" monitor --run-dir "$T/run" --listen 127.0.0.1:$PORT --dump-dir "$T/dumps" "$@" \
		> "$T/mon.log" 2>&1 &
	MON=$!
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$PORT/metrics" > /dev/null 2>&1 && return 0
		sleep 0.1
	done
	cat "$T/mon.log" >&2
	die "the monitor did not start"
}
stop_monitor() { kill "$MON"; wait "$MON" 2>/dev/null; MON=""; }
