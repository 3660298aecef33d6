#!/usr/bin/env python3
"""tp_check.py [--part] TRACE - Perfetto's own importer (trace_processor_shell, the
one the Perfetto UI runs) takes TRACE (.json, .json.gz, .pftrace[.gz]):

  - no stats row of severity error or data_loss;
  - as many slices, flows and counter values as the file holds, counted here
    independently (tests/check_trace.py reads both formats): slices = X
    events + instants, flows = bound flow_in ends (protobuf: flow id pairs), counter values = one per
    arg of each C event; and at least as many slices as the "gpuio trace
    info" says VFS calls and block requests were written;
  - every process and thread with slices has a name;
  - as many CPU samples (cpu_profile_stack_sample) as the file holds
    (tests/pftrace.py reads them: a .pftrace of --stacks --sample-hz; a
    JSON export has none), each on a callsite, and as many as the trace
    info says were written (python_stacks.samples).

The importer is $TRACE_PROCESSOR, else ../shared/tools/trace_processor_shell
beside the source tree; where it is absent the check says so and passes
(a user's clone has no ../shared). Exit 1 with the reasons on failure.
"""
import csv, io, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace as ct
import pftrace as pf            # a .pftrace's flows (pairs of flow-id ends) and CPU samples

Q = {
    "stats": "select name, severity, value from stats where severity in ('error','data_loss') and value > 0",
    "slices": "select count(*) as n from slice",
    "flows": "select count(*) as n from flow",
    "counters": "select count(*) as n from counter",
    "unnamed_threads": "select count(*) as n from thread t where t.name is null and t.utid in "
                       "(select utid from thread_track tt join slice s on s.track_id = tt.id)",
    "unnamed_procs": "select count(*) as n from process p where p.name is null and p.upid in "
                     "(select upid from thread t join thread_track tt using (utid) "
                     "join slice s on s.track_id = tt.id where upid is not null)",
    "samples": "select count(*) as n from cpu_profile_stack_sample s "
               "join stack_profile_callsite c on c.id = s.callsite_id",
}


def tp_path():
    """Perfetto's importer: $TRACE_PROCESSOR, else ../shared/tools beside the tree; None if absent."""
    here = os.path.dirname(os.path.abspath(__file__))
    tp = os.environ.get("TRACE_PROCESSOR") or os.path.join(here, "..", "..", "shared", "tools",
                                                            "trace_processor_shell")
    return tp if os.access(tp, os.X_OK) else None


def query(tp, trace, sql):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(sql + ";\n")
    try:
        r = subprocess.run([tp, "-q", f.name, trace], capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(f.name)
    if r.returncode:
        raise SystemExit("tp_check: trace_processor failed on %s: %s" % (trace, r.stderr[-2000:]))
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def expected(path):
    ev = ct.load(path)
    slices = sum(1 for e in ev if e.get("ph") in ("X", "i", "I"))
    proto = pf.load(path) if path.endswith((".pftrace", ".pftrace.gz")) else None
    if proto:
        flows = len(list(proto.flows()))
    else:
        outs = {e["bind_id"] for e in ev if e.get("ph") == "X" and e.get("flow_out") is True}
        flows = sum(1 for e in ev if e.get("ph") == "X" and e.get("flow_in") is True
                    and e.get("bind_id") in outs)
    counters = sum(len(e.get("args", {})) for e in ev if e.get("ph") == "C")
    infos = [e["args"] for e in ev if e.get("name") == "gpuio trace info"]
    stated = sum(int(i.get("vfs_events", 0)) + int(i.get("block_requests", 0)) for i in infos)
    samples = stated_samples = 0
    if proto:
        samples = len(proto.samples)
        stated_samples = sum(int(i.get("python_stacks", {}).get("samples", 0)) for i in infos)
    return slices, flows, counters, stated, samples, stated_samples


def main():
    args = sys.argv[1:]
    part = "--part" in args         # one file of a rotated stream: its info
    args = [a for a in args if a != "--part"]   # counts the whole stream so far
    if len(args) != 1:
        raise SystemExit(__doc__)
    trace = args[0]
    tp = tp_path()
    if not tp:
        print("tp_check: trace_processor_shell not found: import of %s not checked" % trace)
        return 0
    bad = []
    for r in query(tp, trace, Q["stats"]):
        bad.append("import %s: %s = %s" % (r["severity"], r["name"], r["value"]))
    n = {k: int(query(tp, trace, Q[k])[0]["n"]) for k in ("slices", "flows", "counters",
                                                         "unnamed_threads", "unnamed_procs",
                                                         "samples")}
    slices, flows, counters, stated, samples, stated_samples = expected(trace)
    if n["slices"] != slices:
        bad.append("slices: Perfetto has %d, the file holds %d" % (n["slices"], slices))
    if n["slices"] < stated and not part:
        bad.append("slices: Perfetto has %d, gpuio says it wrote %d calls and requests" % (n["slices"], stated))
    if n["flows"] != flows:
        bad.append("flows: Perfetto has %d, the file holds %d" % (n["flows"], flows))
    if n["counters"] != counters:
        bad.append("counter values: Perfetto has %d, the file holds %d" % (n["counters"], counters))
    if n["samples"] != samples:
        bad.append("CPU samples: Perfetto has %d, the file holds %d" % (n["samples"], samples))
    if samples != stated_samples and not part:
        bad.append("CPU samples: the file holds %d, gpuio says it wrote %d"
                   % (samples, stated_samples))
    if n["unnamed_threads"] or n["unnamed_procs"]:
        bad.append("unnamed: %d threads, %d processes with slices" % (n["unnamed_threads"], n["unnamed_procs"]))
    for b in bad:
        print("tp_check: %s: %s" % (os.path.basename(trace), b))
    if not bad:
        print("tp_check: %s: imported, no errors; %d slices, %d flows, %d counter values%s"
              % (os.path.basename(trace), n["slices"], n["flows"], n["counters"],
                 ", %d CPU samples" % n["samples"] if n["samples"] else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
