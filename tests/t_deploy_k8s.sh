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
#  - its webhook port 9478 named alerts, the token from a Secret (0400);
#  - the NetworkPolicy selects the DaemonSet's pods and opens only TCP 9477
#    (from Prometheus) and 9478 (from Alertmanager).
source "$(dirname "$0")/lib.sh"
need_root
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not installed (scripts/install-deps.sh test)"
command -v curl >/dev/null || skip "curl not installed"
K="$GPUIO_SRC/scripts/deploy/k8s"
"$GPUIO" monitor --help > "$TMP/help.txt"
PORT=$((19900 + RANDOM % 90))
head -c 32 /dev/urandom | base64 > "$TMP/token"; chmod 600 "$TMP/token"   # the Secret's file
pycheck deploy.k8s_manifests "$K/gpuio-monitor-daemonset.yaml" "$K/gpuio-networkpolicy.yaml" "$TMP/help.txt" "$TMP" "$PORT" \
  > "$TMP/cmd" || fail "the manifests"
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
grep -q 'webhook on http://127.0.0.1:' "$TMP/mon.log" || { cat "$TMP/mon.log"; fail "the pod's command did not serve the webhook"; }
echo "the DaemonSet's command runs, answers its probe and serves the webhook"
