#!/usr/bin/env python3
"""kineto_gen.py INFO_JSON PID TID OUT: a PyTorch 2.x-format profiler trace
(Kineto's Chrome JSON: schemaVersion, deviceProperties, baseTimeNanoseconds,
traceEvents) of a capture's process, with events at known times.

INFO_JSON is `gpuio info --json` of the capture: its REALTIME/MONOTONIC
anchor (realtime_ns, monotonic_ns) and its first and last record times. The
events lie inside the capture, on its MONOTONIC clock at mono = first + k x
step; written as Kineto does, REALTIME ns relative to a base (the start of
the 3-month interval), ts and dur in µs with 3 decimals. PID/TID: the
capture's thread the CPU events belong to. Kinds: cpu_op (with Input Dims
and Input type), user_annotation, python_function, cuda_runtime on the
thread; kernel, gpu_memcpy, gpu_memset, gpu_user_annotation on GPU 0
stream 7 and 13; plus metadata and a flow pair (not slices: skipped).
OUT.expect.json: every slice's name, category, expected mono start and dur
(ns), and its track ("thread" or "gpu").
"""
import json
import sys


def main():
    info_path, pid, tid, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(info_path) as f:
        info = json.load(f)
    boot = info["realtime_ns"] - info["monotonic_ns"]       # realtime = mono + boot
    first, last = info["first_ts_ns"], info["last_ts_ns"]
    span = last - first
    step = max(span // 64, 2000)
    base = (info["realtime_ns"] // 7889238000000000) * 7889238000000000
    ev, expect = [], []

    def add(cat, name, k, dur_ns, pid_, tid_, args, track):
        mono = first + k * step + 123                       # sub-µs: exact ns survive
        rel = mono + boot - base
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid_, "tid": tid_,
             "ts": "%d.%03d" % (rel // 1000, rel % 1000), "dur": "%d.%03d" % (dur_ns // 1000, dur_ns % 1000),
             "args": args}
        ev.append(e)
        expect.append({"name": name, "cat": cat, "ts": mono, "dur": dur_ns, "track": track})

    add("user_annotation", "ProfilerStep#1", 1, 20 * step, pid, tid, {"External id": 1}, "thread")
    add("cpu_op", "aten::mm", 2, step, pid, tid,
        {"External id": 2, "Input Dims": [[16, 64], [64, 16]], "Input type": ["float", "float"],
         "Sequence number": 7, "Fwd thread id": 0}, "thread")
    add("python_function", "torch/nn/modules/module.py(1501): _call_impl", 4, 3 * step, pid, tid,
        {"Python id": 11, "Python parent id": 10}, "thread")
    add("cuda_runtime", "cudaLaunchKernel", 8, step // 2, pid, tid,
        {"External id": 3, "cbid": 211, "correlation": 1001}, "thread")
    add("kernel", "volta_sgemm_128x64_nn", 9, step, 0, 7,
        {"External id": 3, "device": 0, "stream": 7, "correlation": 1001, "grid": [4, 1, 1],
         "block": [256, 1, 1], "est. achieved occupancy %": 12.5}, "gpu")
    add("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 11, step, 0, 13,
        {"device": 0, "stream": 13, "correlation": 1002, "bytes": 4096, "memory bandwidth (GB/s)": 1.25}, "gpu")
    add("gpu_memset", "Memset (Device)", 13, step // 4, 0, 7,
        {"device": 0, "stream": 7, "correlation": 1003, "bytes": 512}, "gpu")
    add("gpu_user_annotation", "fwd", 9, 5 * step, 0, 7, {"External id": 1}, "gpu")
    meta = [
        {"name": "process_name", "ph": "M", "ts": "0.000", "pid": pid, "tid": 0, "args": {"name": "python3"}},
        {"name": "thread_name", "ph": "M", "ts": "0.000", "pid": pid, "tid": tid, "args": {"name": "thread %d (python3)" % tid}},
        {"name": "process_name", "ph": "M", "ts": "0.000", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        {"ph": "s", "id": 1001, "pid": pid, "tid": tid, "ts": ev[3]["ts"], "cat": "ac2g", "name": "ac2g"},
        {"ph": "f", "id": 1001, "pid": 0, "tid": 7, "ts": ev[4]["ts"], "cat": "ac2g", "name": "ac2g", "bp": "e"},
    ]
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA Stand-in", "totalGlobalMem": 85899345920}],
           "displayTimeUnit": "ms", "baseTimeNanoseconds": base,
           "traceEvents": meta + ev, "traceName": out}
    # Kineto writes numbers for ts/dur, not strings
    text = json.dumps(doc, indent=1)
    for e in ev:
        text = text.replace('"ts": "%s"' % e["ts"], '"ts": %s' % e["ts"]).replace('"dur": "%s"' % e["dur"], '"dur": %s' % e["dur"])
    with open(out, "w") as f:
        f.write(text)
    with open(out + ".expect.json", "w") as f:
        json.dump(expect, f)


if __name__ == "__main__":
    main()
