"""`gpuio mcp` driven by a scripted MCP client (tests/t_mcp.sh): newline-
delimited JSON-RPC 2.0 on the server's stdin/stdout, every reply checked
to be one line of strict UTF-8 JSON, and the tools' answers checked against
`gpuio report --json` of the same captures run apart (and, where there is a
trace_processor_shell, sql_query against the shell run on `gpuio convert`'s
export of the same capture).

Layout made by t_mcp.sh, passed as arguments: ALLOW (the allowed
directory) holding job/a.gpuio and job/b.gpuio (real DataLoader loops,
traced), gpu.gpuio (report_gen gpu-idle), HOSTILE (a capture with hostile
names under a hostile file name), junk.gpuio (not a capture),
dumps/gpuio-dump-*.pftrace (a dump: a.gpuio's export) and
dumps/.gpuio-dump-1.gpuio (a dump in the making: not listed),
escape.gpuio (a symlink out of ALLOW), link.gpuio (a symlink to
job/a.gpuio); OUTSIDE, a capture outside ALLOW; SIBLING, a capture in a
directory whose name starts with ALLOW's.
"""
import json
import os
import select
import subprocess

from checks.common import Checks

REPLY_WAIT = 600        # s: a guard against a hung server, not a timing check


class Client:
    """One `gpuio mcp` process and the conversation with it."""

    def __init__(self, cmd, stderr_path, env=None):
        self.err = open(stderr_path, "wb")
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, env=env)
        self.next_id = 0
        self.buf = b""

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def line(self):
        """the next line the server writes (bytes, without its newline)"""
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [], REPLY_WAIT)
            if not r:
                raise AssertionError("no reply from gpuio mcp in %d s" % REPLY_WAIT)
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                raise AssertionError("gpuio mcp closed its stdout (exit %s)" % self.p.poll())
            self.buf += chunk
        l, self.buf = self.buf.split(b"\n", 1)
        return l

    def reply(self):
        """the next message: strict UTF-8, one JSON object, JSON-RPC 2.0"""
        raw = self.line()
        msg = json.loads(raw.decode("utf-8"))        # strict: raises on bad UTF-8
        assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", raw[:200]
        assert ("result" in msg) != ("error" in msg), raw[:200]
        return msg

    def request(self, method, params=None, raw_params=None):
        self.next_id += 1
        rid = self.next_id
        if raw_params is not None:
            self.send_raw(b'{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}\n'
                          % (rid, method.encode(), raw_params))
        else:
            m = {"jsonrpc": "2.0", "id": rid, "method": method}
            if params is not None:
                m["params"] = params
            self.send(m)
        r = self.reply()
        assert r.get("id") == rid, "reply id %r to request %d" % (r.get("id"), rid)
        return r

    def call(self, name, args=None, raw_args=None):
        """tools/call: (result, structuredContent or None)"""
        if raw_args is not None:
            r = self.request("tools/call", raw_params=b'{"name":"%s","arguments":%s}'
                             % (name.encode(), raw_args))
        else:
            r = self.request("tools/call", {"name": name, "arguments": args or {}})
        assert "result" in r, "tools/call %s: %s" % (name, r)
        res = r["result"]
        assert isinstance(res.get("content"), list) and res["content"][0]["type"] == "text"
        sc = res.get("structuredContent")
        if not res.get("isError"):
            # the text block is the same JSON as structuredContent
            assert json.loads(res["content"][0]["text"]) == sc, name
        return res, sc

    def close(self):
        """end of stdin: the server must end, status 0"""
        self.p.stdin.close()
        rest = self.p.stdout.read()
        rc = self.p.wait(timeout=REPLY_WAIT)
        self.err.close()
        return rc, self.buf + rest


def report(gpuio, *args):
    out = subprocess.run([gpuio, "report", "--json"] + list(args), stdout=subprocess.PIPE,
                         check=True).stdout
    return json.loads(out)


def text_of(res):
    return res["content"][0]["text"]


def error_code(msg):
    return msg.get("error", {}).get("code")


def protocol(ck, c, gpuio):
    """initialize (version negotiation), the initialized notification, ping, tools/list"""
    version = subprocess.run([gpuio, "--version"], stdout=subprocess.PIPE,
                             check=True).stdout.decode().split()[1]
    r = c.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "t_mcp", "version": "1"}})["result"]
    ck(r.get("protocolVersion") == "2025-06-18", "initialize: 2025-06-18 echoed")
    ck(r.get("serverInfo", {}).get("name") == "gpuio" and
       r["serverInfo"].get("version") == version, "initialize: serverInfo gpuio %s" % version)
    ck(r.get("capabilities") == {"tools": {}}, "initialize: capabilities {tools: {}}")
    ck(isinstance(r.get("instructions"), str) and "list_captures" in r["instructions"],
       "initialize: instructions")
    for asked, want in (("2025-11-25", "2025-11-25"), ("2025-03-26", "2025-03-26"),
                        ("2024-11-05", "2024-11-05"), ("2023-01-01", "2025-11-25"),
                        (20250618, "2025-11-25")):
        got = c.request("initialize", {"protocolVersion": asked, "capabilities": {},
                                       "clientInfo": {"name": "t", "version": "1"}})
        ck(got["result"]["protocolVersion"] == want, "initialize: %r -> %s" % (asked, want))
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    ck(c.request("ping")["result"] == {}, "ping: {} (and no reply to the notification)")
    tools = c.request("tools/list")["result"]["tools"]
    names = [t["name"] for t in tools]
    ck(sorted(names) == sorted(["list_captures", "report_headline", "report_loops",
                                "report_files", "report_gpu_gaps", "hosts_straggler",
                                "sql_query"]), "tools/list: %s" % names)
    for t in tools:
        s = t.get("inputSchema", {})
        ck(t.get("description") and s.get("type") == "object" and
           isinstance(s.get("properties"), dict) and
           set(s.get("required", [])) <= set(s["properties"]),
           "tools/list: %s has a description and an object inputSchema" % t["name"])


def errors(ck, c):
    """JSON-RPC errors, notifications answered by nothing, tool argument errors"""
    for raw, code, what in ((b"{not json\n", -32700, "malformed JSON"),
                            (b'{"jsonrpc":"2.0","id":1,"method":"ping"\n', -32700, "cut short"),
                            (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', -32600, "a batch"),
                            (b'"hello"\n', -32600, "a string"),
                            (b'{"jsonrpc":"2.0","id":{},"method":"ping"}\n', -32600,
                             "an object id"),
                            (b'{"jsonrpc":"2.0","id":1,"method":"ping"}garbage\n', -32700,
                             "trailing garbage")):
        c.send_raw(raw)
        r = c.reply()
        ck(error_code(r) == code and r.get("id") is None, "%s -> %d, id null" % (what, code))
    r = c.request("no/such/method")
    ck(error_code(r) == -32601, "unknown method -> -32601 (%s)" % r.get("error"))
    c.send_raw(b'{"jsonrpc":"1.0","id":"v1","method":"ping"}\n')
    r = c.reply()
    ck(error_code(r) == -32600 and r.get("id") == "v1", "jsonrpc 1.0 -> -32600, its id")
    c.send_raw(b'{"jsonrpc":"2.0","id":"x\\u0001\\"\xff","method":"\\u0001\\u0000\\"\\\\\\n\xc3("}\n')
    r = c.reply()
    ck(error_code(r) == -32601 and r.get("id") == 'x\x01"\ufffd',
       "a hostile method name and id: -32601, valid JSON, the id given back")
    for params, what in (({"name": "nosuch"}, "an unknown tool"), ({}, "no tool name"),
                         ({"name": 7}, "a tool name that is a number")):
        r = c.request("tools/call", params)
        ck(error_code(r) == -32602, "tools/call with %s -> -32602" % what)
    r = c.request("tools/call", raw_params=b'{"name":"report_headline","arguments":[]}')
    ck(error_code(r) == -32602, "tools/call with arguments [] -> -32602")
    r = c.request("tools/list", raw_params=b"[]")
    ck(error_code(r) == -32602, "params [] -> -32602")
    # nothing back for notifications (known, unknown, malformed) or a response
    for raw in (b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
                b'{"jsonrpc":"2.0","method":"no/such/notification"}',
                b'{"jsonrpc":"2.0","method":"tools/call","params":[]}',
                b'{"jsonrpc":"2.0","id":99,"result":{}}', b"", b"   \r"):
        c.send_raw(raw + b"\n")
    ck(c.request("ping")["result"] == {}, "no reply to notifications, responses, blank lines")
    for name, args, word in (("report_headline", {}, "path"),
                             ("report_headline", {"path": 42}, "path"),
                             ("report_files", {"path": "x.gpuio", "limit": "x"}, "limit"),
                             ("report_files", {"path": "x.gpuio", "limit": 0}, "limit"),
                             ("report_loops", {"path": "x.gpuio", "steps": -1}, "steps"),
                             ("report_gpu_gaps", {"path": "x.gpuio", "limit": 1.5}, "limit"),
                             ("hosts_straggler", {}, "paths"),
                             ("hosts_straggler", {"paths": "a.gpuio"}, "paths"),
                             ("hosts_straggler", {"paths": [1]}, "paths"),
                             ("sql_query", {"path": "x.gpuio"}, "query")):
        res, _ = c.call(name, args)
        ck(res.get("isError") is True and word in text_of(res),
           "%s %s -> isError naming %s" % (name, json.dumps(args), word))


def oversized(ck, c):
    """a line over 1 MiB: an error, the line dropped, the next line served"""
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * (2 << 20) + b'"}}'
    ping = b'{"jsonrpc":"2.0","id":"after","method":"ping"}'
    c.send_raw(big + b"\n" + ping + b"\n")
    r = c.reply()
    ck(error_code(r) == -32600 and r.get("id") is None and "longer" in r["error"]["message"],
       "a 2 MiB line -> -32600 (%s)" % r.get("error"))
    r = c.reply()
    ck(r.get("id") == "after" and r.get("result") == {}, "the line after it is served")
    pad = b"y" * 1000000
    c.send_raw(b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"' + pad + b'"}}\n')
    r = c.reply()
    ck(r.get("id") == "big" and r.get("result") == {}, "a 1 MB line under the bound is served")


def ok(ck, c, name, args, what):
    """a tool call that must succeed: its structuredContent (None when it failed)"""
    res, sc = c.call(name, args)
    if not ck(not res.get("isError") and isinstance(sc, dict),
              "%s %s: answered" % (name, what)):
        print("   ", text_of(res)[:400])
        return None
    return sc


def refused(ck, c, name, args, word, what):
    res, _ = c.call(name, args)
    ck(res.get("isError") is True and word in text_of(res),
       "%s %s: refused, saying '%s' (%s)" % (name, what, word,
                                            " | ".join(text_of(res).split("\n"))[:200]))


def headline(ck, c, gpuio, a):
    ref = report(gpuio, a)
    ck(len(ref["loops"]) >= 1, "the traced DataLoader capture has a loop in its report")
    h = ok(ck, c, "report_headline", {"path": a}, "a.gpuio")
    if not h:
        return
    ck(h["capture"] == a, "report_headline: the capture's real path")
    ck(h["headlines"] == ref["headlines"] and h["warnings"] == ref["warnings"],
       "report_headline: the report's headlines and warnings (%d)" % len(ref["headlines"]))
    ck(h.get("loop_headline") == ref["wait"]["headline"], "report_headline: the loop's verdict")
    ck(h["loops_found"] == len(ref["loops"]), "report_headline: %d loop(s)" % len(ref["loops"]))
    ck([(x["kind"], x["text"]) for x in h["recommendations"]] ==
       [(x["kind"], x["text"]) for x in ref["recommendations"]],
       "report_headline: the recommendations")
    ck(h["files_total"] == ref["files_total"] and
       h["duration_us"] == ref["summary"]["duration_us"] and
       h["complete"] == ref["summary"]["complete"], "report_headline: files, duration, complete")


def loops(ck, c, gpuio, a):
    ref = report(gpuio, a)["loops"]
    L = ok(ck, c, "report_loops", {"path": "job/a.gpuio"}, "job/a.gpuio (relative)")
    if not L:
        return
    ck(L["capture"] == a, "report_loops: a relative path taken in the allowed directory")
    ck(L["loops_found"] == len(ref) and len(L["loops"]) == min(16, len(ref)),
       "report_loops: %d loop(s)" % len(ref))
    for i, (m, t) in enumerate(zip(L["loops"], ref)):
        same = all(m.get(k) == t.get(k) for k in
                   ("pid", "tid", "thread", "headline", "loop_us", "next",
                    "waiting_for_data_us", "found_by", "data_files"))
        ck(same, "report_loops: loop %d: pid, tid, time by state and cause (loop_us), "
           "its next() site" % i)
        ck(m.get("blocked_in") == t["blocked_in"][:10] and
           m.get("fetch_sites") == t["fetch_sites"][:10] and
           m.get("cpu_by_function") == t["cpu_by_function"][:10],
           "report_loops: loop %d: what it slept in, its producers' call sites" % i)
        ck(m["steps_total"] == len(t["steps"]) and m["steps"] == t["steps"][:20],
           "report_loops: loop %d: %d steps, the first 20" % (i, len(t["steps"])))
        ck(len(t["steps"]) <= 20 or any("steps" in n for n in L.get("truncated", [])),
           "report_loops: cut steps are said")
    L0 = ok(ck, c, "report_loops", {"path": a, "steps": 0}, "steps 0")
    L3 = ok(ck, c, "report_loops", {"path": a, "steps": 3}, "steps 3")
    if L0 and L3:
        ck("steps" not in L0["loops"][0] and "steps_total" in L0["loops"][0],
           "report_loops steps 0: no steps, their count")
        ck(L3["loops"][0]["steps"] == ref[0]["steps"][:3], "report_loops steps 3: the first 3")


def files(ck, c, gpuio, a):
    for limit in (5, None):
        ref = report(gpuio, *(["--files", str(limit)] if limit else []), a)
        F = ok(ck, c, "report_files", {"path": a, **({"limit": limit} if limit else {})},
               "limit %s" % limit)
        if not F:
            continue
        ck(F["files_total"] == ref["files_total"] and F["files_listed"] == len(ref["files"]) and
           len(F["files"]) == len(ref["files"]),
           "report_files limit %s: %d of %d files, as report --files" %
           (limit, len(ref["files"]), ref["files_total"]))
        ck([(f["path"], f["role"], f["read_bytes"], f["read_ops"]) for f in F["files"]] ==
           [(f["path"], f["role"], f["read_bytes"], f["read_ops"]) for f in ref["files"]],
           "report_files limit %s: the same files in the same order, bytes and calls" % limit)
        ck(F["roles"] == ref["roles"], "report_files: bytes by role")


def gpu_gaps(ck, c, gpuio, a, g):
    G = ok(ck, c, "report_gpu_gaps", {"path": a}, "a capture without GPU records")
    if G:
        ck(G["present"] is False and G["largest_gaps"] == [] and "no GPU" in G.get("note", ""),
           "report_gpu_gaps: no GPU records -> empty, with a note")
    ref = report(gpuio, g)["gpu"]
    ck(len(ref["largest_gaps"]) >= 2, "report_gen gpu-idle: the report has gaps")
    G = ok(ck, c, "report_gpu_gaps", {"path": g}, "gpu-idle")
    if G:
        ck(G["present"] is True and "note" not in G, "report_gpu_gaps: GPU records present")
        ck(G["largest_gaps"] == ref["largest_gaps"][:20] and
           G["largest_gaps_total"] == len(ref["largest_gaps"]),
           "report_gpu_gaps: the report's %d largest gaps" % len(ref["largest_gaps"]))
        ck(G["idle_by_cause_us"] == ref["idle_by_cause_us"] and G["busy_us"] == ref["busy_us"] and
           G["idle_us"] == ref["idle_us"], "report_gpu_gaps: busy, idle and idle by cause")
    G = ok(ck, c, "report_gpu_gaps", {"path": g, "limit": 1}, "limit 1")
    if G:
        ck(G["largest_gaps"] == ref["largest_gaps"][:1] and
           any("largest_gaps" in n for n in G.get("truncated", [])),
           "report_gpu_gaps limit 1: one gap, the cut said")


def hosts(ck, c, gpuio, a, b):
    ref = json.loads(subprocess.run([gpuio, "report", "--hosts", "--json", a, b],
                                    stdout=subprocess.PIPE, check=True).stdout)["across_hosts"]
    ck(isinstance(ref["straggler"], dict), "report --hosts names a straggler")
    H = ok(ck, c, "hosts_straggler", {"paths": [a, b]}, "paths [a, b]")
    if H:
        ck(H["straggler"] == ref["straggler"], "hosts_straggler: the straggler %s (%s), cause %s" %
           (ref["straggler"]["label"], ref["straggler"]["capture"], ref["straggler"]["cause"]))
        ck(H["hosts"] == ref["hosts"], "hosts_straggler: every host's loops, as the report")
        ck(H["captures"] == [a, b] and len(H["reports"]) == 2, "hosts_straggler: the captures")
    H = ok(ck, c, "hosts_straggler", {"dir": os.path.dirname(a)}, "dir job/")
    if H:
        ck(H["straggler"] == ref["straggler"] and H["captures"] == [a, b],
           "hosts_straggler dir: its two captures, the same straggler")


def paths(ck, c, allow, a, outside, sibling):
    """the allowed-directory check: realpath, component-wise, symlinks, .."""
    rel_out = os.path.relpath(outside, allow)
    for p, what in ((outside, "an absolute path outside"),
                    (allow + "/../" + os.path.relpath(outside, os.path.dirname(allow)),
                     "ALLOW/../ out of it"),
                    (rel_out, "a relative path with .. out of it"),
                    (allow + "/escape.gpuio", "a symlink in it pointing out"),
                    (sibling, "a directory whose name starts with ALLOW's"),
                    ("/nonexistent-gpuio-dir/x.gpuio", "a path outside that does not exist")):
        refused(ck, c, "report_headline", {"path": p}, "outside the allowed directories", what)
    refused(ck, c, "hosts_straggler", {"dir": allow}, "outside the allowed directories",
            "a directory holding a symlink out")
    refused(ck, c, "hosts_straggler", {"paths": [a, outside]}, "outside the allowed directories",
            "one path of several outside")
    refused(ck, c, "list_captures", {"dir": os.path.dirname(outside)},
            "outside the allowed directories", "a directory outside")
    refused(ck, c, "report_headline", {"path": allow + "/nope.gpuio"}, "No such file",
            "a missing file inside")
    refused(ck, c, "report_headline", {"path": allow + "/job"}, "directory", "a directory")
    refused(ck, c, "report_headline", {"path": allow + "/junk.gpuio"}, "gpuio report failed",
            "a file that is not a capture")
    refused(ck, c, "report_headline", {"path": ""}, "empty", "an empty path")
    h = ok(ck, c, "report_headline", {"path": allow + "/link.gpuio"}, "a symlink inside to inside")
    if h:
        ck(h["capture"] == a, "a symlink inside is read as its target")


def listing(ck, c, allow, expect):
    """list_captures: what t_mcp.sh put there, sizes and mtimes as stat says"""
    L = ok(ck, c, "list_captures", {}, "all directories")
    if not L:
        return
    # a name's bad bytes come back as U+FFFD: stat the name as it is on disk
    disk = {os.fsencode(p).decode("utf-8", "replace"): p for p in expect}
    got = {x["path"]: x for x in L["captures"]}
    ck(L["directories"] == [allow] and sorted(got) == sorted(disk),
       "list_captures: %d files, the escaping symlink and the dump in the making left out"
       " (%s)" % (len(expect), sorted(set(got) ^ set(disk))))
    for p, x in got.items():
        st = os.stat(disk.get(p, p))
        ck(x["size_bytes"] == st.st_size and x["mtime"] == int(st.st_mtime) and
           x["kind"] == ("dump" if "gpuio-dump-" in p else "capture"),
           "list_captures: %s size, mtime, kind" % ascii(os.path.basename(p))[:40])
    J = ok(ck, c, "list_captures", {"dir": "job"}, "dir job")
    if J:
        ck(sorted(x["path"] for x in J["captures"]) == sorted(
            p for p in disk if "/job/" in p), "list_captures dir job: its two captures")


def json_path(b):
    """bytes as a JSON string's inside, invalid UTF-8 left raw (what a careless client sends)"""
    out = b""
    for ch in b:
        if ch in (0x22, 0x5C):
            out += b"\\" + bytes([ch])
        elif ch < 0x20:
            out += b"\\u%04x" % ch
        else:
            out += bytes([ch])
    return out


def hostile(ck, c, gpuio, hpath):
    """hostile bytes in the capture's name and in the names the report holds"""
    ref = json.loads(subprocess.run([gpuio, "report", "--json", "--files", "200", hpath],
                                    stdout=subprocess.PIPE, check=True).stdout)
    res, F = c.call("report_files", raw_args=b'{"path":"' + json_path(hpath) + b'","limit":200}')
    if not ck(not res.get("isError"), "report_files on a hostile file name: answered"):
        print("   ", text_of(res)[:300])
        return
    ck(F["capture"] == hpath.decode("utf-8", "replace"),
       "report_files: the hostile name comes back as valid JSON, U+FFFD for bad bytes")
    ck([f["path"] for f in F["files"]] == [f["path"] for f in ref["files"]] and
       len(F["files"]) >= 1, "report_files: %d hostile paths, as the report has them" %
       len(ref["files"]))


def tp_rows(tp, views, trace, query, tmp):
    """trace_processor_shell run by hand: the last result's rows, CSV strings"""
    import csv
    q = os.path.join(tmp, "hand.sql")
    with open(q, "w") as f:
        f.write(open(views).read() + "\n" + query + ";\n")
    out = subprocess.run([tp, "-q", q, trace], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, check=True).stdout.decode()
    rows = list(csv.reader(out.strip().split("\n")))
    return rows[1:]


def sql(ck, c, gpuio, tp, views, a, dump, tmp):
    export = os.path.join(tmp, "hand.pftrace")
    subprocess.run([gpuio, "convert", "-q", a, "-o", export], check=True)
    q1 = "SELECT count(*) AS n FROM gpuio_file_calls"
    hand = int(tp_rows(tp, views, export, q1, tmp)[0][0])
    S = ok(ck, c, "sql_query", {"path": a, "query": q1}, "count of gpuio_file_calls")
    if S:
        ck(S["columns"] == ["n"] and S["rows"] == [[hand]] and hand > 0 and S["views"] is True,
           "sql_query: %d file calls, as trace_processor_shell says by hand" % hand)
    q2 = ("SELECT path, count(*) AS calls, sum(bytes) AS bytes FROM gpuio_file_calls "
          "GROUP BY path ORDER BY calls DESC, path LIMIT 5")
    hand = [[p, int(n), int(b) if b else None] for p, n, b in tp_rows(tp, views, export, q2, tmp)]
    S = ok(ck, c, "sql_query", {"path": a, "query": q2 + ";  -- top files"}, "top files")
    if S:
        ck(S["rows"] == hand and len(hand) == 5, "sql_query: the top 5 files by calls, by hand")
    S = ok(ck, c, "sql_query", {"path": dump, "query": q1}, "a dump's .pftrace")
    if S:
        ck(S["trace"] == dump and S["rows"][0][0] > 0, "sql_query: a dump is read as it is")
    q3 = ("SELECT 'a\"b' || char(10) || 'c' || char(1) AS s, X'00ff' AS b, NULL AS n, "
          "1.5 AS f, ';é' AS \"we\"\"ird\"")
    S = ok(ck, c, "sql_query", {"path": a, "query": q3}, "hostile values")
    if S:
        ck(S["columns"] == ["s", "b", "n", "f", 'we"ird'] and
           S["rows"] == [['a"b\nc\x01', "<blob of 2 bytes>", None, 1.5, ";é"]],
           "sql_query: quotes, newlines, control bytes, a blob, NULL, a quoted column name")
    S = ok(ck, c, "sql_query", {"path": a, "query": "SELECT id FROM slice ORDER BY id",
                                "max_rows": 3}, "max_rows 3")
    if S:
        ck(len(S["rows"]) == 3 and S["row_count"] == 3 and S["more_rows"] is True,
           "sql_query max_rows 3: 3 rows, more said")
    for q, word, what in (("SELECT * FROM no_such_table", "no such table", "an unknown table"),
                          ("SELECT 1; SELECT 2", "more than one statement", "two statements"),
                          ("  ;", "empty", "an empty query"),
                          ("SELECT 'open", "unterminated", "an open string")):
        refused(ck, c, "sql_query", {"path": a, "query": q}, word, what)


def conversation(gpuio, allow, outside, sibling, hpath, tp, pass_tp, views, tmp, *expect):
    """t_mcp.sh: the whole conversation with one server. TP: trace_processor_shell ("":
    none), given with --trace-processor when PASS_TP is 1 (else the server finds it
    itself); EXPECT: what list_captures lists"""
    ck = Checks("mcp: ")
    a, b = os.path.join(allow, "job/a.gpuio"), os.path.join(allow, "job/b.gpuio")
    env = dict(os.environ, TMPDIR=os.path.join(tmp, "srv"))
    os.makedirs(env["TMPDIR"], exist_ok=True)
    cmd = [gpuio, "mcp", "--allow", allow] + (["--trace-processor", tp] if pass_tp == "1" else [])
    c = Client(cmd, os.path.join(tmp, "mcp.err"), env)
    try:
        protocol(ck, c, gpuio)
        errors(ck, c)
        oversized(ck, c)
        listing(ck, c, allow, list(expect))
        headline(ck, c, gpuio, a)
        loops(ck, c, gpuio, a)
        files(ck, c, gpuio, a)
        gpu_gaps(ck, c, gpuio, a, os.path.join(allow, "gpu.gpuio"))
        hosts(ck, c, gpuio, a, b)
        paths(ck, c, allow, a, outside, sibling)
        hostile(ck, c, gpuio, os.fsencode(hpath))
        dump = [p for p in expect if "gpuio-dump-" in p][0]
        if tp:
            sql(ck, c, gpuio, tp, views, a, dump, tmp)
        else:
            res, _ = c.call("sql_query", {"path": a, "query": "SELECT 1"})
            ck(res.get("isError") is True and "unavailable" in text_of(res),
               "sql_query without trace_processor_shell: isError, unavailable")
            print("note: trace_processor_shell not found: sql_query's answers not checked")
        ck(c.request("ping")["result"] == {}, "the server survived all of it")
    finally:
        rc, rest = c.close()
    ck(rc == 0 and rest == b"", "end of stdin: exit 0, nothing more written (rc %s)" % rc)
    ck(os.listdir(env["TMPDIR"]) == [], "its temporary directory removed")
    return ck.status()


def unavailable(gpuio_copy, allow, tmp):
    """a gpuio outside its source tree, no trace_processor_shell on PATH: sql_query says
    it is unavailable; the report tools still work (the child is the same binary)"""
    ck = Checks("mcp (no trace processor): ")
    env = dict(os.environ, PATH="/usr/bin:/bin", TMPDIR=tmp)
    c = Client([gpuio_copy, "mcp", "--allow", allow], os.path.join(tmp, "mcp2.err"), env)
    try:
        c.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}})
        res, _ = c.call("sql_query", {"path": "job/a.gpuio", "query": "SELECT 1"})
        ck(res.get("isError") is True and "unavailable" in text_of(res) and
           "--trace-processor" in text_of(res), "sql_query: unavailable, --trace-processor said")
        ok(ck, c, "report_headline", {"path": "job/a.gpuio"}, "from a copied binary")
    finally:
        rc, _ = c.close()
    ck(rc == 0, "exit 0")
    return ck.status()
