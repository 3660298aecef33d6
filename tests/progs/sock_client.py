#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""sock_client.py — socket I/O that counts itself, for tests/t_sockets.sh.

Client (the traced program):

    sock_client.py --port-file F --objects K --out LOG
                   [--unix PATH] [--v6-port-file F6] [--pipe-bytes N]
                   [--ready FILE --go FILE]

  - connects to object_store.py (127.0.0.1, the port in F) and fetches
    /obj/0 .. /obj/K-1 over one keep-alive HTTP/1.1 connection: each
    request one sendall() of its bytes (send/sendto), each response read
    with recv_into() (recvfrom) until its headers and Content-Length bytes
    are in;
  - with --unix: 3 exchanges with a `--serve unix:PATH` server over one
    connection, through sendmsg() and recvmsg_into();
  - with --v6-port-file: 3 exchanges with a `--serve tcp6:F6` server on
    [::1] (send, recv_into);
  - with --pipe-bytes: writes N bytes into a pipe and reads them back
    (not socket I/O: gpuio must not show it without --all-fds);
  - with --ready/--go: connects everything first, writes its pid to READY,
    waits for GO to exist, then does the I/O (attach mode: sockets opened
    before the attach).

LOG (JSON): {"pid", "tid", "peers": {NAME: {"recv_bytes", "sent_bytes",
"recv_calls", "send_calls", "requests", "recv_ns", "header_bytes",
"body_bytes"}}, "pipe_bytes"}. NAME as gpuio names a peer ("127.0.0.1:PORT",
"[::1]:PORT", "unix:PATH"). recv_bytes and sent_bytes are what the calls
returned, summed here; recv_ns is CLOCK_MONOTONIC time around the receive
calls, summed; header_bytes + body_bytes = recv_bytes for the object store.

Server (untraced, for the unix and IPv6 exchanges):

    sock_client.py --serve unix:PATH | tcp6:PORTFILE

  answers each line "SEND <n>\\n" with n bytes; exits on SIGTERM.
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading
import time

EXCHANGES = 3
SIDE_BYTES = (1000, 70000, 5)     # the unix and IPv6 exchanges' answers


class Peer:
    def __init__(self):
        self.recv_bytes = self.sent_bytes = self.recv_calls = self.send_calls = 0
        self.requests = self.recv_ns = self.header_bytes = self.body_bytes = 0

    def send(self, sock, data, msg=False):
        if msg:
            n = sock.sendmsg([data])
            assert n == len(data), "short sendmsg"
            self.send_calls += 1
        else:
            # sendall: one send() per chunk it takes
            view = memoryview(data)
            while view:
                n = sock.send(view)
                self.send_calls += 1
                view = view[n:]
        self.sent_bytes += len(data)

    def recv(self, sock, buf, msg=False):
        t0 = time.monotonic_ns()
        if msg:
            n = sock.recvmsg_into([buf])[0]
        else:
            n = sock.recv_into(buf)
        self.recv_ns += time.monotonic_ns() - t0
        self.recv_calls += 1
        self.recv_bytes += n
        return n

    def as_dict(self):
        return dict(vars(self))


def fetch(sock, peer, index, buf):
    """GET /obj/index: the response's header and body bytes."""
    peer.send(sock, b"GET /obj/%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % index)
    peer.requests += 1
    got = bytearray()
    while b"\r\n\r\n" not in got:
        n = peer.recv(sock, buf)
        if not n:
            raise SystemExit("sock_client: the server closed the connection")
        got += buf[:n]
    head, _, body = bytes(got).partition(b"\r\n\r\n")
    length = None
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    if length is None or not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit("sock_client: bad response %r" % head[:80])
    have = len(body)
    while have < length:
        n = peer.recv(sock, buf)
        if not n:
            raise SystemExit("sock_client: the body was cut")
        have += n
    if have != length:
        raise SystemExit("sock_client: %d bytes past the body" % (have - length))
    peer.header_bytes += len(head) + 4
    peer.body_bytes += length


def exchange(sock, peer, want, buf, msg):
    peer.send(sock, b"SEND %d\n" % want, msg)
    peer.requests += 1
    have = 0
    while have < want:
        n = peer.recv(sock, buf, msg)
        if not n:
            raise SystemExit("sock_client: side server closed")
        have += n


def read_port(path):
    for _ in range(400):
        try:
            with open(path) as f:
                return int(f.read())
        except (OSError, ValueError):
            time.sleep(0.025)
    raise SystemExit("sock_client: no port in %s" % path)


def client(a):
    buf = bytearray(65536)
    peers = {}
    port = read_port(a.port_file)
    store = socket.create_connection(("127.0.0.1", port))
    peers["127.0.0.1:%d" % port] = store_peer = Peer()
    ux = v6 = None
    if a.unix:
        ux = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ux.connect(a.unix)
        peers["unix:" + a.unix] = Peer()
    if a.v6_port_file:
        p6 = read_port(a.v6_port_file)
        v6 = socket.create_connection(("::1", p6))
        peers["[::1]:%d" % p6] = Peer()
    if a.ready:
        with open(a.ready + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(a.ready + ".tmp", a.ready)
        while not os.path.exists(a.go):
            time.sleep(0.01)
    for i in range(a.objects):
        fetch(store, store_peer, i, buf)
    if ux:
        for n in SIDE_BYTES:
            exchange(ux, peers["unix:" + a.unix], n, buf, True)
    if v6:
        for n in SIDE_BYTES:
            exchange(v6, peers["[::1]:%d" % p6], n, buf, False)
    piped = 0
    if a.pipe_bytes:
        r, w = os.pipe()
        os.write(w, b"p" * a.pipe_bytes)
        piped = len(os.read(r, a.pipe_bytes))
        os.close(r)
        os.close(w)
    out = {"pid": os.getpid(), "tid": threading.get_native_id(),
           "peers": {k: v.as_dict() for k, v in peers.items()}, "pipe_bytes": piped}
    with open(a.out, "w") as f:
        json.dump(out, f)
    for s in (store, ux, v6):
        if s:
            s.close()


def serve(spec):
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda s, f: stop.set())
    kind, _, where = spec.partition(":")
    if kind == "unix":
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(where)
        srv.listen()
    elif kind == "tcp6":
        srv = socket.create_server(("::1", 0), family=socket.AF_INET6)
        with open(where + ".tmp", "w") as f:
            f.write("%d\n" % srv.getsockname()[1])
        os.rename(where + ".tmp", where)
    else:
        raise SystemExit("sock_client: --serve unix:PATH | tcp6:PORTFILE")
    srv.settimeout(0.1)

    def answer(c):
        with c:
            f = c.makefile("rb")
            for line in f:
                n = int(line.split()[1])
                c.sendall(b"s" * n)

    while not stop.is_set():
        try:
            c, _ = srv.accept()
        except socket.timeout:
            continue
        c.settimeout(None)
        threading.Thread(target=answer, args=(c,), daemon=True).start()
    srv.close()
    if kind == "unix":
        os.unlink(where)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--serve")
    ap.add_argument("--port-file")
    ap.add_argument("--objects", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--unix")
    ap.add_argument("--v6-port-file")
    ap.add_argument("--pipe-bytes", type=int, default=0)
    ap.add_argument("--ready")
    ap.add_argument("--go")
    a = ap.parse_args(argv)
    if a.serve:
        return serve(a.serve)
    if not a.port_file or not a.out or bool(a.ready) != bool(a.go):
        ap.error("--port-file and --out are needed; --ready and --go go together")
    client(a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
