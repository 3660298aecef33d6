"""What a sleeping thread was in: `gpuio report --json`'s loop against
tests/progs/wait_kinds.c, which sleeps once in each kind of wait and times
each with CLOCK_MONOTONIC (t_wait_kinds).

What computes truth is apart and unit-tested: expected_blocked."""
from checks.common import Checks, load_json

# kind in the program's output -> (loop_us key, blocked_in kind, syscall, on)
KINDS = {
    "sleep": ("sleep", "sleep", "clock_nanosleep", None),
    "futex": ("futex", "futex", "futex", None),
    "poll": ("poll", "poll", "poll", "pipe"),
    "pipe": ("pipe", "pipe", "read", "pipe"),
    "socket": ("socket", "socket", "recvfrom", "socket"),
    "child": ("child", "child", "wait4", None),
}
TOL_REL, TOL_ABS_US = 0.10, 5000.0


def expected_blocked(prog_ns):
    """{(kind, syscall, on): µs} the program's phases should appear as"""
    return {(k[1], k[2], k[3]): prog_ns[name] / 1e3 for name, k in KINDS.items()}


def within(got, want):
    return abs(got - want) <= TOL_REL * want + TOL_ABS_US


def wait_kinds(prog_json, report_json, sockets="untraced"):
    """the loop on the program's thread, each phase in its loop_us kind and
    its blocked_in entry within 10% + 5 ms, no data wait, little unexplained;
    SOCKETS "traced": the recv is the thread's own traced call, explained by
    it (loop_us.socket), so it has no blocked_in entry"""
    p, r = load_json(prog_json), load_json(report_json)
    c = Checks()
    loops = [l for l in r.get("loops", []) if l["pid"] == p["pid"] and l["tid"] == p["tid"]]
    if not c(len(loops) == 1, "the program's thread is a loop (%d): %s" % (
            len(loops), [(l["pid"], l["tid"]) for l in r.get("loops", [])])):
        return c.status()
    lp = loops[0]
    lu = lp["loop_us"]
    for name, (key, *_rest) in KINDS.items():
        want = p["ns"][name] / 1e3
        c(within(lu[key], want), "%s: %.1f us in loop_us.%s, the program's own %.1f us" % (
            name, lu[key], key, want))
    c(lu["waiting_for_data"] == 0, "no wait for data (%.1f us)" % lu["waiting_for_data"])
    c(lu["other_sleep"] < TOL_ABS_US, "other_sleep %.1f us: every sleep named" % lu["other_sleep"])
    got = {(b["kind"], b["syscall"], b["on"]): b["us"] for b in lp["blocked_in"]}
    for k, want in expected_blocked(p["ns"]).items():
        if sockets == "traced" and k[0] == "socket":
            c(k not in got, "blocked_in has no %s: the traced recv explains it" % (k,))
            continue
        c(k in got and within(got[k], want), "blocked_in %s: %s us, the program's own %.1f us" % (
            k, got.get(k), want))
    return c.status()
