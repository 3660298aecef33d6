"""The GPU side where a GPU machine's tools run without BPF or without a GPU:
gpuio trace as an unprivileged user (t_no_bpf: the spec a program wrote and
put through the real collector), and the GPU bundle's checks on the saved
real run (t_gpu_bundle)."""
import json
import re
import sys


def nobpf_export(trace, specf):
    """t_no_bpf launch: the export holds exactly the spec's kernel, copy, memset,
    two API calls and NVTX range (SPECF, written by the traced program), with
    their durations, relative starts and API -> activity flows; the process
    named from /proc; every layer off; complete"""
    ev = json.load(open(trace))
    spec = [l.split() for l in open(specf) if l.strip() and l.split()[0] != "flush"]
    X = [e for e in ev if e.get("ph") == "X"]
    want = {  # name -> (cat, dur us) from the spec
        "spin_kernel(unsigned long long)": ("gpu", 2000.0), "memcpy HtoD": ("gpu", 100.0),
        "memset": ("gpu", 10.0), "cudaLaunchKernel": ("cuda_api", 50.0),
        "cudaMemcpyAsync": ("cuda_api", 60.0), "step": ("nvtx", 2300.0)}
    got = {}
    for e in X:
        if e.get("cat") in ("gpu", "cuda_api", "nvtx"):
            got.setdefault(e["name"], []).append(e)
    bad = []
    for n, (cat, dur) in want.items():
        g = got.get(n, [])
        if len(g) != 1 or g[0]["cat"] != cat or abs(g[0]["dur"] - dur) > 0.001:
            bad.append("%s: want one %s slice of %.3f us, got %s" % (
                n, cat, dur, [(x["cat"], x["dur"]) for x in g]))
    extra = sorted(set(got) - set(want))
    if extra:
        bad.append("unexpected GPU slices: %s" % extra)
    # starts relative to each other as in the spec (kernel 100 us after the launch call)
    if not bad:
        k, a = got["spin_kernel(unsigned long long)"][0], got["cudaLaunchKernel"][0]
        if abs((k["ts"] - a["ts"]) - 100.0) > 0.001:
            bad.append("kernel starts %.3f us after its launch, the spec says 100" % (k["ts"] - a["ts"]))
        # flows: launch -> kernel, memcpy call -> copy
        for api, op in (("cudaLaunchKernel", "spin_kernel(unsigned long long)"), ("cudaMemcpyAsync", "memcpy HtoD")):
            s, d = got[api][0], got[op][0]
            if not (s.get("flow_out") and d.get("flow_in") and s.get("bind_id") == d.get("bind_id")):
                bad.append("no flow %s -> %s" % (api, op))
        pid = a["pid"]
        names = [e["args"]["name"] for e in ev if e.get("name") == "process_name" and e.get("pid") == pid]
        if len(names) != 1 or not names[0].startswith("python3: python3 "):
            bad.append("process %d named %s, want python3 and its command line (from /proc, "
                       "no exec record)" % (pid, names))
    info = [e for e in ev if e.get("name") == "gpuio trace info"][0]["args"]
    for k in ("vfs_mode", "block_mode", "sched_mode"):
        if info[k] != "off":
            bad.append("%s %s, want off" % (k, info[k]))
    if not info["modes_detail"].startswith("no BPF: not root"):
        bad.append("modes_detail: %s" % info["modes_detail"])
    if not (info["drops_known"] and info["dropped"] == 0 and info["capture_complete"]):
        bad.append("drops/complete: %s %s %s" % (info["drops_known"], info["dropped"], info["capture_complete"]))
    print("\n".join(bad) or "export: the spec's 6 GPU records, durations, flows and offsets; modes off; complete")
    sys.exit(1 if bad else 0)


def bundle_collector(doctor, lib):
    """t_gpu_bundle: the bundle's copy of gpuio finds the collector beside itself
    (LIB), not in the build tree"""
    d = json.load(open(doctor))
    v = d["gpu"]["collector"]["value"]
    assert v == lib, "collector %s, want %s" % (v, lib)


def bundle_summary(sumf, rc):
    """t_gpu_bundle: summarize.py's text (SUMF) and exit status (RC) on the saved
    H200 logs: the 8 verdicts and numbers as that run logged them"""
    t, rc = open(sumf).read(), int(rc)
    def verdict(name):
        m = re.search(r"^%s +(PASS|FAIL) " % re.escape(name), t, re.M)
        return m and m.group(1)
    want = {  # as that run was: the old checker failed every copy duration; the
              # report took the pin-memory thread for the loop (issue "Every job shape")
        "gpu_check bpf-launch": "FAIL", "gpu_check bpf-attach": "FAIL",
        "gpu_check nobpf-launch": "FAIL", "gpu_check nobpf-attach": "FAIL",
        "train bpf": "FAIL", "train bpf gpu": "PASS", "train nobpf": "PASS", "train nobpf gpu": "PASS"}
    bad = ["%s: %s, want %s" % (k, verdict(k), v) for k, v in want.items() if verdict(k) != v]
    for s in ("gpu:         NVIDIA H200, 580.159.04", "torch:       2.11.0+cu130",
              "trace mode:  full (BPF loads)", "waiting for data 1.213 s, the loop's own 1.458 s (-16.8%)",
              "loop thread 763/792 (NOT the program's 763/763)", "4304 kernels of pid 763",
              "64 NVTX ranges for 64 steps", "! #11 memcpy HtoD 1048576 B: dur 21.7 us vs cudaEvent 29.7 us (-27.13%)",
              "RESULT: FAIL (5 of 8 checks failed"):
        if s not in t:
            bad.append("missing: %s" % s)
    if rc != 1:
        bad.append("exit %d, want 1" % rc)
    print("\n".join(bad) or "summary of the saved H200 run: 8 verdicts and their numbers as logged")
    sys.exit(1 if bad else 0)


def bundle_fix_report(path):
    """t_gpu_bundle: make the saved train-bpf report one that passes (the loop
    thread the program's, its wait as measured)"""
    r = json.load(open(path))
    r["wait"]["tid"] = r["wait"]["pid"]
    r["wait"]["loop_us"]["waiting_for_data"] = 1.45e6
    json.dump(r, open(path, "w"))


# t_no_bpf: gpuio info --json / doctor --json of the captures, on stdin or a file
def nobpf_info_launch():
    """launched without BPF: no_bpf and launch flags, every mode off, the
    collector final, by launch"""
    d = json.load(sys.stdin)
    assert d["flags"]["no_bpf"] is True and d["flags"]["launch"] is True, d["flags"]
    assert set(d["modes"].values()) == {"off"}, d["modes"]
    c = d["gpu"]["collectors"]
    assert len(c) == 1 and c[0]["state"] == "final" and c[0]["how"] == "launch", c
    print("info: no_bpf, modes off, collector final by launch")


def nobpf_info_driver():
    """the stand-in driver loaded the collector (the stand-in CUPTI), final, by launch"""
    d = json.load(sys.stdin)
    c = d["gpu"]["collectors"]
    assert len(c) == 1 and c[0]["state"] == "final" and c[0]["how"] == "launch", c
    assert "fake_cupti.d/libcupti.so.13" in c[0]["reason"], c[0]["reason"]
    print("driver: collector %s by %s (%s)" % (c[0]["state"], c[0]["how"], c[0]["reason"]))


def nobpf_driver_named(trace):
    """the launched driver process (fake_libcuda_calls) is named in the export"""
    with open(trace) as f:
        ev = json.load(f)
    n = [e["args"]["name"] for e in ev if e.get("name") == "process_name" and
         e["args"]["name"].startswith("fake_libcuda_c")]
    assert n, "the driver process is not named"


def nobpf_info_attach(tpid):
    """the collector injected into TPID reported, by attach"""
    d = json.load(sys.stdin)
    c = [x for x in d["gpu"]["collectors"] if x["pid"] == int(tpid)]
    assert c and c[0]["how"] == "attach" and c[0]["state"] in ("on", "final"), c
    print("attach: collector %s by %s" % (c[0]["state"], c[0]["how"]))


def nobpf_doctor(path):
    """doctor as nobody: trace_mode gpu_only, a warning saying not root"""
    with open(path) as f:
        d = json.load(f)
    m = d["trace"]["mode"]
    assert d["trace_mode"] == "gpu_only" and m["status"] == "warn", d["trace_mode"]
    assert "not root" in m["detail"], m
    print("doctor as nobody: %s: %s" % (d["trace_mode"], m["value"]))


# t_install: the installed binary's GPU launch path (gpuio info --json FILE)
def installed_collector(path):
    """a collector reported, by launch"""
    with open(path) as f:
        c = json.load(f)["gpu"]["collectors"]
    assert c and c[0]["how"] == "launch", c


def no_collector(path):
    """no collector reported (the installed one moved away)"""
    with open(path) as f:
        g = json.load(f).get("gpu")
    assert not g or not g["collectors"], g
