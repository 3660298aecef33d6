#!/usr/bin/env bash
# t_alert_dump: from a starving job's alert to the answer, with the real
# servers and no person in between.
#  - two `gpuio monitor`s stand for two nodes (own ports, run and dump dirs,
#    --node-name n1/n2), each with Alertmanager's webhook on (a bearer token);
#  - Debian's prometheus scrapes both and evaluates the project's own rules
#    (scripts/deploy/prometheus/gpuio-rules.yml, GpuioJobStarvingOnData's
#    `for:` shortened to 5s); Debian's alertmanager runs the project's
#    example route (scripts/deploy/prometheus/alertmanager.yml, its node
#    URLs and token path moved to this test's);
#  - a PyTorch DataLoader loop starving on data (workers sleeping 20 ms a
#    sample) runs in the cgroup of "Slurm job J" (…/job_J/step_0), after a
#    fed one (16 s, 11% waiting by its own clock) in job J+2's: the fed job
#    is never dumped, by the trigger or by the alert.
# The alert fires, Alertmanager calls both monitors, both dump: the window
# of each dump ends exactly at the alert's startsAt as Alertmanager's own
# API gives it (the capture's clock anchor is startsAt - --alert-span), the
# file names carry the alert and the job, and `gpuio report --hosts` over
# them (one quoted pattern) names the program's main thread as the loop,
# waiting for data (its workers' batches).
# n1 then traces the job's root process for 10 s with Python stacks
# (--alert-trace, the default): its report names the main thread as the
# loop, waiting in next() at the line of torch_shapes.py that calls it (read
# from the source with ast). n2 has --alert-trace 0, and the trigger on the
# answer (--trigger 'loop_data_wait>0.5:10s'): it dumps on its own, named by
# the job, once.
# Then bad requests (no token, wrong token, oversized, malformed, an alert
# for a job not on the node, a flood past --alert-rate, a GET, a wrong path)
# each get their HTTP status and write no dump; each monitor listens on its
# two addresses and nothing else; the recorder dropped nothing as too large;
# HTTPS serves with --alert-tls-cert/--alert-tls-key and refuses plain HTTP.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/monitor_lib.sh"
source "$(dirname "$0")/torch_lib.sh"
need_torch
PROM=$(command -v prometheus) || skip "prometheus not installed (scripts/install-deps.sh test)"
AM=$(command -v prometheus-alertmanager || command -v alertmanager) ||
  skip "prometheus-alertmanager not installed (scripts/install-deps.sh test)"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not installed"
command -v openssl >/dev/null || skip "openssl not installed"
command -v ss >/dev/null || skip "ss (iproute2) not installed"
DEPLOY="$GPUIO_SRC/scripts/deploy/prometheus"
J=$((40000 + RANDOM % 9999))
BASE=$((21000 + (RANDOM % 400) * 10))
P1=$BASE P1A=$((BASE + 1)) P2=$((BASE + 2)) P2A=$((BASE + 3)) PP=$((BASE + 4)) PA=$((BASE + 5)) PT=$((BASE + 6))
SPAN=20

# the job's cgroup: …/job_J/step_0 names Slurm job J (lib/job_identity.h)
TOP=$(mk_cgroup "gpuio-test-alert-$$.slice")
CG="$TOP/job_$J/step_0"
mkdir -p "$CG" || skip "cannot create $CG"
J2=$((J + 2))                               # a fed job: no trigger, no alert (J + 1: a job on no node)
CG2="$TOP/job_$J2/step_0"
mkdir -p "$CG2" || skip "cannot create $CG2"
CGROUPS=("$CG" "$TOP/job_$J" "$CG2" "$TOP/job_$J2" "${CGROUPS[@]}")
head -c 32 /dev/urandom | base64 > "$TMP/token"
chmod 600 "$TMP/token"
TOKEN=$(cat "$TMP/token")

# mon NAME PORT ALERTPORT ARGS...: a monitor standing for node NAME
mon() {
  local n=$1 p=$2 pa=$3; shift 3
  mkdir -p "$TMP/$n"
  spawn -l "$TMP/$n/monitor.log" "monitor $n" "$GPUIO" monitor --run-dir "$TMP/$n/run" \
    --dump-dir "$TMP/$n/dumps" --listen "127.0.0.1:$p" --node-name "$n" --window 90s \
    --alert-listen "127.0.0.1:$pa" --alert-token-file "$TMP/token" --alert-span ${SPAN}s "$@"
  eval "MON_$n=\$SPAWNED"
}
up() { curl -sf "http://127.0.0.1:$1/metrics" -o /dev/null; }
mon n1 $P1 $P1A --alert-rate 40
mon n2 $P2 $P2A --trigger 'loop_data_wait>0.5:10s' --alert-trace 0
wait_for -t 40 -i 0.2 -f "$TMP/n1/monitor.log" "n1's /metrics" up $P1
wait_for -t 40 -i 0.2 -f "$TMP/n2/monitor.log" "n2's /metrics" up $P2

# Prometheus: both nodes, the project's rules with a 5 s `for:`
python3 - "$DEPLOY/gpuio-rules.yml" "$TMP/rules.yml" <<'EOF' || fail "cannot shorten the rule's for:"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
n = 0
for g in d["groups"]:
    for r in g["rules"]:
        if r.get("alert") == "GpuioJobStarvingOnData":
            r["for"] = "5s"; n += 1
assert n == 1, n
yaml.safe_dump(d, open(sys.argv[2], "w"))
EOF
cat > "$TMP/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$TMP/rules.yml"]
alerting:
  alertmanagers: [{static_configs: [{targets: ["127.0.0.1:$PA"]}]}]
scrape_configs:
  - job_name: gpuio
    static_configs:
      - {targets: ["127.0.0.1:$P1"], labels: {instance: n1}}
      - {targets: ["127.0.0.1:$P2"], labels: {instance: n2}}
EOF
# Alertmanager: the example route, its nodes and token moved here
python3 - "$DEPLOY/alertmanager.yml" "$TMP/alertmanager.yml" "$TMP/token" \
  "http://127.0.0.1:$P1A/alert" "http://127.0.0.1:$P2A/alert" <<'EOF' || fail "the example alertmanager.yml"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
rcv = {r["name"]: r for r in d["receivers"]}["gpuio-nodes"]
hooks = rcv["webhook_configs"]
assert len(hooks) == 2, hooks
for h, url in zip(hooks, sys.argv[4:6]):
    assert h["http_config"]["authorization"]["type"] == "Bearer", h
    h["url"] = url
    h["http_config"]["authorization"]["credentials_file"] = sys.argv[3]
route = [r for r in d["route"]["routes"] if r["receiver"] == "gpuio-nodes"][0]
assert 'alertname="GpuioJobStarvingOnData"' in route["matchers"], route
route["group_wait"] = "1s"
yaml.safe_dump(d, open(sys.argv[2], "w"))
EOF
spawn -l "$TMP/prometheus.log" prometheus "$PROM" --config.file "$TMP/prometheus.yml" \
  --storage.tsdb.path "$TMP/prom-data" --web.listen-address "127.0.0.1:$PP"
spawn -l "$TMP/alertmanager.log" alertmanager "$AM" --config.file "$TMP/alertmanager.yml" \
  --storage.path "$TMP/am-data" --web.listen-address "127.0.0.1:$PA" --cluster.listen-address=
ready() { curl -sf "http://127.0.0.1:$1/-/ready" -o /dev/null; }
wait_for -t 60 -i 0.5 -f "$TMP/prometheus.log" "prometheus ready" ready $PP
wait_for -t 60 -i 0.5 -f "$TMP/alertmanager.log" "alertmanager ready" ready $PA

# the starving loop, in job J's cgroup
torch_warm_data "$TMP/data" 32 65536
# first a fed loop (workers ready at once, 20 ms of compute a step) in job J2
# for 16 s: by its own clock it waits little, and neither n2's trigger nor
# the alert may fire for it
start_in_cgroup "$CG2" "$TORCH_PY" "$GPUIO_SRC/tests/progs/torch_shapes.py" loader --data "$TMP/data" \
  --files 32 --workers 2 --batch 4 --cpu-us 0 --sleep-us 0 --step-cpu-us 20000 --seconds 16 \
  --out "$TMP/fed.json" > "$TMP/fed.log" 2>&1
wait "$CGPID" || { tail -n 20 "$TMP/fed.log"; fail "the fed loop failed"; }
proc_unreg "$CGPID"
FED_SHARE=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.3f" % (d["total_wait_s"] / d["loop_s"]))' "$TMP/fed.json")
echo "the fed loop waited $FED_SHARE of its loop for data, by its own clock"
start_in_cgroup "$CG" "$TORCH_PY" "$GPUIO_SRC/tests/progs/torch_shapes.py" loader --data "$TMP/data" \
  --files 32 --workers 2 --batch 4 --cpu-us 0 --sleep-us 20000 --step-cpu-us 5000 --seconds 150 \
  > "$TMP/loop.log" 2>&1
LOOP=$CGPID
dumped() { grep -q "alert GpuioJobStarvingOnData for slurm_job=$J .*dump written" "$TMP/$1/monitor.log"; }
wait_for -t 150 -i 1 -f "$TMP/alertmanager.log" -m "no dump on n1 (alert, prometheus and monitor logs above)" \
  "n1's alert dump" dumped n1
wait_for -t 30 -i 1 -f "$TMP/n2/monitor.log" "n2's alert dump" dumped n2
# n1 then traces the job's process for 10 s (--alert-trace, the default), stacks on
traced() { grep -q "alert: the job's trace is written: .*slurm_job-$J.trace.gpuio" "$TMP/n1/monitor.log"; }
wait_for -t 90 -i 1 -f "$TMP/n1/monitor.log" "n1's follow-up trace of the job" traced
kill "$LOOP"; wait "$LOOP" 2>/dev/null || true; proc_unreg "$LOOP"
grep -q "alert: tracing the job's process $LOOP for 10000ms" "$TMP/n1/monitor.log" ||
  fail "n1 traced another process than the job's root ($LOOP): $(grep 'tracing the job' "$TMP/n1/monitor.log")"
grep -q "tracing the job" "$TMP/n2/monitor.log" && fail "n2 traced with --alert-trace 0"
TRACE=$(ls "$TMP/n1/dumps"/gpuio-dump-*-alert-GpuioJobStarvingOnData-slurm_job-$J.trace.gpuio) ||
  fail "no follow-up trace beside n1's dump"
"$GPUIO" report --json "$TRACE" > "$TMP/trace.report.json" 2> "$TMP/trace.err" ||
  { cat "$TMP/trace.err"; fail "gpuio report of the follow-up trace"; }
pycheck alert_dump.where "$TMP/trace.report.json" "$LOOP" "$GPUIO_SRC/tests/progs/torch_shapes.py" ||
  fail "the follow-up trace does not say where the loop waits (FAIL lines above)"
curl -sf "http://127.0.0.1:$PA/api/v2/alerts?filter=alertname%3D%22GpuioJobStarvingOnData%22" -o "$TMP/alerts.json" ||
  fail "Alertmanager's API"
for n in n1 n2; do
  ls "$TMP/$n/dumps"/gpuio-dump-*-alert-GpuioJobStarvingOnData-slurm_job-$J.gpuio > "$TMP/$n.caps" 2>/dev/null ||
    fail "$n: no capture named by the alert and the job in $TMP/$n/dumps: $(ls "$TMP/$n/dumps")"
  ls "$TMP/$n/dumps"/gpuio-dump-*-alert-GpuioJobStarvingOnData-slurm_job-$J.pftrace >/dev/null ||
    fail "$n: the capture's export is missing"
  [ "$(wc -l < "$TMP/$n.caps")" = 1 ] || fail "$n: the alert dumped more than once: $(cat "$TMP/$n.caps")"
  "$GPUIO" info --json "$(cat "$TMP/$n.caps")" > "$TMP/$n.info.json" || fail "$n: gpuio info of its dump"
done
# each dump ends at the alert's startsAt (Alertmanager's word for it): its
# anchor is startsAt - SPAN, on both nodes, and it holds the job's events
pycheck alert_dump.line_up "$TMP/alerts.json" "$J" "$SPAN" "$TMP/n1.info.json" "$TMP/n2.info.json" ||
  fail "the dumps do not line up on the alert's instant (FAIL lines above)"
ALERT_CAPS="$TMP/n*/dumps/gpuio-dump-*-alert-GpuioJobStarvingOnData-slurm_job-$J.gpuio"
"$GPUIO" report --hosts --json "$ALERT_CAPS" > "$TMP/hosts.json" 2> "$TMP/hosts.err" ||
  { cat "$TMP/hosts.err"; fail "gpuio report --hosts over the dumps"; }
"$GPUIO" report --hosts "$ALERT_CAPS" 2>/dev/null | sed -n '1,12p'
pycheck alert_dump.straggler "$TMP/hosts.json" "$LOOP" ||
  fail "report --hosts over the dumps does not name the starving loop (FAIL lines above)"

# n2's own trigger on the answer: the loop waited for data over half its
# time for 10 s: a dump named by the job, with its capture
grep -q "trigger loop_data_wait>0.5:10s fired: the loops of cgroup id [0-9]* waited for data" "$TMP/n2/monitor.log" ||
  fail "n2's loop_data_wait trigger did not fire"
ls "$TMP/n2/dumps"/gpuio-dump-*-trigger-loop_data_wait-slurm_job-$J.gpuio >/dev/null ||
  fail "no loop_data_wait dump named by the job: $(ls "$TMP/n2/dumps")"
curl -sf "http://127.0.0.1:$P2/metrics" > "$TMP/n2.metrics" || fail "n2's /metrics"
grep -q '^gpuio_trigger_dumps_total{trigger="loop_data_wait>0.5:10s"} 1$' "$TMP/n2.metrics" ||
  fail "n2's trigger dump is not counted once: $(grep '^gpuio_trigger_' "$TMP/n2.metrics" | tr '\n' ' ');" \
    "$(grep 'trigger' "$TMP/n2/monitor.log" | tail -n 5)"

# the fed job: no dump of any kind (its share by its own clock was
# FED_SHARE; a loaded machine that starves it past 0.4 cannot judge)
if awk -v s="$FED_SHARE" 'BEGIN { exit !(s < 0.4) }'; then
  ls "$TMP/n1/dumps" "$TMP/n2/dumps" | grep -q "slurm_job-$J2" &&
    fail "the fed job (waiting $FED_SHARE of its loop) was dumped: $(ls "$TMP/n1/dumps" "$TMP/n2/dumps" | grep "slurm_job-$J2")"
  grep -q "\"slurm_job\":\"$J2\"" "$TMP/alerts.json" && fail "the fed job's alert fired"
else
  echo "the fed loop waited $FED_SHARE of its loop on this loaded machine: its negative check is not judged"
fi

# bad requests: each its status, none a dump
before=$(ls "$TMP/n1/dumps" "$TMP/n2/dumps" | grep -c alert)
pycheck alert_dump.bad_requests "http://127.0.0.1:$P1A" "$TOKEN" "$J" "$TMP/alerts.json" 40 ||
  fail "the webhook's answers to bad requests (FAIL lines above)"
after=$(ls "$TMP/n1/dumps" "$TMP/n2/dumps" | grep -c alert)
[ "$before" = "$after" ] || fail "bad requests changed the dumps ($before files, then $after)"
curl -sf "http://127.0.0.1:$P1/metrics" | { grep '^gpuio_alert_requests_total' || true; } | tee "$TMP/req.txt"
grep -q '^gpuio_alert_requests_total{code="429"} [1-9]' "$TMP/req.txt" || fail "the flood's 429s are not counted"
# the notification of 70 alerts: 6 alerts and 48 jobs left out, counted
curl -sf "http://127.0.0.1:$P1/metrics" | { grep '^gpuio_alert_left_out_total' || true; } | tee "$TMP/left.txt"
grep -q '^gpuio_alert_left_out_total{what="alert"} 6$' "$TMP/left.txt" &&
  grep -q '^gpuio_alert_left_out_total{what="job"} 48$' "$TMP/left.txt" ||
  fail "the alerts and jobs a notification left out are not counted"
# nothing listens beyond the configured addresses
for n in n1 n2; do
  eval "pid=\$MON_$n"
  ss -Hltnp | { grep "pid=$pid," || true; } | awk '{print $4}' | sort > "$TMP/$n.listen"
  cat "$TMP/$n.listen"
done
[ "$(cat "$TMP/n1.listen")" = "$(printf '127.0.0.1:%s\n127.0.0.1:%s' $P1 $P1A | sort)" ] ||
  fail "n1 listens on $(cat "$TMP/n1.listen" | tr '\n' ' ')"
[ "$(cat "$TMP/n2.listen")" = "$(printf '127.0.0.1:%s\n127.0.0.1:%s' $P2 $P2A | sort)" ] ||
  fail "n2 listens on $(cat "$TMP/n2.listen" | tr '\n' ' ')"
ss -Hlunp | grep -E "pid=($MON_n1|$MON_n2)," && fail "a monitor listens on UDP"
# every record the recorder got fit its slots or its name tables (socket addresses too)
curl -sf "http://127.0.0.1:$P1/metrics" | { grep '^gpuio_recorder_lost_total' || true; } > "$TMP/lost.txt"
grep -q '^gpuio_recorder_lost_total{reason="too_large"} 0$' "$TMP/lost.txt" ||
  { cat "$TMP/lost.txt"; fail "the recorder dropped records too large for its slots"; }
proc_stop "$MON_n1"
proc_stop "$MON_n2"

# HTTPS: a self-signed certificate for 127.0.0.1
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null || skip "openssl cannot make a certificate"
mon n3 $((BASE + 7)) $PT --window 10s --alert-span 5s --alert-tls-cert "$TMP/cert.pem" --alert-tls-key "$TMP/key.pem"
wait_for -t 40 -i 0.2 -f "$TMP/n3/monitor.log" "n3's /metrics" up $((BASE + 7))
grep -q "webhook on https://127.0.0.1:$PT/alert" "$TMP/n3/monitor.log" || fail "n3 did not say HTTPS"
code=$(curl -s -o "$TMP/tls.out" -w '%{http_code}' --cacert "$TMP/cert.pem" -H "Authorization: Bearer $TOKEN" \
  --data-binary @"$TMP/alerts.json.other" "https://127.0.0.1:$PT/alert" || true)
[ "$code" = 422 ] || fail "HTTPS: a job not on the node answered $code: $(cat "$TMP/tls.out")"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -d '{}' "http://127.0.0.1:$PT/alert" || true)
[ "$code" = 000 ] || fail "plain HTTP to the HTTPS webhook answered $code"
proc_stop "$MON_n3"
echo "the alert dumped both nodes at its instant; report --hosts named the loop; bad requests refused"
