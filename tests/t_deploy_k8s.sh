#!/usr/bin/env bash
# t_deploy_k8s: the Kubernetes manifests in scripts/deploy/k8s/ say what the
# monitor needs (no cluster here, so they are checked as documents and the
# container's command is run as it would run in the pod):
#  - DaemonSet: privileged, hostPID, the mounts BPF needs (/sys/fs/bpf,
#    tracefs, debugfs, the cgroup tree and BTF read-only, /lib/modules),
#    port 9477 named metrics, probes on /metrics, scrape annotations;
#  - its command and args are `gpuio monitor` options that --help lists, and
#    that command (with its paths and port moved to this test's) starts and
#    answers the probe's GET /metrics;
#  - the NetworkPolicy selects the DaemonSet's pods and opens only TCP 9477.
source "$(dirname "$0")/lib.sh"
need_root
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not installed (scripts/install-deps.sh test)"
command -v curl >/dev/null || skip "curl not installed"
K="$GPUIO_SRC/scripts/deploy/k8s"
"$GPUIO" monitor --help > "$TMP/help.txt"
PORT=$((19900 + RANDOM % 90))
python3 - "$K/gpuio-monitor-daemonset.yaml" "$K/gpuio-networkpolicy.yaml" "$TMP/help.txt" "$TMP" "$PORT" > "$TMP/cmd" <<'PYEOF' || fail "the manifests"
import re, shlex, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
help_text = open(sys.argv[3]).read()
tmp, port = sys.argv[4], sys.argv[5]
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
# the NetworkPolicy: these pods, TCP 9477 only
np = yaml.safe_load(open(sys.argv[2]))
assert np["kind"] == "NetworkPolicy" and np["metadata"]["namespace"] == ds["metadata"]["namespace"]
assert np["spec"]["podSelector"]["matchLabels"].items() <= labels.items(), "policy does not select the pods"
assert np["spec"]["policyTypes"] == ["Ingress"]
rules = np["spec"]["ingress"]
assert rules and all(r["ports"] == [{"protocol": "TCP", "port": 9477}] and r["from"] for r in rules), rules
# the pod's command, with this test's paths and a loopback port
local = {"--listen": f"127.0.0.1:{port}", "--run-dir": f"{tmp}/run", "--dump-dir": f"{tmp}/dumps"}
out = ["monitor"] + [a.split("=", 1)[0] + "=" + local[a.split("=", 1)[0]] if a.split("=", 1)[0] in local else a
                     for a in args]
print(shlex.join(out))
PYEOF
echo "manifests: ok; the pod's command here: gpuio $(cat "$TMP/cmd")"
eval "set -- $(cat "$TMP/cmd")"
spawn -l "$TMP/mon.log" monitor "$GPUIO" "$@"
MON=$SPAWNED
answered() {
  curl -sf "http://127.0.0.1:$PORT/metrics" -o "$TMP/m.txt" && return 0
  proc_alive $MON || { cat "$TMP/mon.log"; fail "the pod's command exited"; }
  return 1
}
poll -t 20 -i 0.1 answered || true
grep -q '^gpuio_monitor_info{' "$TMP/m.txt" || { cat "$TMP/mon.log"; fail "the probe's GET /metrics got no metrics"; }
kill -TERM $MON; wait $MON || fail "the monitor did not exit cleanly on SIGTERM (the pod's stop)"
proc_unreg $MON
echo "the DaemonSet's command runs and answers its probe"
