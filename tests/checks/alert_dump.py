"""Checks of tests/t_alert_dump.sh: Alertmanager's webhook and its dumps."""
import datetime
import json
import re
import urllib.error
import urllib.request


def _ns(rfc3339):
    """Alertmanager's startsAt ("2026-11-28T13:05:10.123456789Z") -> ns since the epoch."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", rfc3339)
    assert m, rfc3339
    tz = datetime.timezone.utc if m.group(3) == "Z" else datetime.datetime.strptime(m.group(3), "%z").tzinfo
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=tz)
    frac = (m.group(2) or "0")[:9].ljust(9, "0")
    return int(t.timestamp()) * 10**9 + int(frac)


def _job_alerts(alerts_f, job):
    with open(alerts_f) as f:
        alerts = json.load(f)
    return [a for a in alerts if a["labels"].get("slurm_job") == job]


def line_up(alerts_f, job, span_s, *infos):
    """Each dump's window is [startsAt - SPAN, startsAt], startsAt the
    earliest of job JOB's alerts as Alertmanager's API gives it; and it
    holds events of the job (sched, vfs records)."""
    mine = _job_alerts(alerts_f, job)
    if not mine:
        print(f"FAIL: Alertmanager holds no GpuioJobStarvingOnData alert for slurm_job={job}")
        return 1
    t = min(_ns(a["startsAt"]) for a in mine)
    span = int(span_s) * 10**9
    bad = 0
    for f in infos:
        with open(f) as fh:
            i = json.load(fh)
        d_anchor = i["realtime_ns"] - (t - span)
        d_len = (i["last_ts_ns"] - i["first_ts_ns"]) - span
        print(f"{i['hostname']}: anchor {i['realtime_utc']} = startsAt - {span_s}s {d_anchor / 1e3:+.1f} us; "
              f"window {(i['last_ts_ns'] - i['first_ts_ns']) / 1e9:.6f} s; "
              f"sched {i['record_counts']['sched']}, vfs {i['record_counts']['vfs']}; {i['target']}")
        # the two clocks are read together to the microsecond (lib/clock.c);
        # 2 ms leaves room for a monitor's own anchor read
        if abs(d_anchor) > 2_000_000:
            print(f"FAIL: {i['hostname']}: the window starts {d_anchor / 1e6:+.3f} ms off startsAt - span")
            bad += 1
        if abs(d_len) > 1_000_000:
            print(f"FAIL: {i['hostname']}: the window is {d_len / 1e6:+.3f} ms off {span_s} s")
            bad += 1
        if i["record_counts"]["sched"] < 100 or i["record_counts"]["vfs"] < 10:
            print(f"FAIL: {i['hostname']}: the dump holds too few events")
            bad += 1
        if f"slurm_job={job}" not in i["target"] or "GpuioJobStarvingOnData" not in i["target"]:
            print(f"FAIL: {i['hostname']}: the capture does not say its alert and job: {i['target']}")
            bad += 1
    if sorted(json.load(open(f))["hostname"] for f in infos) != ["n1", "n2"]:
        print("FAIL: the dumps are not n1's and n2's")
        bad += 1
    return 1 if bad else 0


def straggler(hosts_f, pid):
    """report --hosts over the dumps: both nodes, a straggler that is a
    thread of the starving program's process (PID), waiting for data."""
    with open(hosts_f) as f:
        a = json.load(f)["across_hosts"]
    prog = {"pid": int(pid)}
    names = sorted(h["hostname"] for h in a["hosts"])
    s = a["straggler"]
    print(f"hosts {names}; straggler {s}")
    bad = 0
    if names != ["n1", "n2"]:
        print(f"FAIL: report --hosts saw {names}, not n1 and n2")
        bad += 1
    if not s or s.get("pid") != prog["pid"] or s.get("tid") != prog["pid"]:
        # the program's loop is its main thread: it waits there for the
        # workers' batches (its queue-feeder thread only relays indexes)
        print(f"FAIL: the straggler is not the program's main thread (pid = tid = {prog['pid']})")
        bad += 1
    elif s["cause"] != "waiting_for_data" or s["waited_pct"] < 50:
        print(f"FAIL: the straggler's cause is {s['cause']} ({s['waited_pct']}%), not waiting for data")
        bad += 1
    return 1 if bad else 0


def _post(url, body, token=None, method="POST"):
    req = urllib.request.Request(url, data=body, method=method)
    if token is not None:
        req.add_header("Authorization", "Bearer " + token)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _notification(alerts, status="firing"):
    return json.dumps({"version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0, "status": status,
                       "receiver": "gpuio-nodes", "groupLabels": {}, "commonLabels": {},
                       "commonAnnotations": {}, "externalURL": "http://alertmanager",
                       "alerts": alerts}).encode()


def bad_requests(base, token, job, alerts_f, rate):
    """Each bad request gets its status; writes ALERTS_F.other (an alert for a
    job not on the node) for the HTTPS check."""
    mine = _job_alerts(alerts_f, job)
    real = [{"status": "firing", "labels": a["labels"], "annotations": a.get("annotations", {}),
             "startsAt": a["startsAt"], "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "",
             "fingerprint": a["fingerprint"]} for a in mine]
    other = [dict(real[0], labels=dict(real[0]["labels"], slurm_job=str(int(job) + 1)))]
    with open(alerts_f + ".other", "wb") as f:
        f.write(_notification(other))
    url = base + "/alert"
    cases = [
        ("no token", lambda: _post(url, _notification(real)), 401),
        ("wrong token", lambda: _post(url, _notification(real), token[:-1] + "x"), 401),
        ("token of another length", lambda: _post(url, _notification(real), token + "x"), 401),
        ("oversized", lambda: _post(url, b"[" + b" " * 300000 + b"]", token), 413),
        ("malformed", lambda: _post(url, b'{"version":"4","alerts":[{', token), 400),
        ("not a notification", lambda: _post(url, b'{"hello":1}', token), 400),
        ("a job not on the node", lambda: _post(url, _notification(other), token), 422),
        ("an alert naming no job", lambda: _post(url, _notification(
            [dict(real[0], labels={"alertname": "GpuioJobStarvingOnData"})]), token), 422),
        ("GET", lambda: _post(url, None, token, "GET"), 405),
        ("wrong path", lambda: _post(base + "/metrics", _notification(real), token), 404),
        # the same alert again: no second dump, the first one named
        ("a repeat", lambda: _post(url, _notification(real), token), 200),
        # past what one notification is read for: 70 alerts, 63 other jobs
        # among the 64 read (16 jobs grouped): said in the answer, counted
        ("too many", lambda: _post(url, _notification(real[:1] + [
            dict(real[0], labels=dict(real[0]["labels"], slurm_job=str(int(job) + 1000 + i)))
            for i in range(69)]), token), 200),
    ]
    bad = 0
    for name, call, want in cases:
        code, body = call()
        ok = code == want and (want != 200 or '"already":true' in body)
        if name == "too many":
            ok = ok and '"left_out":{"alerts":6,"jobs":48}' in body
        print(f"{'ok' if ok else 'FAIL:'} {name}: {code} {body.strip()[:160]}")
        bad += not ok
    # a flood: past --alert-rate authenticated requests a minute, 429
    codes = [_post(url, _notification(real, "resolved"), token)[0] for _ in range(int(rate) + 5)]
    print(f"flood of {len(codes)}: {sorted(set(codes))}, 429 x {codes.count(429)}")
    if codes.count(429) < 5 or set(codes) - {200, 429}:
        print("FAIL: the flood was not cut at --alert-rate")
        bad += 1
    return 1 if bad else 0


def _next_site(src):
    """The line of SRC that calls next(...) on the DataLoader's iterator, and
    the qualified name of the function around it (as CPython 3.11 names a
    frame: outer.<locals>.inner)."""
    import ast

    def walk(node, qual):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = (qual + ("." if isinstance(node, ast.ClassDef) else ".<locals>.") if qual else "") + ch.name
                hit = walk(ch, name)
            else:
                hit = None
                if (isinstance(ch, ast.Call) and isinstance(ch.func, ast.Name) and ch.func.id == "next"
                        and ch.args and isinstance(ch.args[0], ast.Subscript) and qual):
                    hit = (ch.lineno, qual)
                hit = hit or walk(ch, qual)
            if hit:
                return hit
        return None

    hit = walk(ast.parse(open(src).read()), "")
    assert hit, "no next(...) call in " + src
    return hit


def where(report_f, pid, src):
    """The follow-up trace's report: the loop is the program's main thread
    (PID), waiting for data in next(), called at SRC's line that calls it."""
    with open(report_f) as f:
        rep = json.load(f)
    loops = rep.get("loops") or []
    lp = loops[0] if loops else {}
    nx = lp.get("next") or {}
    line, func = _next_site(src)
    want = "%s:%d %s" % (src, line, func)
    print(f"loop pid {lp.get('pid')} tid {lp.get('tid')}: {lp.get('headline')}")
    print(f"its next(): {nx.get('site')} (the source: {want}); waiting for data from "
          f"{lp.get('waiting_for_data_from')}, {lp.get('waiting_for_data_pct')}%")
    bad = 0
    if lp.get("pid") != int(pid) or lp.get("tid") != int(pid):
        print(f"FAIL: the loop is not the program's main thread ({pid})")
        bad += 1
    if nx.get("site") != want:
        print(f"FAIL: next() is called at {want}, the report says {nx.get('site')}")
        bad += 1
    if (lp.get("waiting_for_data_pct") or 0) < 50:
        print("FAIL: the traced loop did not wait for data most of its time")
        bad += 1
    return 1 if bad else 0
