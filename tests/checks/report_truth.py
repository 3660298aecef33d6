"""`gpuio report` against known answers: captures written with their answers
(report_gen.py's GPU_IDLE_EXPECT, gen_capture gpuwait's manifest) and
programs that measure themselves (train_loop, demo_loader, a torch program,
the DataLoader workloads of torch_lib.sh); the HTML report's screenshot
(t_report_gpu, t_report_gpu_wait, t_report_train, t_report_roles,
t_report_wait, t_report_html, t_report_errors).

What computes truth is apart and unit-tested: shares, steps_vs_windows,
png_rows, count_color."""
import json
import os
import re
import struct
import sys
import zlib
from decimal import Decimal

from checks.common import Checks, load_json
from report_gen import GPU_IDLE_EXPECT as X, ANCHOR_MONO


def shares(act):
    """{activity: fraction} of {activity: µs} (all 0: fractions of 1)"""
    tot = sum(act.values()) or 1
    return {k: v / tot for k, v in act.items()}


STEP_SLACK_NS = 1000000


def steps_vs_windows(starts, steps):
    """The report's step starts (CLOCK_MONOTONIC ns) against the program's
    next() windows (steps: t0_mono_ns, t1_mono_ns, wait_s): (how many starts
    lie inside a window, how many of the windows that waited >= 5 ms hold a
    start, how many windows waited >= 5 ms)"""
    # a step starts where the report's time in next() starts: the
    # scheduler interval that holds the call, which can begin just before
    # the program's own clock read at it (the on-CPU stretch the call was
    # in, split by a preemption): 1 ms of slack, far below the 5 ms waits
    # and the ~200 ms steps
    wins = [(s["t0_mono_ns"] - STEP_SLACK_NS, s["t1_mono_ns"]) for s in steps]
    inside = sum(1 for x in starts if any(a <= x <= b for a, b in wins))
    long_w = [(a, b) for (a, b), s in zip(wins, steps) if s["wait_s"] >= 0.005]
    found = sum(1 for a, b in long_w if any(a <= x <= b for x in starts))
    return inside, found, len(long_w)


def asleep_in_next(steps):
    """s the loop slept inside next() by its own clocks: each step's wait
    (wall) less its thread CPU there and its schedstat run delay there"""
    return sum(max(0, s["wait_s"] * 1e9 - s["wait_cpu_ns"] - s.get("wait_run_delay_ns", 0))
               for s in steps) / 1e9


def data_wait_agrees(report_wfd, dtr, asleep, rel=0.10, abs_=0.020):
    """The report's waiting_for_data (s) against the loop's own sleep inside
    next() (asleep_in_next, s). The program's next() time also holds its CPU
    there (unpickling; forking the workers at the first step) and its waits
    for a CPU, which the report counts as on_cpu and runnable; the report's
    waiting_for_data holds the sleeps its producers ended plus the runnable
    time right after each (dtr, data_then_runnable). The report's sleep is
    waiting_for_data less dtr; schedstat's run delay starts at the enqueue,
    the report's at the waker's wake-up (an IPI later for a remote wake-up),
    so the program's sleep lies between the report's sleep and that plus
    dtr. True when the two sleeps are within rel + abs_, or the program's
    lies in [sleep, sleep + dtr] with that margin."""
    got = report_wfd - dtr
    return (abs(got - asleep) <= rel * asleep + abs_ or
            got - abs_ <= asleep <= (got + dtr) * (1 + rel) + abs_)


def png_rows(data):
    """(width, height, bytes per pixel, [bytearray row, ...]) of an 8-bit RGB
    or RGBA PNG, its filters undone"""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"PNG type {depth}/{ctype}"
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for y in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def count_color(rows, bpp, rgb):
    """pixels within 4 of RGB in every channel"""
    n = 0
    for r in rows:
        for x in range(0, len(r), bpp):
            if all(abs(r[x + k] - rgb[k]) <= 4 for k in range(3)):
                n += 1
    return n


def gpu_idle(report, variant):
    """t_report_gpu: every number of the GPU idle analysis equals
    report_gen.GPU_IDLE_EXPECT (the capture's known answers, to the ns), for the
    VARIANT of the GPU records (packed, cupti_synth)"""
    rep = load_json(report)
    MS = 1000.0   # report times are µs
    check = Checks(f"[{variant}] ")
    g = rep["gpu"]
    check(g["present"] and len(g["devices"]) == 1, "one GPU device")
    d = g["devices"][0]
    check(d["pid"] == 100 and d["device"] == 0, f"GPU 0 of pid 100 ({d['pid']}, {d['device']})")
    check(d["busy_us"] == X["busy_ms"] * MS and d["span_us"] == X["span_ms"] * MS,
          f"busy {d['busy_us']} of {d['span_us']} us")
    check(abs(d["busy_fraction"] - 0.4) < 1e-9, f"busy fraction {d['busy_fraction']}")
    check(d["idle_us"] == X["idle_ms"] * MS and d["gaps"] == X["gaps"], f"idle {d['idle_us']} us in {d['gaps']} gaps")
    want = {k: v * MS for k, v in X["cause_ms"].items()}
    check(d["idle_by_cause_us"] == want, f"idle by cause {d['idle_by_cause_us']} == {want}")
    check(g["idle_by_cause_us"] == want, "totals over devices agree")
    files = {f["path"]: f for f in rep["files"]}
    for p, ms in X["file_read_ms"].items():
        check(files[p]["gpu_idle_read_us"] == ms * MS, f"{p}: read while GPU idle {files[p]['gpu_idle_read_us']} us == {ms} ms")
    gaps = [(round(x["start_ts_us"] / MS), round(x["dur_us"] / MS)) for x in g["largest_gaps"]]
    check(gaps == X["largest_gaps"], f"largest gaps {gaps}")
    for x in g["largest_gaps"]:
        start = round(x["start_ts_us"] / MS)
        if start in X["gap_files"]:
            got = {f["path"]: f["read_us"] / MS for f in x["files"]}
            check(got == X["gap_files"][start], f"gap at {start} ms reads {got}")
        check("start_utc" in x, "gaps carry wall-clock time too")
    ck = rep["checkpoints"]
    c = X["checkpoint"]
    check(len(ck) == 1 and ck[0]["path"] == c["path"] and ck[0]["bytes"] == c["bytes"]
          and ck[0]["start_ts_us"] == c["start_ms"] * MS and ck[0]["dur_us"] == c["dur_ms"] * MS
          and ck[0]["gpu_idle_us"] == c["gpu_idle_ms"] * MS, f"checkpoint {ck}")
    kinds = {r["kind"] for r in rep["recommendations"]}
    check(X["recommendations"] <= kinds, f"recommendations {sorted(kinds)}")
    for r in rep["recommendations"]:
        check(any(ch.isdigit() for ch in r["evidence"]), f"[{r['kind']}] has numbers: {r['evidence']}")
    check(rep["monotonic_base_ns"] == ANCHOR_MONO, "time base is the capture's anchor")
    return check.status()


def gpu_wait(manifest, report):
    """t_report_gpu_wait: the most launching thread, the thread whose launch
    ended each GPU gap and its state then, the
    NVTX steps, the loop's time and its wakers equal gen_capture gpuwait's
    manifest, to the ns"""
    m = json.load(open(manifest))
    r = json.load(open(report), parse_float=Decimal)
    ns = lambda us: int(Decimal(us) * 1000)
    STATES = ["on_cpu", "runnable", "file_io", "gpu_sync", "waiting_for_ranks", "waiting_for_data",
              "other_sleep", "no_state"]
    bad = []
    g = r["gpu"]
    dev = [d for d in g["devices"] if d["pid"] == m["pid"]]
    assert len(dev) == 1, "one GPU of the trainer"
    ln = dev[0]["launcher"]
    if ln is None or ln["tid"] != m["launcher"] or ln["launches"] != m["launches"]:
        bad.append("launcher: %r, want tid %d with %d launches" % (ln, m["launcher"], m["launches"]))
    # gaps: report ts are µs after the anchor; the manifest's are ms after t0
    gaps = {ns(x["start_ts_us"]): x for x in g["largest_gaps"]}
    t0 = min(gaps) + 20 * 1000000          # the first gap starts 20 ms before t0
    total = {k: 0 for k in STATES}
    for want in m["gaps"]:
        at = t0 + want["start_ms"] * 1000000
        x = gaps.get(at)
        if x is None:
            bad.append("no gap at %d ms (report has %s)" % (want["start_ms"], sorted(gaps)))
            continue
        if x["launcher_tid"] != m["gap_launcher"]:
            bad.append("gap at %d ms: launcher tid %r, want %d (whose launch ended it, not the "
                       "most launching thread)" % (want["start_ms"], x["launcher_tid"], m["gap_launcher"]))
        for k in STATES:
            w = want["us"].get(k, 0) * 1000
            total[k] += w
            got = ns(x["launcher_state_us"][k])
            if got != w:
                bad.append("gap at %d ms: %s %d ns, want %d" % (want["start_ms"], k, got, w))
    for k in STATES:
        for where, d in (("device", ln["idle_by_state_us"] if ln else {}), ("total", g["idle_by_launcher_state_us"])):
            if ns(d.get(k, -1)) != total[k]:
                bad.append("%s %s: %s, want %d ns" % (where, k, d.get(k), total[k]))
    w = r["wait"]
    if w["steps_from"] != "nvtx" or w["step_range"] != m["step_range"]:
        bad.append("steps from %r %r, want nvtx %r" % (w["steps_from"], w["step_range"], m["step_range"]))
    got = [(ns(s["start_us"]) - t0, ns(s["wait_us"]), ns(s["rest_us"])) for s in w["steps"]]
    want = [(s["start_ms"] * 1000000, s["wait_us"] * 1000, s["rest_us"] * 1000) for s in m["steps"]]
    if got != want:
        bad.append("steps %r, want %r" % (got, want))
    got = {k: ns(v) for k, v in w["loop_us"].items()}
    want = {k: v * 1000 for k, v in m["loop_us"].items()}
    # kinds the generator does not write (a futex, a socket...) must be 0
    want.update({k: 0 for k in got if k not in want})
    if got != want:
        bad.append("the loop's time %r, want %r (ns)" % (got, want))
    if sorted(x["pid"] for x in w["wakers"]) != m["wakers"]:
        bad.append("woken with data by %r, want %r (a child's exit is a join)" % (w["wakers"], m["wakers"]))
    ev = [x["evidence"] for x in r["recommendations"] if x["kind"].startswith("data_")]
    if not ev or m["data_evidence"] not in ev[0]:
        bad.append("the data recommendation's evidence lacks the GPU time its waits cost: %r" % ev)
    print("launcher tid %d: idle %s" % (ln["tid"], {k: float(v) for k, v in ln["idle_by_state_us"].items()}))
    print("steps:", got)
    if bad:
        print("\n".join(bad))
        sys.exit(1)


def gpu_wait_nosched(report):
    """t_report_gpu_wait: without scheduler records the launcher is named, its
    states null, no wait analysis"""
    r = json.load(open(report))
    g = r["gpu"]
    ln = g["devices"][0]["launcher"]
    assert ln and ln["tid"] == 302 and ln["idle_by_state_us"] is None, ln
    assert g["idle_by_launcher_state_us"] is None
    assert all(x["launcher_state_us"] is None for x in g["largest_gaps"])
    assert r["wait"] is None
    print("nosched: launcher", ln)


def train(report, prog, d):
    """t_report_train: the report of train_loop finds its files, hit ratios,
    checkpoint and thread time split (the program's own measurements, PROG)"""
    rep, prog = load_json(report), load_json(prog)
    check = Checks()
    MiB = 1 << 20
    files = {f["path"]: f for f in rep["files"]}
    for i in range(8):
        p = f"{d}/sample-{i:03d}.bin"
        f = files.get(p)
        check(f is not None, f"{p} in the report")
        if not f:
            continue
        hr = f["page_cache"]["hit_ratio"]
        check(f["read_bytes"] == 4 * MiB and f["read_ops"] == 16,
              f"sample-{i:03d}: {f['read_bytes']} bytes in {f['read_ops']} reads (2 epochs of 2 MiB)")
        check(f["pattern"] == "sequential", f"sample-{i:03d}: pattern {f['pattern']}")
        check(hr is not None and abs(hr - 0.5) <= 0.05, f"sample-{i:03d}: hit ratio {hr} ~ 0.5 (epoch 2 cached)")
        check(480 <= f["page_cache"]["miss_pages"] <= 560,
              f"sample-{i:03d}: {f['page_cache']['miss_pages']} pages missed ~ 512 (epoch 1)")
        check(f["opens"] >= 2, f"sample-{i:03d}: {f['opens']} opens")
    ck = rep["checkpoints"]
    check(len(ck) == 1, f"{len(ck)} checkpoint(s)")
    if ck:
        c = ck[0]
        check(c["path"] == f"{d}/ckpt.pt" and c["bytes"] == 4 * MiB and c["writes"] == 4
              and c["ended_by"] == "fsync", f"checkpoint {c['path']} {c['bytes']} bytes, {c['writes']} writes, "
              f"then {c['ended_by']}")
    main = [t for t in rep["threads"] if t["pid"] == t["tid"] and t["comm"] == "train_loop"]
    check(len(main) == 1, "the main thread is in the thread table")
    if main:
        t = main[0]
        io, wall, rest = t["io_us"] * 1000, t["wall_us"] * 1000, t["rest_us"] * 1000
        pio, loop, spin = prog["io_ns"], prog["loop_ns"], prog["spin_ns"]
        check(abs(io - pio) <= 0.10 * pio + 3e6, f"I/O time {io/1e6:.2f} ms ~ measured {pio/1e6:.2f} ms")
        check(loop <= wall <= loop + 150e6, f"wall {wall/1e6:.1f} ms vs loop {loop/1e6:.1f} ms")
        check(rest >= spin, f"rest {rest/1e6:.1f} ms >= spin {spin/1e6:.1f} ms")
        check(t["read_bytes"] >= 32 * MiB, f"thread read {t['read_bytes']} bytes")
    s = rep["summary"]
    hr = s["page_cache"]["hit_ratio"]
    check(hr is not None and 0.4 <= hr <= 0.6, f"overall hit ratio {hr}")
    check(s["dropped"] == 0 and s["complete"], "no drops, complete capture")
    return check.status()


def roles_demo(report, out, d):
    """t_report_roles (a): the demo's checkpoints and shards by role, from the
    summary the program printed (OUT)"""
    rep = load_json(report)
    with open(out) as f:
        out = f.read()
    # the program says what it did: "8 shards of 4 MiB read by 2 workers for 3 epochs;
    # one 8 MiB checkpoint per epoch"
    m = re.search(r"(\d+) shards of (\d+) MiB read by (\d+) workers for (\d+) epochs; "
                  r"one (\d+) MiB checkpoint per epoch", out)
    assert m, f"demo_loader printed no summary: {out!r}"
    shards, shard_mib, _, epochs, ckpt_mib = map(int, m.groups())
    MiB = 1 << 20
    check = Checks()
    ck = rep["checkpoints"]
    want = [f"{d}/checkpoint-{e}.pt" for e in range(epochs)]
    check(sorted(c["path"] for c in ck) == want,
          f"checkpoints {[c['path'] for c in ck]} == the {epochs} the program wrote")
    for c in ck:
        check(c["bytes"] == ckpt_mib * MiB and c["ended_by"] == "fsync",
              f"{c['path']}: {c['bytes']} bytes then {c['ended_by']}")
    files = {f["path"]: f for f in rep["files"]}
    for s in range(shards):
        f = files.get(f"{d}/shard-{s:02d}.bin")
        check(f is not None and f["role"] == "data" and f["write_bytes"] == shard_mib * MiB
              and f["read_bytes"] == epochs * shard_mib * MiB,
              f"shard-{s:02d}: written, fsynced, then read: role {f and f['role']}")
    for p in want:
        check(files.get(p, {}).get("role") == "checkpoint", f"{p}: role checkpoint")
    r = rep["roles"]
    check(r["data"]["files"] == shards and r["data"]["read_bytes"] == shards * epochs * shard_mib * MiB
          and r["data"]["write_bytes"] == shards * shard_mib * MiB, f"data role {r['data']}")
    check(r["checkpoint"]["files"] == epochs and r["checkpoint"]["write_bytes"] == epochs * ckpt_mib * MiB
          and r["checkpoint"]["read_bytes"] == 0, f"checkpoint role {r['checkpoint']}")
    check(sum(x["files"] for x in r.values()) == rep["files_total"], "every file has one role")
    check(rep["small_files"]["count"] == 0, f"small files {rep['small_files']}")
    check(not [x for x in rep["recommendations"] if x["kind"] == "shard"], "no shard recommendation")
    return check.status()


def roles_torch(report, out):
    """t_report_roles (b): a torch program's data files (the 80 it lists in OUT),
    code, the one checkpoint, small files"""
    rep, truth = load_json(report), load_json(out)
    check = Checks()
    want = truth["files"]
    nbytes = sum(want.values())
    check(truth["read"] == nbytes == 80 * 16384, f"the program read back its {len(want)} files")
    files = {f["path"]: f for f in rep["files"]}
    data = {p: f for p, f in files.items() if f["role"] == "data"}
    check(set(data) == set(want), f"data role: {len(data)} files, the program's {len(want)} "
          f"(extra {sorted(set(data) - set(want))[:5]}, missing {sorted(set(want) - set(data))[:5]})")
    check(all(files[p]["read_bytes"] == n for p, n in want.items() if p in files),
          "each data file: read bytes == the size written")
    r = rep["roles"]
    check(r["data"]["files"] == len(want) and r["data"]["read_bytes"] == nbytes
          and r["data"]["write_bytes"] == nbytes, f"data role {r['data']} holds exactly {nbytes} bytes")
    interp = re.compile(r"(\.py|\.pyc|\.so(\.[0-9.]+)?)$")
    code_like = [p for p in files if interp.search(p)]
    check(all(files[p]["role"] == "code" for p in code_like),
          f"every .py/.pyc/.so file is code ({len(code_like)}): "
          f"{[p for p in code_like if files[p]['role'] != 'code'][:5]}")
    code = [p for p, f in files.items() if f["role"] == "code"]
    check(any(p.endswith(".py") for p in code) and any(re.search(r"\.so(\.|$)", p) for p in code),
          "code holds the interpreter's .py and .so files")
    check(any("-packages/torch/" in p and ".so" in p for p in code), "code holds torch's own .so files")
    check(r["code"]["files"] == len(code) >= 100, f"code role: {r['code']['files']} files")
    ck = rep["checkpoints"]
    check(len(ck) == 1 and ck[0]["path"] == truth["ckpt"] and ck[0]["bytes"] == truth["ckpt_bytes"]
          and ck[0]["ended_by"] == "fsync", f"checkpoints {[(c['path'], c['bytes'], c['ended_by']) for c in ck]}"
          f" == {truth['ckpt']} {truth['ckpt_bytes']} bytes then fsync")
    check(r["checkpoint"]["files"] == 1 and files[truth["ckpt"]]["role"] == "checkpoint", "ckpt.pt is the checkpoint role")
    check(sum(x["files"] for x in r.values()) == rep["files_total"], "every file has one role")
    s = rep["small_files"]
    check(s["count"] == 80 and s["read_files"] == 80 and s["bytes"] == nbytes,
          f"small files {s}: the 80 data files only (of {rep['files_total']} files)")
    sh = [x for x in rep["recommendations"] if x["kind"] == "shard"]
    check(len(sh) == 1 and "80 of 80 data files" in sh[0]["evidence"], f"shard recommendation {sh}")
    return check.status()


def loader_wait(scen, cap, pj, rj):
    """t_report_wait: the report's "why the loop waited" against the DataLoader
    program's own measurements (PJ) in scenario SCEN"""
    t, r = load_json(pj), load_json(rj)
    w = r["wait"]
    bad = []
    if not w:
        sys.exit("FAIL %s: the report has no wait analysis" % scen)
    print("%s: %s" % (scen, w["headline"]))
    if (w["pid"], w["tid"]) != (t["pid"], t["main_tid"]):
        bad.append("loop thread %d/%d, the program's is %d/%d" % (w["pid"], w["tid"], t["pid"], t["main_tid"]))
    got, dtr = w["loop_us"]["waiting_for_data"] / 1e6, w["data_then_runnable_us"] / 1e6
    want = asleep_in_next(t["steps"])
    cpu = sum(s["wait_cpu_ns"] for s in t["steps"]) / 1e9
    rd = sum(s.get("wait_run_delay_ns", 0) for s in t["steps"]) / 1e9
    print("  waiting for data: report %.3f s (less %.3f s runnable right after: asleep %.3f s); "
          "program: next() %.3f s, less its CPU %.3f s and run delay %.3f s there: asleep %.3f s (%+.1f%%)"
          % (got, dtr, got - dtr, t["total_wait_s"], cpu, rd, want,
             100 * (got - dtr - want) / want if want else 0))
    # the wait the program sees (Python stacks): its next() calls' wall
    # time, less iter() at each epoch's first step (forking the workers:
    # the program's first wait holds it, next() does not), 5% + 20 ms
    if w.get("waiting_for_data_from") == "next":
        nx = sum(s["wait_s"] - (s.get("iter_s") or 0) for s in t["steps"])
        g = w["waiting_for_data_us"] / 1e6
        ok = abs(g - nx) <= 0.05 * nx + 0.020
        print("  in next(): report %.3f s, program %.3f s (%+.1f%%, its iter() %.3f s left out)"
              % (g, nx, 100 * (g - nx) / nx if nx else 0, t["total_wait_s"] - nx))
        if not ok:
            bad.append("in next() %.3f s, the program's next() calls %.3f s (5%% + 20 ms)" % (g, nx))
    elif "waiting_for_data_from" in w:
        bad.append("the loop's wait is from %r, not its next() (stacks are on by default)"
                   % w["waiting_for_data_from"])
    share = shares(w["wakers_meanwhile_us"])
    print("  workers meanwhile: " + ", ".join("%s %.0f%%" % (k, 100 * v) for k, v in share.items()))
    kinds = [x["kind"] for x in r["recommendations"]]
    print("  recommendations: %s; steps %d (program %d, %d waited >= 2 ms)" % (
        kinds, len(w["steps"]), len(t["steps"]), sum(1 for st in t["steps"] if st["wait_s"] >= 0.002)))
    wakers = sorted(x["pid"] for x in w["wakers"])
    if scen in ("io_bound", "cpu_bound"):
        if not data_wait_agrees(got, dtr, want):
            bad.append("asleep waiting for data %.3f s (up to %.3f s with the runnable time right after), "
                       "the program slept %.3f s inside next() (10%% + 20 ms)" % (got - dtr, got, want))
        if wakers != sorted(t["worker_pids"]):
            bad.append("woken by %s, the workers are %s" % (wakers, sorted(t["worker_pids"])))
        # steps against the program's own next() windows [t0, t1] (CLOCK_MONOTONIC):
        # a report step starts with a wait for data, so inside one of them; every
        # step that waited >= 5 ms is found (a prefetched batch leaves no wait)
        base = r["monotonic_base_ns"]
        starts = [base + int(round(s["start_us"] * 1000)) for s in w["steps"]]
        inside, found, n_long = steps_vs_windows(starts, t["steps"])
        print("  steps: %d of %d start inside a next(); %d of %d waits >= 5 ms found" %
              (inside, len(starts), found, n_long))
        if not starts or inside < 0.8 * len(starts):
            bad.append("%d of %d steps start inside the program's next() calls" % (inside, len(starts)))
        if found < 0.9 * n_long:
            bad.append("%d of %d waits >= 5 ms found as steps" % (found, n_long))
    if scen == "io_bound":
        data_dir = os.path.dirname(t["argv"][t["argv"].index("--data") + 1] + "/")
        if share["reading_files"] < 0.5:
            bad.append("workers read only %.0f%% of the time" % (100 * share["reading_files"]))
        if not w["data_files"].startswith(data_dir + "/"):
            bad.append("data files %r are not the program's %s" % (w["data_files"], data_dir))
        if w["data_hit_ratio"] is None or w["data_hit_ratio"] >= 0.2:
            bad.append("cold data files with hit ratio %r" % w["data_hit_ratio"])
        if "data_storage" not in kinds:
            bad.append("no storage recommendation: %s" % kinds)
    if scen == "cpu_bound":
        # the workers compute; how much of it they could do on a CPU, and how
        # much they waited for one, is the kernel's own account (schedstat of each
        # worker): on a quiet machine they run, on a busy one they wait, and the
        # report must say which
        run, delay = t["workers_run_ns"], t["workers_run_delay_ns"]
        want_cpu = run / (run + delay) if run + delay else 0
        busy = share["on_cpu"] + share["runnable"]
        got_cpu = share["on_cpu"] / busy if busy else 0
        print("  workers on CPU when busy: report %.0f%%, schedstat %.0f%% (run %.3f s, run_delay %.3f s)"
              % (100 * got_cpu, 100 * want_cpu, run / 1e9, delay / 1e9))
        if busy < 0.8:
            bad.append("workers on CPU or waiting for one only %.0f%% of the time" % (100 * busy))
        if abs(got_cpu - want_cpu) > 0.15:
            bad.append("workers on CPU %.0f%% of their busy time, schedstat says %.0f%%"
                       % (100 * got_cpu, 100 * want_cpu))
        # the advice follows the report's shares (report_reco.c: a CPU shortage
        # when the workers were runnable >= 25% of the loop's waits and more
        # than on a CPU, else their computing when on a CPU >= 50%); against
        # schedstat, only where the workers' own share is further from the
        # 50% where it turns than the 15 points the two shares may differ by
        # (schedstat is over the workers' lives, the report inside the loop's
        # waits): nearer, either advice is right
        rule = ("data_cpu_shortage" if share["runnable"] >= 0.25 and share["runnable"] > share["on_cpu"]
                else "data_workers" if share["on_cpu"] >= 0.5 else None)
        if rule and rule not in kinds:
            bad.append("no %s recommendation, which its own shares call for (on CPU %.0f%%, runnable "
                       "%.0f%%): %s" % (rule, 100 * share["on_cpu"], 100 * share["runnable"], kinds))
        if abs(want_cpu - 0.5) <= 0.15:
            print("  advice not checked against schedstat: the workers ran %.0f%% of their busy time, "
                  "within 15 points of the 50%% where it turns (the report says %s)"
                  % (100 * want_cpu, [k for k in kinds if k in ("data_workers", "data_cpu_shortage")]))
        else:
            want_kind = "data_workers" if want_cpu > 0.5 else "data_cpu_shortage"
            if want_kind not in kinds:
                bad.append("no %s recommendation (workers ran %.3f s, waited %.3f s for a CPU): %s"
                           % (want_kind, run / 1e9, delay / 1e9, kinds))
    if scen == "cpu_shortage":
        # the loop's waits for a CPU over its whole life, on both sides: the
        # report's runnable plus the runnable right after data came, from the
        # thread's first state to its exit (import and shutdown too, when a
        # busy machine keeps it waiting there as well), against its schedstat
        # run delay since it started, read right before the program writes
        # its output; the report's also holds the tail after that read (the
        # output, the interpreter's exit): at most the wall time from the
        # read to the thread's exit, the end of its span in the trace
        run = (w["loop_us"]["runnable"] + w["data_then_runnable_us"]) / 1e6
        end = t.get("main_schedstat_end")
        if not end:
            bad.append("the program did not read its schedstat at the end (main_schedstat_end)")
        else:
            exit_ns = r["monotonic_base_ns"] + int(round((w["start_us"] + w["span_us"]) * 1000))
            tail = max(0, exit_ns - t["main_schedstat_end_mono_ns"]) / 1e9
            lo = end[1] / 1e9
            hi = lo + tail
            print("  loop runnable: report %.3f s over its life; its schedstat run_delay %.3f s since it "
                  "started (%.3f s of it in the loop), read %.3f s before it exited"
                  % (run, lo, t["main_run_delay_ns"] / 1e9, tail))
            if not lo - 0.15 * lo - 0.030 <= run <= hi + 0.15 * hi + 0.030:
                bad.append("loop runnable %.3f s, schedstat run_delay %.3f s to %.3f s (15%% + 30 ms)"
                           % (run, lo, hi))
        if share["runnable"] < 0.2:
            bad.append("workers waited for a CPU only %.0f%% of the time" % (100 * share["runnable"]))
        if "data_cpu_shortage" not in kinds:
            bad.append("no CPU-shortage recommendation: %s" % kinds)
    if r.get("checkpoints"):
        bad.append("checkpoints found in a loader that writes none: %r" % r["checkpoints"][:2])
    for b in bad:
        print("FAIL %s: %s" % (scen, b))
    return 1 if bad else 0


def screenshot(png):
    """t_report_html: the headless Chromium screenshot of the report shows the
    GPU bar's busy blue (> 2000 pixels) and its idle-on-reads red (> 500)"""
    with open(png, "rb") as f:
        data = f.read()
    w, h, bpp, rows = png_rows(data)
    busy, read = (0x4e, 0x79, 0xa7), (0xe1, 0x57, 0x59)
    top = count_color(rows, bpp, busy)
    print(f"screenshot {w}x{h}: {top} busy-blue pixels, {count_color(rows, bpp, read)} read-red pixels")
    assert w >= 1000 and h >= 1000 and len(data) > 20000, "screenshot too small"
    assert top > 2000, "no blue chart area (GPU busy bar, histograms)"
    assert count_color(rows, bpp, read) > 500, "no red idle-on-reads area in the GPU bar"


# t_report_errors: `gpuio report --json` of awkward captures, read from stdin
def errors_empty():
    """a capture with a header only: said, nothing reported, drops unknown"""
    r = json.load(sys.stdin)
    assert "the capture holds no records" in r["warnings"], r["warnings"]
    assert r["gpu"]["present"] is False and r["files"] == [] and r["summary"]["drops_known"] is False


def errors_small():
    """no GPU records; 200 small files read once: the shard recommendation"""
    r = json.load(sys.stdin)
    assert r["gpu"]["present"] is False and r["gpu"]["devices"] == []
    s = r["small_files"]
    assert s["count"] == 200 and s["read_files"] == 200, s
    rec = [x for x in r["recommendations"] if x["kind"] == "shard"]
    assert rec and "200 of 200" in rec[0]["evidence"], r["recommendations"]


def errors_truncated():
    """a cut capture: reported up to the cut, lossy, its GPU part there"""
    r = json.load(sys.stdin)
    assert r["summary"]["truncated_bytes"] > 0 and r["summary"]["lossy"], r["summary"]
    assert r["gpu"]["present"]


def errors_dir():
    """a directory of captures a.gpuio and b.gpuio: an array of both, in order"""
    r = json.load(sys.stdin)
    assert isinstance(r, list) and [x["capture"].rsplit("/", 1)[1] for x in r] == ["a.gpuio", "b.gpuio"]


def gpu_gap_sites(manifest, report):
    """gen_capture gpuwait stacks: each GPU idle gap's launcher_site is where
    the generator put the launching thread's stack in it (null: no stack
    seen inside the gap: the thread has moved on from older ones)"""
    m, r = json.load(open(manifest)), json.load(open(report))
    ck = Checks()
    gaps = {round(g["start_ts_us"] / 1e3 - m["t0_ns"] / 1e6): g for g in r["gpu"]["largest_gaps"]}
    for start, want in m["gap_sites"].items():
        g = gaps.get(int(start))
        ck(g is not None and g.get("launcher_site") == want,
           "the gap from %s ms: launcher at %r (%r)" % (start, want, g and g.get("launcher_site")))
    return ck.status()
