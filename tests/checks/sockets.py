"""t_sockets: socket calls and their peers in the exports and the report,
against gen_capture's manifest (synthetic, exact to the ns) and against
what a traced client (tests/progs/sock_client.py) and the object store it
fetched from (tests/progs/object_store.py) counted themselves.

What computes truth is apart and unit-tested (test_sockets.py):
recv_send (which way a call moves a socket's bytes), peer_totals and
requests (the exchanges rule of user/report/report_net.h, written again
here from the manifest's calls), close_enough (the tolerance of a time the
program measured around its own calls)."""
import json

import check_trace as ct
from checks.export_gen import decoded

RECV = {"recvfrom", "recvmsg", "recvmmsg", "read", "readv"}
SEND = {"sendto", "sendmsg", "sendmmsg", "write", "writev"}
INFO_NAME = "gpuio trace info"


def recv_send(call):
    """'recv', 'send' or None: the direction of a call on a socket"""
    return "recv" if call in RECV else "send" if call in SEND else None


def requests(calls):
    """requests on one socket: bursts in the direction of its first data
    call answered by a call the other way that moved bytes; [(start, end)]
    of each answered exchange (calls: dicts with call, ts, dur, ret)"""
    first, state, out = None, "idle", []
    s = e = 0
    for c in sorted(calls, key=lambda c: c["ts"]):
        d = recv_send(c["call"])
        if d is None:
            continue
        if first is None:
            if c["ret"] <= 0:
                continue
            first = d
        if d == first:
            if state == "answered":
                out.append((s, e))
                state = "idle"
            if state == "idle":
                state, s = "asking", c["ts"]
            continue
        if c["ret"] <= 0 or state == "idle":
            continue
        state, e = "answered", c["ts"] + c["dur"]
    if state == "answered":
        out.append((s, e))
    return out


def peer_totals(calls):
    """{peer: {received, sent, recv_calls, send_calls, recv_ns, send_ns,
    requests}} of manifest calls that have a peer (peer_hex)"""
    by_sock, out = {}, {}
    for c in calls:
        if c.get("peer_hex") is None:
            continue
        peer = decoded(c["peer_hex"])
        by_sock.setdefault((peer, c["ino"]), []).append(c)
        t = out.setdefault(peer, dict(received=0, sent=0, recv_calls=0, send_calls=0,
                                      recv_ns=0, send_ns=0, requests=0))
        d = recv_send(c["call"])
        if d is None:
            continue
        b = c["ret"] if c["ret"] > 0 else 0
        if d == "recv":
            t["received"] += b
            t["recv_calls"] += 1
            t["recv_ns"] += c["dur"]
        else:
            t["sent"] += b
            t["send_calls"] += 1
            t["send_ns"] += c["dur"]
    for (peer, _), cs in by_sock.items():
        out[peer]["requests"] += len(requests(cs))
    return out


def close_enough(got_ns, want_ns, rel=0.10, abs_ns=20_000_000):
    """a time gpuio measured vs the program's own clock around the same calls"""
    return abs(got_ns - want_ns) <= rel * want_ns + abs_ns


def _info(ev):
    for e in ev:
        if e.get("name") == INFO_NAME:
            return e.get("args", {})
    raise AssertionError("no 'gpuio trace info' instant")


def socket_slices(ev):
    """VFS slices on sockets, in time order"""
    out = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "vfs" and
           e.get("args", {}).get("ftype") == "socket"]
    return sorted(out, key=lambda e: e["ts"])


def gen_export(trace, manifest):
    """gen_capture sockets' export (JSON or .pftrace) against its manifest:
    every socket call once, on its thread, at its ns, with its peer, proto,
    bytes (or errno), requested, latency, messages; no peer where the
    capture named none"""
    m = json.load(open(manifest))
    ev = ct.load(trace)
    info = [e for e in ev if e.get("name") == INFO_NAME][0]
    # the info instant is at the timeline's origin: JSON ts 0, .pftrace's own clock
    zero = ct.ns(info["ts"]) - int(info["args"]["timeline_origin_ns"]) + \
        int(info["args"]["monotonic_base_ns"])
    got = {}
    for e in socket_slices(ev):
        key = (e["tid"], ct.ns(e["ts"]) - zero)
        assert key not in got, "two slices at %s" % (key,)
        got[key] = e
    assert len(got) == len(m["calls"]), "%d socket slices, %d calls" % (len(got), len(m["calls"]))
    for c in m["calls"]:
        e = got.get((c["tid"], c["ts"]))
        assert e, "no slice for %s" % c
        a = e["args"]
        assert e["name"] == c["call"], (e["name"], c)
        assert ct.ns(e["dur"]) == c["dur"], (e, c)
        assert a["requested"] == c["requested"], (a, c)
        if c["ret"] >= 0:
            assert a["bytes"] == c["ret"] and "errno" not in a, (a, c)
        else:
            assert a["errno"] == -c["ret"] and "bytes" not in a, (a, c)
        if c["peer_hex"] is None:
            assert "peer" not in a and "latency_us" not in a, a
            continue
        assert a["peer"] == decoded(c["peer_hex"]), (a["peer"], c)
        assert ct.ns(a["latency_us"]) == c["dur"], (a, c)
        assert ("messages" in a) == (c["messages"] >= 0), (a, c)
        if c["messages"] >= 0:
            assert a["messages"] == c["messages"], (a, c)
        assert ("msg_flags" in a) == bool(c["flags"]), (a, c)
    counts = _info(ev)["record_counts"]
    assert counts.get("sock_peer") == 7 and counts["unknown"] == 0, counts
    print("sockets: %d socket slices exactly as generated (peers, bytes, errno, "
          "latency, messages)" % len(got))


def _peers(report):
    return {p["peer"]: p for p in report["network"]["peers"]}


def gen_report(report_json, manifest):
    """gpuio report --json of gen_capture sockets: each peer's bytes, calls,
    times and requests as the manifest's calls add up; the TCP peer's request
    latency; the socket without a peer record left to the files"""
    m = json.load(open(manifest))
    r = json.load(open(report_json))
    peers = _peers(r)
    want = peer_totals(m["calls"])
    assert set(peers) == set(want), (sorted(peers), sorted(want))
    for name, t in want.items():
        p = peers[name]
        for k, rk in (("received", "received_bytes"), ("sent", "sent_bytes"),
                      ("recv_calls", "recv_calls"), ("send_calls", "send_calls"),
                      ("requests", "requests")):
            assert p[rk] == t[k], (name, rk, p[rk], t[k])
        assert ct.ns(p["recv_time_us"]) == t["recv_ns"], (name, p, t)
        assert ct.ns(p["send_time_us"]) == t["send_ns"], (name, p, t)
    lat = m["tcp_request_latency"]
    assert ct.ns(peers["10.0.0.5:9000"]["request_mean_us"]) == sum(lat) // len(lat), peers
    assert ct.ns(peers["10.0.0.5:9000"]["request_max_us"]) == max(lat), peers
    assert peers["10.0.0.5:9000"]["role"] == "client", peers
    files = {f["path"] for f in r.get("files", [])}
    assert "socket:[7008]" in files and not any(f.startswith("socket:[700") and
                                                f != "socket:[7008]" for f in files), files
    print("sockets: report peers, bytes, calls, times and requests as generated")


def live(trace, report_json, client_log, store_log, store_peer_only="0"):
    """a traced sock_client.py run: per peer, the bytes each way and the calls
    equal what the client's calls returned; requests equal its requests;
    time in receives within 10% + 20 ms of its own clock; the object store's
    bytes_sent plus the headers the client counted equal what gpuio says it
    received; no pipe slice (no --all-fds); the report's peers table and the
    remote_data recommendation with the same numbers"""
    cl = json.load(open(client_log))
    st = json.load(open(store_log))
    ev = ct.load(trace)
    r = json.load(open(report_json))
    by_peer = {}
    for e in socket_slices(ev):
        if e["pid"] != cl["pid"]:
            continue
        a = e["args"]
        t = by_peer.setdefault(a.get("peer"), dict(received=0, sent=0, recv_calls=0,
                                                   send_calls=0, recv_ns=0))
        d = recv_send(e["name"])
        if d == "recv":
            t["received"] += a.get("bytes", 0)
            t["recv_calls"] += 1
            t["recv_ns"] += ct.ns(e["dur"])
        elif d == "send":
            t["sent"] += a.get("bytes", 0)
            t["send_calls"] += 1
    pipes = [e for e in ev if e.get("ph") == "X" and e.get("args", {}).get("ftype") == "pipe"]
    assert not pipes, "pipe slices without --all-fds: %s" % pipes[:2]
    peers = _peers(r)
    names = list(cl["peers"])
    if store_peer_only == "1":
        names = names[:1]
    for name in names:
        want = cl["peers"][name]
        got = by_peer.get(name)
        assert got, "no slice with peer %s (peers: %s)" % (name, sorted(by_peer, key=str))
        for k in ("received", "sent", "recv_calls", "send_calls"):
            wk = {"received": "recv_bytes", "sent": "sent_bytes"}.get(k, k)
            assert got[k] == want[wk], (name, k, got[k], want[wk])
        assert close_enough(got["recv_ns"], want["recv_ns"]), (name, got, want)
        p = peers[name]
        assert p["received_bytes"] == want["recv_bytes"], (name, p, want)
        assert p["sent_bytes"] == want["sent_bytes"], (name, p, want)
        assert p["requests"] == want["requests"], (name, p, want)
        assert close_enough(ct.ns(p["recv_time_us"]), want["recv_ns"]), (name, p, want)
        print("sockets: %s: %d B received, %d B sent, %d requests, %.1f ms in receives "
              "(the client: %.1f ms)" % (name, p["received_bytes"], p["sent_bytes"],
                                        p["requests"], p["recv_time_us"] / 1e3,
                                        want["recv_ns"] / 1e6))
    store = names[0]
    want = cl["peers"][store]
    assert want["body_bytes"] == st["bytes_sent"] and want["requests"] == st["requests"], (want, st)
    assert peers[store]["received_bytes"] == st["bytes_sent"] + want["header_bytes"], (peers[store], st)
    recos = [x for x in r["recommendations"] if x["kind"] == "remote_data"]
    assert len(recos) == 1, r["recommendations"]
    ev_text = recos[0]["evidence"]
    assert store in ev_text and "%d requests" % st["requests"] in ev_text, ev_text
    assert "pid %d " % cl["pid"] in recos[0]["text"], recos[0]
    print("sockets: the object store's %d B + %d B of headers received exactly; remote_data "
          "advice for pid %d" % (st["bytes_sent"], want["header_bytes"], cl["pid"]))


def no_sockets(trace):
    """--no-sockets: no socket slice, no peer record"""
    ev = ct.load(trace)
    s = socket_slices(ev)
    assert not s, "socket slices with --no-sockets: %s" % s[:2]
    counts = _info(ev)["record_counts"]
    assert "sock_peer" not in counts, counts
    print("sockets: --no-sockets: no socket call, no peer record")


def connections(trace, report_json, prog_out):
    """t_sock_connect: sock_connect's connects and accepts against its own
    lines: every connect inside the client's clock window around it, with
    its peer; the refused one failed ECONNREFUSED; each accept names a client
    port the client saw; no record of the EAGAIN accept; the report's
    per-peer connects"""
    import truth
    from checks.common import Checks, load_json
    ev = truth.load(trace)
    inf = truth.info(ev)
    check = Checks()
    lines = [l.split() for l in open(prog_out) if l.strip()]
    conns = [(int(l[2]), int(l[3]), int(l[4])) for l in lines if l[0] == "connect"]
    refused = [(int(l[1]), int(l[2])) for l in lines if l[0] == "refused"]
    tail = dict(w.split("=") for w in lines[-1][1:])
    port, n = tail["port"], int(tail["connects"])
    check(len(conns) == n and len(refused) == 1, f"the program made {n} connects and one refused")
    sl = truth.vfs(ev, names={"connect"})
    ok = [e for e in sl if "errno" not in e["args"]]
    bad = [e for e in sl if "errno" in e["args"]]
    check(len(ok) == n, f"{len(ok)} connect slices == the program's {n}")
    check(all(e["args"].get("peer") == f"127.0.0.1:{port}" and e["args"].get("proto") == "tcp"
              for e in ok), f"each names its peer 127.0.0.1:{port}")

    def inside(e, t0, t1):
        s = truth.to_mono_ns(inf, e["ts"])
        return t0 - 1000 <= s and s + round(e["dur"] * 1000) <= t1 + 1000

    check(all(inside(e, t0, t1) for e, (t0, t1, _) in zip(ok, conns)),
          "each connect lies inside the window the client timed around it")
    check(len(bad) == 1 and bad[0]["args"].get("error") == "ECONNREFUSED" and
          inside(bad[0], *refused[0]), "the refused connect: ECONNREFUSED, inside its window")
    acc = truth.vfs(ev, names={"accept"})
    check(len(acc) == n and not any("errno" in e["args"] for e in acc),
          f"{len(acc)} accept slices == {n}, none for the EAGAIN accept")
    ports = sorted(f"127.0.0.1:{c[2]}" for c in conns)
    check(sorted(e["args"].get("peer", "") for e in acc) == ports,
          "each accept names a client port the client saw")
    client = {e["pid"] for e in ok}
    check(len(client) == 1 and not client & {e["pid"] for e in acc},
          "connects in the client process, accepts in the server")
    rep = _peers(load_json(report_json))
    srv = rep.get(f"127.0.0.1:{port}", {})
    check(srv.get("connects") == n and srv.get("role") == "client",
          f"report: the server's peer row has {srv.get('connects')} connects == {n}, role client")
    got = sum(rep.get(p, {}).get("connects", 0) for p in ports)
    check(got == n, f"report: the clients' peer rows have {got} accepts == {n}")
    want_ns = sum(round(e["dur"] * 1000) for e in ok)
    check(abs(srv.get("connect_time_us", -1) * 1000 - want_ns) <= n,
          "report: connect time == the sum of the connect slices")
    return check.status()


def uring(trace, report_json, prog_out):
    """t_uring_sock: uring_sock's io_uring socket requests against its own
    counts: per process (client, server) each request kind's count and bytes,
    the peers they name, the async lanes; the report's per-peer bytes and
    connects"""
    import truth
    from checks.common import Checks, load_json
    ev = truth.load(trace)
    check = Checks()
    kv = dict(w.split("=") for w in open(prog_out).read().split()[1:])
    n = {k: int(v) for k, v in kv.items()}
    port = n["port"]
    sl = [e for e in truth.vfs(ev) if e["name"].startswith("io_uring_")]
    conn = [e for e in sl if e["name"] == "io_uring_connect"]
    acc = [e for e in sl if e["name"] == "io_uring_accept"]
    check(len(conn) == 1 and conn[0]["args"].get("peer") == f"127.0.0.1:{port}",
          f"one io_uring_connect naming 127.0.0.1:{port}")
    check(len(acc) == 1 and acc[0]["pid"] != conn[0]["pid"] if conn and acc else False,
          "one io_uring_accept, in the server process")
    if not (conn and acc):
        return check.status()
    client, server = conn[0]["pid"], acc[0]["pid"]
    cpeer = acc[0]["args"].get("peer", "")
    check(cpeer.startswith("127.0.0.1:") and cpeer != f"127.0.0.1:{port}",
          f"the accept names the client's address {cpeer}")

    def tot(pid, names):
        es = [e for e in sl if e["pid"] == pid and e["name"] in names]
        return len(es), sum(e["args"].get("bytes", 0) for e in es)

    for who, pid, dirn, names in (
            ("client", client, "sends", {"io_uring_send", "io_uring_sendmsg"}),
            ("client", client, "recvs", {"io_uring_recv", "io_uring_recvmsg"}),
            ("server", server, "sends", {"io_uring_send"}),
            ("server", server, "recvs", {"io_uring_recv"})):
        want = (n[f"{who}_{dirn}"], n[f"{who}_{dirn[:-1]}_bytes"])
        check(tot(pid, names) == want, f"{who} {dirn}: {tot(pid, names)} == the program's {want}")
    smsg = [e for e in sl if e["name"] == "io_uring_sendmsg"]
    rmsg = [e for e in sl if e["name"] == "io_uring_recvmsg"]
    check(len(smsg) == n["client_sends"] // 2 and len(rmsg) >= len(smsg) and
          all(e["pid"] == client for e in smsg + rmsg),
          f"{len(smsg)} sendmsg, {len(rmsg)} recvmsg requests: the client's odd round trips")
    check(all(e["args"].get("peer") == (f"127.0.0.1:{port}" if e["pid"] == client else cpeer)
              for e in sl), "every request names its socket's peer")
    check(all(e["tid"] >= 0x20000000 and e["args"].get("tid") == e["pid"] for e in sl),
          "every request on an async lane, naming its submitter")
    rep = _peers(load_json(report_json))
    srv, cli = rep.get(f"127.0.0.1:{port}", {}), rep.get(cpeer, {})
    check((srv.get("sent_bytes"), srv.get("received_bytes"), srv.get("connects")) ==
          (n["client_send_bytes"], n["client_recv_bytes"], 1),
          f"report: the client's row for the server: sent, received, connects "
          f"{(srv.get('sent_bytes'), srv.get('received_bytes'), srv.get('connects'))}")
    check((cli.get("sent_bytes"), cli.get("received_bytes"), cli.get("connects")) ==
          (n["server_send_bytes"], n["server_recv_bytes"], 1),
          "report: the server's row for the client: sent, received, accepts")
    return check.status()
