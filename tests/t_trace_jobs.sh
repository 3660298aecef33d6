#!/usr/bin/env bash
# t_trace_jobs: traces and reports say which job each process ran in, read
# from its cgroup path (no API calls): process metadata in the JSON
# (Chrome's process_labels) and the .pftrace (ProcessDescriptor labels,
# which Perfetto's importer keeps as the process's args), and a "job" line
# in `gpuio report` (text and --json).
#  - launch: gpuio runs in a Slurm-step cgroup of the v2 hierarchy
#    (system.slice/slurmstepd.scope/job_4242/step_0); the command it starts
#    inherits it;
#  - attach (-p): a process already in a Kubernetes container's cgroup of
#    the v1 memory hierarchy (cgroupfs driver: kubepods/burstable/pod<uid>/<id>)
#    while its v2 cgroup is the root: the line that names the job wins.
# Ground truth: the paths and ids this test wrote.
source "$(dirname "$0")/lib.sh"
need_root
CGV2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CGV2" ] || skip "no cgroup v2 mount"
V1MEM=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
UID_K=0f3c2b1a-9e8d-4c7b-a6f5-e4d3c2b1a098
CID=4b825dc642cb6eb9a060e54bf8d69288fbee4904ac3c6f1a2b3c4d5e6f708192
SLURM=system.slice/slurmstepd.scope/job_4242/step_0
KUBE=kubepods/burstable/pod$UID_K/$CID
TP=$(tp_path) || TP=""
rm_cgroups() {  # the cgroups made here, deepest first (their processes are gone by then)
  local root_rel p
  for root_rel in "$CGV2 $SLURM" "${V1MEM:-/nonexistent} $KUBE"; do
    set -- $root_rel; p="$1/$2"
    while [ "$p" != "$1" ] && [ "$p" != / ]; do rmdir "$p" 2>/dev/null || true; p=$(dirname "$p"); done
  done
}
on_exit rm_cgroups
mkdir -p "$CGV2/$SLURM" || skip "cannot create cgroups under $CGV2"
head -c 256K /dev/urandom > "$TMP/data"

# ---- launch from inside the Slurm step's cgroup
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" trace -q -o "$3/l.json" -- "$4" "$3/data" 20 1' \
  sh "$CGV2/$SLURM" "$GPUIO" "$TMP" "$GPUIO_TESTS/preadloop" > /dev/null 2> "$TMP/l.err" \
  || { cat "$TMP/l.err"; fail "trace in the slurm cgroup failed"; }
"$GPUIO" convert -q "$TMP/l.gpuio" -o "$TMP/l.pftrace" || fail "convert"
want_l="cgroup=/$SLURM, slurm_job=4242, slurm_step=0, unit=slurmstepd.scope"

# labels LABELS JSON PFTRACE REPORT_PREFIX: the traced preadloop carries them everywhere
labels() {
  pycheck procs.process_labels "$2" "$1" || fail "JSON: preadloop's process_labels"
  tp_check "$3" > /dev/null
  if [ -n "$TP" ]; then
    echo "select group_concat(a.string_value, ', ') from process p join args a using(arg_set_id) where p.name like 'preadloop%' and a.flat_key = 'chrome.process_label' order by a.key;" > "$TMP/q.sql"
    "$TP" -q "$TMP/q.sql" "$3" 2>/dev/null | tail -n1 > "$TMP/q.out"
    grep -qxF "\"$1\"" "$TMP/q.out" || { cat "$TMP/q.out"; fail "Perfetto: the process's labels are not '$1'"; }
    echo "Perfetto process args: $(cat "$TMP/q.out")"
  else
    tp_note "the .pftrace labels in Perfetto's process args"
  fi
  "$GPUIO" report "$4.gpuio" > "$TMP/r.txt" 2>&1 || fail "report"
  "$GPUIO" report --json "$4.gpuio" > "$TMP/r.json" 2>&1 || fail "report --json"
  grep -A3 '^  jobs (' "$TMP/r.txt" || true
  pycheck procs.report_jobs "$TMP/r.json" "$1" || fail "report --json: jobs"
}
labels "$want_l" "$TMP/l.json" "$TMP/l.pftrace" "$TMP/l"
grep -qE "^ +1 slurm_job=4242 slurm_step=0 unit=slurmstepd.scope /$SLURM\$" "$TMP/r.txt" \
  || { cat "$TMP/r.txt"; fail "report: no Slurm job line"; }

# ---- attach to a process in a Kubernetes container's v1 memory cgroup
if [ -z "$V1MEM" ]; then
  echo "no cgroup v1 memory hierarchy: the attach case is not checked"
  exit 0
fi
p="$V1MEM"; for part in ${KUBE//\// }; do p="$p/$part"; mkdir -p "$p" || skip "cannot create $p"; done
mkfifo "$TMP/go"
spawn sleeper sh -c 'echo $$ > "$1/cgroup.procs"; read -r _ < "$2"; exec "$3" "$4" 20 1' sh "$V1MEM/$KUBE" "$TMP/go" \
  "$GPUIO_TESTS/preadloop" "$TMP/data"
SLEEPER=$SPAWNED
poll -t 5 grep -q "$CID" /proc/$SLEEPER/cgroup || true
spawn -o /dev/null -e "$TMP/a.err" gpuio "$GPUIO" trace -p "$SLEEPER" -o "$TMP/a.json"
TR=$SPAWNED
wait_line -t 60 -m "gpuio never started tracing" "tracing" "$TMP/a.err"
echo go > "$TMP/go"; wait "$SLEEPER"; proc_unreg "$SLEEPER"
wait "$TR" || { cat "$TMP/a.err"; fail "trace -p failed"; }
"$GPUIO" convert -q "$TMP/a.gpuio" -o "$TMP/a.pftrace" || fail "convert a"
labels "cgroup=/$KUBE, k8s_pod_uid=$UID_K, k8s_qos=burstable, container_id=$CID" "$TMP/a.json" "$TMP/a.pftrace" "$TMP/a"
echo "traces and reports name the job of each process"
