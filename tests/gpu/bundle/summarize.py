#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""summarize.py LOGDIR [DOCTOR_JSON] — the GPU bundle's summary (run.sh).

Reads what run.sh left in LOGDIR and prints one text: the machine (GPU,
driver, kernel, CUDA, CUPTI, torch), every check with its numbers and a
verdict line per check, then `RESULT: PASS|FAIL (n of m checks failed)`.
Exit 0 when every check passed, 1 when one failed or is missing.

LOGDIR holds:
  env.txt                          "key: value" lines (run.sh step 1)
  gpucheck-{bpf,nobpf}.log         tests/gpu/gpu_check.sh's output, "rc N" last
  train-plain.json                 train_gpu.py untraced
  train-{bpf,nobpf}.json           the same, traced; .log: gpuio's stderr, "rc N"
  train-{bpf,nobpf}.report.json    gpuio report --json on the capture
  train-{bpf,nobpf}.info.json      gpuio info --json on the capture
  merge-prof.log                   gpuio merge --pytorch of a traced run that also ran
                                   torch.profiler (full mode): its alignment line
DOCTOR_JSON defaults to LOGDIR/../doctor.json.

Checks (each PASS or FAIL with its numbers):
  gpu_check MODE-launch / MODE-attach   gpu_check.py's verdict; its duration
        (worst kernel / memcpy error vs cudaEvents) and clock (alignment
        error, offset bound) lines are quoted
  train MODE      the traced loop ran (rc 0, the same step count as untraced);
        with BPF, the report found its loop: the report's waiting_for_data
        against the loop's own total wait (within 10% + 20 ms), the loop
        thread is the program's (without BPF there are no thread states, so
        no loop analysis: not judged); overhead = traced / untraced median
        step time of the epochs after the first, and of its GPU part
        (printed, not judged: one run each)
  train MODE gpu  the loop's collector ended cleanly (final, CUPTI dropped 0),
        the report saw GPU kernels from the loop's process, and the capture
        holds at least one NVTX range per step
"""
import json
import os
import re
import sys


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def load_json(path):
    t = read(path)
    if t is None:
        return None
    try:
        return json.loads(t)
    except ValueError:
        return None


def env(logdir):
    out = {}
    for line in (read(os.path.join(logdir, "env.txt")) or "").splitlines():
        k, _, v = line.partition(": ")
        if v:
            out.setdefault(k.strip(), []).append(v.strip())
    return out


def rc_of(text):
    m = re.findall(r"^rc (\d+)$", text or "", re.M)
    return int(m[-1]) if m else None


class Summary:
    def __init__(self):
        self.lines, self.checks = [], []

    def say(self, s=""):
        self.lines.append(s)

    def check(self, name, ok, detail):
        self.checks.append((name, ok))
        self.say("%-22s %s  %s" % (name, "PASS" if ok else "FAIL", detail))


def gpu_check(s, logdir, mode):
    text = read(os.path.join(logdir, "gpucheck-%s.log" % mode))
    if text is None:
        return False
    rc = rc_of(text)
    for kind in ("launch", "attach"):
        label = "%s-%s" % (mode, kind)
        pre = "gpu-check [%s]: " % label
        mine = [ln[len(pre):] for ln in text.splitlines() if ln.startswith(pre)]
        verdict = [ln for ln in mine if ln.startswith(("PASS", "FAIL"))]
        ok = bool(verdict) and verdict[-1].startswith("PASS")
        why = verdict[-1] if verdict else next(
            (ln for ln in mine if "FAIL" in ln), "no verdict (gpu_check.sh rc %s)" % rc)
        s.check("gpu_check " + label, ok, why)
        for key in ("collector", "ops", "durations", "flows", "clock"):
            ln = next((x for x in mine if x.startswith(key + " ")), None)
            if ln:
                s.say("    %s" % ln[:220])
        for ln in mine:
            if ln.lstrip().startswith("!"):
                s.say("    %s" % ln.strip()[:220])
    if rc not in (0, 1):
        s.say("    gpu_check.sh could not run (rc %s): %s" % (rc, text.strip().splitlines()[-2:]))
    return True


def loop_of(report):
    """The report's answer for the training loop: the first loop, whatever
    the report's JSON calls it (one "wait" object, or a list of loops)."""
    if not report:
        return None
    if isinstance(report.get("loops"), list) and report["loops"]:
        return report["loops"][0]
    return report.get("wait") or None


def train(s, logdir, mode, plain):
    prog = load_json(os.path.join(logdir, "train-%s.json" % mode))
    rep = load_json(os.path.join(logdir, "train-%s.report.json" % mode))
    rc = rc_of(read(os.path.join(logdir, "train-%s.log" % mode)))
    if prog is None:
        s.check("train " + mode, False, "the traced loop left no result (gpuio trace rc %s)" % rc)
        return
    steps = len(prog["steps"])
    over = ""
    if plain and plain.get("steady_mean_step_s"):
        over = ("; overhead: steady step %.2f ms traced vs %.2f ms untraced (%+.1f%%), its "
                "GPU part (launches to loss.item()) %.2f vs %.2f ms (%+.1f%%)" % (
                    1e3 * prog["steady_mean_step_s"], 1e3 * plain["steady_mean_step_s"],
                    100 * (prog["steady_mean_step_s"] / plain["steady_mean_step_s"] - 1),
                    1e3 * prog["median_compute_s"], 1e3 * plain["median_compute_s"],
                    100 * (prog["median_compute_s"] / plain["median_compute_s"] - 1)))
    if plain and len(plain["steps"]) != steps:
        s.check("train " + mode, False, "%d steps traced, %d untraced" % (steps, len(plain["steps"])))
        return
    w = loop_of(rep)
    want = prog["total_wait_s"]
    if mode == "nobpf":
        s.check("train " + mode, rc == 0, "%d steps (rc %s); no thread states without BPF, so no "
                "loop analysis; the loop waited %.3f s for data%s" % (steps, rc, want, over))
    elif not w:
        s.check("train " + mode, False, "the report found no training loop (rc %s); the loop waited "
                "%.3f s for data%s" % (rc, want, over))
    else:
        got = w.get("loop_us", {}).get("waiting_for_data", 0) / 1e6
        same = (w.get("pid"), w.get("tid")) == (prog["pid"], prog["main_tid"])
        ok = rc == 0 and same and abs(got - want) <= 0.10 * want + 0.020
        s.check("train " + mode, ok, "%d steps; report: waiting for data %.3f s, the loop's own "
                "%.3f s (%+.1f%%); loop thread %s/%s (%s)%s" % (
                    steps, got, want, 100 * (got - want) / want if want else 0, w.get("pid"),
                    w.get("tid"), "the program's" if same else "NOT the program's %d/%d" % (
                        prog["pid"], prog["main_tid"]), over))
        if w.get("headline"):
            s.say("    report: %s" % w["headline"])
    kinds = [r.get("kind") for r in (rep or {}).get("recommendations", [])]
    s.say("    recommendations: %s" % (", ".join(k for k in kinds if k) or "none"))
    gpu = (rep or {}).get("gpu") or {}
    devs = gpu.get("devices") if isinstance(gpu, dict) else None
    kern = 0
    for d in devs or []:
        if d.get("pid") == prog["pid"]:
            kern += d.get("kernels", 0)
    info = load_json(os.path.join(logdir, "train-%s.info.json" % mode)) or {}
    coll = [c for c in (info.get("gpu") or {}).get("collectors", []) if c.get("pid") == prog["pid"]]
    nvtx = (info.get("record_counts") or {}).get("nvtx", 0)
    clean = bool(coll) and all(c.get("state") == "final" and not c.get("cupti_dropped") for c in coll)
    s.check("train %s gpu" % mode, kern > 0 and clean and nvtx >= steps,
            "%d kernels of pid %d in the report%s; collector %s; %d NVTX ranges for %d steps" % (
                kern, prog["pid"], "" if devs is not None else " (no gpu section)",
                ", ".join("%s via %s, clock %s, CUPTI %s dropped %s" % (
                    c.get("state"), c.get("how"), c.get("clock"), c.get("cupti_version"),
                    c.get("cupti_dropped")) for c in coll) or "absent", nvtx, steps))
    for d in devs or []:
        if d.get("pid") == prog["pid"]:
            by = (d.get("launcher") or {}).get("idle_by_state_us") or d.get("idle_by_cause_us") or {}
            s.say("    GPU %s: busy %.1f%% of %.0f ms, %d idle gaps (%.0f ms idle): %s" % (
                d.get("device"), 100 * d.get("busy_fraction", 0), d.get("span_us", 0) / 1e3,
                d.get("gaps", 0), d.get("idle_us", 0) / 1e3,
                ", ".join("%s %.0f ms" % (k, v / 1e3) for k, v in sorted(by.items()) if v) or "-"))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    logdir = argv[1]
    doctor = load_json(argv[2] if len(argv) > 2 else os.path.join(logdir, "..", "doctor.json"))
    e = env(logdir)
    s = Summary()
    s.say("gpuio GPU bundle summary")
    for k in ("date", "gpu", "kernel", "nvcc", "torch", "torch_cupti", "cuda_cupti", "uid"):
        for v in e.get(k, ["?"] if k in ("gpu", "kernel") else []):
            s.say("%-12s %s" % (k + ":", v))
    mode = (doctor or {}).get("trace_mode", "?")
    cupti = ((doctor or {}).get("gpu") or {}).get("cupti", {}).get("value", "?")
    s.say("%-12s %s (BPF %s)" % ("trace mode:", mode, "loads" if mode == "full" else "refused"))
    s.say("%-12s %s" % ("cupti:", cupti))
    if doctor and mode != "full":
        why = (doctor.get("trace") or {}).get("mode", {}).get("detail", "")
        s.say("%-12s %s" % ("no BPF:", why))
    s.say()
    modes = ["bpf", "nobpf"] if mode == "full" else ["nobpf"]
    for m in modes:
        if not gpu_check(s, logdir, m):
            s.check("gpu_check " + m, False, "no log: the step did not run")
    s.say()
    plain = load_json(os.path.join(logdir, "train-plain.json"))
    if plain:
        s.say("train untraced: %d steps, steady step %.2f ms, waited %.3f s for data, on %s "
              "(torch %s, CUDA %s)" % (len(plain["steps"]), 1e3 * plain.get("steady_mean_step_s", 0),
                                      plain["total_wait_s"], plain.get("device"),
                                      plain.get("torch"), plain.get("cuda")))
    else:
        s.check("train untraced", False, "no result (train-plain.log)")
    for m in modes:
        train(s, logdir, m, plain)
    if mode == "full":
        merge_prof(s, logdir)
    failed = [n for n, ok in s.checks if not ok]
    s.say()
    s.say("RESULT: %s (%d of %d checks failed%s)" % (
        "FAIL" if failed else "PASS", len(failed), len(s.checks),
        ": " + ", ".join(failed) if failed else ""))
    print("\n".join(s.lines))
    return 1 if failed else 0


def merge_prof(s, logdir):
    """gpuio merge --pytorch of the profiled run: aligned, written"""
    log = read(os.path.join(logdir, "merge-prof.log"))
    if log is None:
        s.say("merge pytorch: not run (logs of a bundle before it)")
        return
    aligned = [l for l in log.splitlines() if "--pytorch" in l and "offset" in l]
    wrote = [l for l in log.splitlines() if "PyTorch profiler trace" in l and "wrote" in l]
    s.check("merge pytorch", rc_of(log) == 0 and bool(aligned) and bool(wrote),
            "rc %s; %s" % (rc_of(log), (aligned or ["no alignment line"])[0].split("gpuio: ")[-1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
