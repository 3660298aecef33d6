#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""object_store.py — a remote object store on loopback, with known latency.

Ground truth for tests of socket I/O (tests/t_sockets.sh) and for DataLoader
workers that fetch their samples over HTTP: every object's bytes, every
request's server-side start and end on CLOCK_MONOTONIC (the clock gpuio's
records use), and the latency the server adds. Standard library only.

    object_store.py --objects N --size BYTES --latency-ms L [--port 0]
                    --port-file FILE [--log FILE]

A threaded HTTP/1.1 server (http.server.ThreadingHTTPServer; keep-alive
allowed) on 127.0.0.1:PORT (0, the default: any free port).

    GET /obj/<i>    0 <= i < N: sleeps L ms, then answers 200 with BYTES
                    bytes and Content-Length: BYTES. The bytes are
                    deterministic: object_bytes(i, BYTES) below (the SHA-256
                    of "object <i>" repeated, cut to BYTES), so a client can
                    check what it got.
    anything else   404, an empty body (Content-Length: 0), no sleep.

Once listening, the bound port is written to FILE (written to FILE.tmp and
renamed: a reader never sees a partial number). On SIGTERM or SIGINT the
server stops, writes to --log (when given) the JSON

    {"requests": n, "bytes_sent": n, "latency_ms": L,
     "per_request": [{"path": "/obj/3", "bytes": BYTES,
                      "start_mono_ns": t0, "end_mono_ns": t1}, ...]}

and exits 0. requests and bytes_sent count the 200 answers and their body
bytes (headers not included: the client counts those); per_request lists
every answer, 404s too (bytes 0), in the order they ended. start_mono_ns is
when the request line was read, end_mono_ns when the body's last byte was
handed to the kernel.
"""
import argparse
import hashlib
import http.server
import json
import os
import re
import signal
import sys
import threading
import time


def object_bytes(i, size):
    """The BYTES bytes of object i: SHA-256("object <i>") repeated, cut."""
    block = hashlib.sha256(b"object %d" % i).digest()
    return (block * (size // len(block) + 1))[:size]


class Store:
    def __init__(self, objects, size, latency_ms):
        self.objects = objects
        self.size = size
        self.latency_ms = latency_ms
        self.lock = threading.Lock()
        self.requests = 0
        self.bytes_sent = 0
        self.per_request = []
        self.cache = {}

    def body(self, i):
        with self.lock:
            b = self.cache.get(i)
        if b is None:
            b = object_bytes(i, self.size)
            with self.lock:
                if len(self.cache) < 64:
                    self.cache[i] = b
        return b

    def note(self, path, nbytes, t0, t1, ok):
        with self.lock:
            if ok:
                self.requests += 1
                self.bytes_sent += nbytes
            self.per_request.append({"path": path, "bytes": nbytes,
                                     "start_mono_ns": t0, "end_mono_ns": t1})

    def log(self):
        with self.lock:
            return {"requests": self.requests, "bytes_sent": self.bytes_sent,
                    "latency_ms": self.latency_ms,
                    "per_request": list(self.per_request)}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"       # keep-alive
    server_version = "object_store/1"
    sys_version = ""

    def parse_request(self):
        # the request line has just been read: the request starts now
        self.t0 = time.monotonic_ns()
        return super().parse_request()

    def do_GET(self):
        store = self.server.store
        m = re.fullmatch(r"/obj/([0-9]{1,9})", self.path)
        index = int(m.group(1)) if m else None
        if index is None or not 0 <= index < store.objects:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            store.note(self.path, 0, self.t0, time.monotonic_ns(), False)
            return
        if store.latency_ms > 0:
            time.sleep(store.latency_ms / 1000.0)
        body = store.body(index)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        store.note(self.path, len(body), self.t0, time.monotonic_ns(), True)

    def log_message(self, fmt, *args):
        pass                            # quiet: the log is the JSON


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True               # a client left open never blocks the exit
    allow_reuse_address = True


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--objects", type=int, required=True)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--latency-ms", type=float, required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    a = ap.parse_args(argv)
    if a.objects < 1 or a.size < 0 or a.latency_ms < 0:
        ap.error("--objects >= 1, --size >= 0, --latency-ms >= 0")

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda s, f: stop.set())
    signal.signal(signal.SIGINT, lambda s, f: stop.set())

    srv = Server(("127.0.0.1", a.port), Handler)
    latency = int(a.latency_ms) if a.latency_ms == int(a.latency_ms) else a.latency_ms
    srv.store = Store(a.objects, a.size, latency)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                         name="serve", daemon=True)
    t.start()
    write_atomic(a.port_file, "%d\n" % srv.server_address[1])
    while not stop.wait(0.2):
        pass
    srv.shutdown()
    srv.server_close()
    if a.log:
        write_atomic(a.log, json.dumps(srv.store.log()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
