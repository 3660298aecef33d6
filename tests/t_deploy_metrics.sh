#!/usr/bin/env bash
# t_deploy_metrics: the Prometheus rules and the Grafana dashboard shipped in
# scripts/deploy/ query what a live `gpuio monitor` serves.
#  - promtool check rules, and promtool test rules (synthetic series through
#    the recording rules and two alerts, gpuio-rules.test.yml);
#  - the dashboard is valid JSON with a datasource variable and PromQL targets;
#  - a live monitor (stand-in NVML with one GPU process, --cuda-uprobes) while
#    fio reads and writes an ext4 image from a Slurm step's and a Kubernetes
#    pod's cgroup: every metric family named by a rule or a panel has samples
#    on /metrics, and every label an expression groups or selects by is on a
#    series of a family that expression reads.
source "$(dirname "$0")/lib.sh"
need_root
command -v promtool >/dev/null || skip "promtool not installed (Debian package prometheus; scripts/install-deps.sh test)"
command -v fio >/dev/null || skip "fio not installed"
D="$GPUIO_SRC/scripts/deploy"
RULES="$D/prometheus/gpuio-rules.yml"; DASH="$D/grafana/gpuio-dashboard.json"
promtool check rules "$RULES" || fail "promtool check rules"
(cd "$D/prometheus" && promtool test rules gpuio-rules.test.yml) || fail "promtool test rules"

source "$(dirname "$0")/monitor_lib.sh"
[ -n "$CGV2" ] || skip "no cgroup v2 mount"
FAKE="$GPUIO_TESTS/fake_nvml.d"
[ -e "$FAKE/libnvidia-ml.so.1" ] || fail "$FAKE/libnvidia-ml.so.1 missing (make test-progs)"
truncate -s 64M "$TMP/fs.img"; mkfs.ext4 -q -F "$TMP/fs.img"; mkdir -p "$TMP/mnt"
LOOP=$(losetup -f --show "$TMP/fs.img") || skip "no loop device"
mount -o noatime "$LOOP" "$TMP/mnt"
SLURM=system.slice/slurmstepd.scope/job_7/step_0
KUBE=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0f3c2b1a_9e8d_4c7b_a6f5_e4d3c2b1a098.slice
rmtree() { local p="$CGV2/$1"; while [ "$p" != "$CGV2" ]; do rmdir "$p" 2>/dev/null; p=$(dirname "$p"); done; }
sleep 300 & GPUPROC=$!
MON_EXTRA_CLEANUP="kill $GPUPROC 2>/dev/null; rmtree $SLURM; rmtree $KUBE; umount $TMP/mnt 2>/dev/null; losetup -d $LOOP 2>/dev/null"
mkdir -p "$CGV2/$SLURM" "$CGV2/$KUBE"
printf 'gpus 1\nutil 0 40 10\nproc 0 %s 2147483648 30\n' "$GPUPROC" > "$TMP/nvml.txt"
LD_LIBRARY_PATH="$FAKE" FAKE_NVML_FILE="$TMP/nvml.txt" \
  mon_start --window 5s --listen 127.0.0.1:$MON_PORT --cuda-uprobes
for j in "slurm:$SLURM:read" "kube:$KUBE:write"; do
  IFS=: read -r name cg rw <<< "$j"
  start_in_cgroup "$CGV2/$cg" fio --name="$name" --directory="$TMP/mnt" --size=4m --bs=64k --rw="$rw" \
    --ioengine=psync --end_fsync=1 --output="$TMP/fio-$name.out"
  wait "$CGPID" || { cat "$TMP/fio-$name.out"; fail "fio $name"; }
done
# CUDA calls (stand-in libcuda.so.1) from both jobs: the daemon's /proc scan
# (every 10 s) probes the library, then each program makes its calls
FAKE_LIB="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
for cg in "$SLURM" "$KUBE"; do
  rm -f "$TMP/go"
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CGV2/$cg" \
    "$GPUIO_TESTS/fake_libcuda_calls" "$FAKE_LIB" --wait "$TMP/go" > "$TMP/calls.out" 2>&1 &
  CALLS=$!
  for _ in $(seq 300); do grep -qF "$(realpath "$FAKE_LIB"): " "$TMP/monitor.log" && break; sleep 0.1; done
  grep -qF "$(realpath "$FAKE_LIB"): " "$TMP/monitor.log" || { cat "$TMP/monitor.log"; fail "the CUDA library was not probed"; }
  touch "$TMP/go"; wait "$CALLS" || fail "fake_libcuda_calls failed"
done
sync; sleep 2.5
scrape "$TMP/m.txt"

python3 - "$TMP/m.txt.json" "$RULES" "$DASH" <<'PYEOF' || fail "the rules or the dashboard query what /metrics does not have"
import json, re, sys
import yaml
page = json.load(open(sys.argv[1]))
series = {}                                 # family -> [label dict]
for key in page:
    name, labels = key.split("{", 1)
    lab = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', labels))
    for suf in ("_bucket", "_sum", "_count"):
        if name.endswith(suf) and name[:-len(suf)] + "_bucket{" in "".join(k[:len(name) + 1] for k in page if k.startswith(name[:-len(suf)] + "_bucket{")):
            name = name[:-len(suf)]
            break
    series.setdefault(name, []).append(lab)
exprs = []
for g in yaml.safe_load(open(sys.argv[2]))["groups"]:
    for r in g["rules"]:
        exprs.append(("rule " + r.get("record", r.get("alert", "?")), r["expr"]))
dash = json.load(open(sys.argv[3]))
assert any(v["type"] == "datasource" for v in dash["templating"]["list"]), "no datasource variable"
for p in dash["panels"]:
    assert p["targets"], p["title"]
    for t in p["targets"]:
        exprs.append(("panel " + p["title"], t["expr"]))
for v in dash["templating"]["list"]:
    if v["type"] == "query":
        exprs.append(("variable " + v["name"], v["query"]["query"]))
# labels Prometheus adds itself, and PromQL's own words
NOT_OURS = {"instance", "job", "le", "__name__"}
bad, used = [], set()
for where, e in exprs:
    fams = set()
    for m in re.finditer(r'(?<![:\w])(gpuio_[a-z_]+)', e):     # not job:gpuio_…: (rule outputs)
        f = m.group(1)
        for suf in ("_bucket", "_sum", "_count"):
            if f.endswith(suf) and f[:-len(suf)] in series:
                f = f[:-len(suf)]
        fams.add(f)
    if not fams:
        continue           # a recording rule's output, or up{}
    for f in fams:
        used.add(f)
        if f not in series:
            bad.append(f"{where}: {f} is not on /metrics")
    labels = set()
    for m in re.finditer(r'\b(?:by|on)\s*\(([^)]*)\)', e):
        labels |= {x.strip() for x in m.group(1).split(",") if x.strip()}
    for m in re.finditer(r'\{([^}]*)\}', e):
        labels |= set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)', m.group(1)))
    for m in re.finditer(r'label_values\(\s*\w+\s*,\s*(\w+)\s*\)', e):
        labels.add(m.group(1))
    have = set().union(*[set(l) for f in fams for l in series.get(f, [])]) if fams else set()
    for l in sorted(labels - NOT_OURS - have):
        bad.append(f"{where}: label {l} is on no series of {sorted(fams)}")
for b in bad:
    print("FAIL", b)
print(f"{len(exprs)} expressions, {len(used)} metric families, all on the live page" if not bad else "")
sys.exit(1 if bad else 0)
PYEOF
echo "rules and dashboard match the live /metrics"
