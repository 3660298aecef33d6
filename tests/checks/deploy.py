"""The deployment files in scripts/deploy/ against what a live `gpuio monitor`
serves and accepts: the Kubernetes manifests (t_deploy_k8s), the Prometheus
rules and the Grafana dashboard (t_deploy_metrics). The PromQL name
extraction (promql_names) is unit-tested."""
import json
import os
import re
import shlex
import sys


def promql_unquote(e):
    """E with every string literal emptied: label values are not names"""
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', e)


def promql_names(e):
    """metric names in PromQL: gpuio_… identifiers and recording-rule names (with a colon)"""
    return {n for n in re.findall(r"(?<![\w:])([a-zA-Z_:][\w:]*)", promql_unquote(e))
            if n.startswith("gpuio_") or (":" in n and n.split(":")[1].startswith("gpuio_"))}


def k8s_manifests(daemonset, netpol, helpf, tmp, port):
    """t_deploy_k8s: the DaemonSet says what the monitor needs (privileged,
    hostPID, the mounts BPF needs, port 9477 named metrics, probes, scrape
    annotations), its args are options `gpuio monitor --help` (HELPF) lists,
    the NetworkPolicy opens only TCP 9477 to its pods. Prints the pod's
    command with this test's paths (TMP) and PORT."""
    import yaml
    with open(daemonset) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    with open(helpf) as f:
        help_text = f.read()
    kinds = {d["kind"]: d for d in docs}
    assert {"Namespace", "ServiceAccount", "DaemonSet"} <= set(kinds), kinds.keys()
    ds = kinds["DaemonSet"]
    pod = ds["spec"]["template"]["spec"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert ds["spec"]["selector"]["matchLabels"].items() <= labels.items(), "selector does not match the pods"
    assert pod["hostPID"] is True, "hostPID"
    assert pod.get("hostNetwork") is not True, "hostNetwork would bypass the NetworkPolicy"
    c = pod["containers"][0]
    assert c["securityContext"]["privileged"] is True, "privileged"
    ports = {p["name"]: p for p in c["ports"]}
    assert ports["metrics"]["containerPort"] == 9477 and ports["metrics"]["protocol"] == "TCP", ports
    for probe in ("readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"] == {"path": "/metrics", "port": "metrics"}, (probe, c[probe])
    ann = ds["spec"]["template"]["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and ann["prometheus.io/port"] == "9477", ann
    vols = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    need = {"/sys/fs/bpf": False, "/sys/kernel/tracing": False, "/sys/kernel/debug": False,
            "/sys/fs/cgroup": True, "/sys/kernel/btf": True, "/lib/modules": True}
    for path, ro in need.items():
        m = mounts.get(path)
        assert m, f"no mount of {path}"
        assert bool(m.get("readOnly")) == ro, (path, m)
        assert vols[m["name"]]["hostPath"]["path"] == path, (path, vols[m["name"]])
    dump = mounts["/var/lib/gpuio/dumps"]
    assert vols[dump["name"]]["hostPath"]["path"] == "/var/lib/gpuio/dumps"
    assert c["command"][-1] == "monitor" and c["command"][0].endswith("/gpuio"), c["command"]
    args = c["args"]
    for a in args:
        opt = a.split("=", 1)[0]
        assert re.search(r"(^|\s)" + re.escape(opt) + r"\b", help_text), f"{opt} is not a gpuio monitor option"
    assert "--listen=0.0.0.0:9477" in args, args
    # the webhook: its port named, its token from a Secret no other user reads
    assert "--alert-listen=0.0.0.0:9478" in args, args
    assert ports["alerts"]["containerPort"] == 9478 and ports["alerts"]["protocol"] == "TCP", ports
    tok = [a.split("=", 1)[1] for a in args if a.startswith("--alert-token-file=")]
    assert tok, "--alert-token-file missing"
    m = mounts.get(os.path.dirname(tok[0]))
    assert m and m.get("readOnly") and "secret" in vols[m["name"]], (tok, m)
    assert vols[m["name"]]["secret"].get("defaultMode", 0o644) & 0o077 == 0, vols[m["name"]]
    # the NetworkPolicy: these pods; TCP 9477 from Prometheus, 9478 from Alertmanager
    with open(netpol) as f:
        np = yaml.safe_load(f)
    assert np["kind"] == "NetworkPolicy" and np["metadata"]["namespace"] == ds["metadata"]["namespace"]
    assert np["spec"]["podSelector"]["matchLabels"].items() <= labels.items(), "policy does not select the pods"
    assert np["spec"]["policyTypes"] == ["Ingress"]
    rules = np["spec"]["ingress"]
    assert sorted(str(r["ports"]) for r in rules) == sorted([str([{"protocol": "TCP", "port": 9477}]),
                                                            str([{"protocol": "TCP", "port": 9478}])]), rules
    assert all(r["from"] for r in rules), rules
    by_port = {r["ports"][0]["port"]: r["from"][0]["podSelector"]["matchLabels"] for r in rules}
    assert by_port[9477] == {"app.kubernetes.io/name": "prometheus"}, by_port
    assert by_port[9478] == {"app.kubernetes.io/name": "alertmanager"}, by_port
    # the pod's command, with this test's paths and loopback ports
    local = {"--listen": f"127.0.0.1:{port}", "--run-dir": f"{tmp}/run", "--dump-dir": f"{tmp}/dumps",
             "--alert-listen": f"127.0.0.1:{int(port) + 100}", "--alert-token-file": f"{tmp}/token"}
    out = ["monitor"] + [a.split("=", 1)[0] + "=" + local[a.split("=", 1)[0]] if a.split("=", 1)[0] in local else a
                         for a in args]
    print(shlex.join(out))


def rules_vs_metrics(main_txt, rec_txt, rules_f, dash_f, dash_rules_f):
    """t_deploy_metrics: every metric family and label the Prometheus rules
    (RULES_F) and the Grafana dashboard (DASH_F) query is on the live pages
    (MAIN_TXT; the recorder's families from REC_TXT), I/O families with
    samples; the dashboard's PromQL, its variables filled in, written to
    DASH_RULES_F for promtool to parse"""
    import yaml

    # labels Prometheus itself puts on scraped series: never on /metrics
    TARGET_LABELS = {"instance", "job", "__name__"}
    # families that must have samples, not only a # TYPE line: the I/O this test did
    NEED_SAMPLES = re.compile(r"gpuio_(cgroup|process|device)_(vfs|pagecache|block|bytes|ops|service|queue|writeback|dirtied)"
                              r"|gpuio_(process_)?(thread|loop)_")
    # what the brief asks the rules and panels to show: guards the extractor itself
    MUST_REFERENCE = {"gpuio_cgroup_vfs_bytes_total", "gpuio_cgroup_vfs_latency_seconds",
                      "gpuio_cgroup_pagecache_read_bytes_total", "gpuio_cgroup_pagecache_miss_bytes_total",
                      "gpuio_device_bytes_total", "gpuio_device_service_seconds",
                      "gpuio_gpu_process_sm_utilization_ratio", "gpuio_gpu_process_memory_bytes",
                      "gpuio_cgroup_cuda_calls_total", "gpuio_monitor_map_full_total",
                      "gpuio_monitor_map_evictions_total", "gpuio_recorder_lost_total",
                      "gpuio_thread_seconds_total", "gpuio_loop_wait_seconds_total", "gpuio_loop_seconds_total"}
    bad = []

    def load(txt):
        """family -> TYPE, family -> [label dict of each sample] (_bucket/_sum/_count folded in)."""
        types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", open(txt).read(), re.M))
        series = {f: [] for f in types}
        for key in json.load(open(txt + ".json")):        # prom_parse's strict parse
            name, lab = key.split("{", 1)
            fam = next((name[:-len(s)] for s in ("_bucket", "_sum", "_count")
                        if name.endswith(s) and types.get(name[:-len(s)]) == "histogram"), name)
            series[fam].append(dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', lab)))
        return types, series

    types, series = load(main_txt)
    rtypes, rseries = load(rec_txt)                       # --window 5s: the recorder's families
    for f in rtypes:
        if f.startswith("gpuio_recorder_"):
            types[f], series[f] = rtypes[f], rseries[f]

    # every expression: (where, PromQL, labels its annotations print)
    rules = yaml.safe_load(open(rules_f))
    recorded, exprs = {}, []
    for g in rules["groups"]:
        for r in g["rules"]:
            if "record" in r:
                recorded[r["record"]] = r["expr"]
            exprs.append(("rule " + r.get("record", r.get("alert", "?")), r["expr"],
                          re.findall(r"\$labels\.(\w+)", json.dumps(r.get("annotations", {})))))
    dash = json.load(open(dash_f))
    tl = dash["templating"]["list"]
    if not any(v["type"] == "datasource" and v.get("query") == "prometheus" for v in tl):
        bad.append("dashboard: no datasource variable of type prometheus")
    def walk(panels):
        for p in panels:
            yield p
            yield from walk(p.get("panels", []))
    for p in walk(dash["panels"]):
        if p["type"] == "row":
            continue
        if not p.get("targets"):
            bad.append(f"panel '{p['title']}': no targets")
        for t in p.get("targets", []):
            if t.get("datasource", p.get("datasource", {})).get("uid") != "${datasource}":
                bad.append(f"panel '{p['title']}' {t['refId']}: datasource is not ${{datasource}}")
            exprs.append((f"panel '{p['title']}' {t['refId']}", t["expr"], []))
    for v in tl:
        if v["type"] == "query":
            exprs.append((f"variable ${v['name']}", v["query"]["query"] if isinstance(v["query"], dict) else v["query"], []))
    # the panels' PromQL, Grafana's variables filled in, as recording rules for
    # `promtool check rules` to parse (label_values(SELECTOR, l): the selector)
    dash_promql = [re.sub(r"\$\{?\w+\}?", ".*", re.sub(r"\$__rate_interval", "1m",
                   re.sub(r"^label_values\((.*),\s*\w+\s*\)$", r"\1", e)))
                   for where, e, _ in exprs if not where.startswith("rule ")]
    with open(dash_rules_f, "w") as out:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:expr_{i}", "expr": e} for i, e in enumerate(dash_promql)]}]}, out)

    def fam_of(name):
        """a sample name in PromQL -> its family on the page (x_bucket -> x for histograms)"""
        for s in ("_bucket", "_sum", "_count"):
            if name.endswith(s) and types.get(name[:-len(s)]) == "histogram":
                return name[:-len(s)]
        return name

    def sources(name, where):
        """the monitor's families a metric name reads: itself, or what a recording rule reads"""
        if ":" in name:                                    # job:…, instance:…: made by the rules
            if name not in recorded:
                bad.append(f"{where}: {name} is no recording rule of {rules_f}")
                return set()
            return set().union(*[sources(n, where) for n in promql_names(recorded[name])])
        return {fam_of(name)}

    used, label_uses = {}, []     # family -> [where]; (where, label, families)
    for where, e, ann in exprs:
        q = promql_unquote(e)
        fams = set().union(*[sources(n, where) for n in promql_names(e)]) if promql_names(e) else set()
        for f in fams:
            used.setdefault(f, []).append(where)
        # by/on/…(labels): any family of the expression; {label=…} and label_values(m, label): that metric's
        for m in re.finditer(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", q):
            label_uses += [(where, l.strip(), fams) for l in m.group(1).split(",") if l.strip()]
        label_uses += [(where, l, fams) for l in ann]
        for m in re.finditer(r"([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}", q):
            if m.group(1) in promql_names(e):
                label_uses += [(where, l, sources(m.group(1), where))
                               for l in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", m.group(2))]
        for m in re.finditer(r"label_values\(\s*([\w:]+)\s*(?:\{[^}]*\})?\s*,\s*(\w+)\s*\)", q):
            label_uses.append((where, m.group(2), sources(m.group(1), where)))

    for f in sorted(MUST_REFERENCE - set(used)):
        bad.append(f"{f} is not queried by any rule or panel")
    for f, where in sorted(used.items()):
        if f not in types:
            bad.append(f"{f} is not on /metrics (queried by {', '.join(sorted(set(where)))})")
        elif NEED_SAMPLES.match(f) and not series[f]:
            bad.append(f"{f} has no samples on /metrics after the I/O (queried by {where[0]})")
        else:
            print(f"ok   {f}: {len(series[f]) or '# TYPE only, no'} samples, queried {len(where)}x")
    for where, l, fams in label_uses:
        fams = fams & set(types)                           # an absent family is reported above
        if l in TARGET_LABELS or not fams:
            continue
        if not any(l in s for f in fams for s in series[f]):
            bad.append(f"{where}: label {l} is on no series of {', '.join(sorted(fams))}")
    for b in dict.fromkeys(bad):                           # each once, in order
        print("FAIL", b)
    print(f"{len(exprs)} expressions, {len(used)} families, {len({l for _, l, _ in label_uses})} labels checked")
    sys.exit(1 if bad else 0)

