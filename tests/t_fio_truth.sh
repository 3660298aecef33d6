#!/usr/bin/env bash
# t_fio_truth: a trace of fio accounts exactly for the I/O fio reports.
#
# One fio run, traced in launch mode, with sequential and random reads and
# writes, the psync, pvsync2 and sync engines, buffered and O_DIRECT, one and
# two files per job, a job with numjobs=2 and a job run as a thread. The
# files are laid out untraced first (fio --create_only=1), so the traced run
# does only the jobs' I/O. Ground truth is fio's JSON report (io_bytes and
# total_ios per job) and the files themselves:
#   - per job: bytes and calls on the job's files (JOB.N.M) in the trace ==
#     fio's io_bytes / total_ios, in the call the engine uses (psync ->
#     pread64/pwrite64, pvsync2 -> preadv2/pwritev2, sync -> read/write);
#   - per file: bytes == the file's size, every call moved bs bytes, and the
#     offsets are exactly {0, bs, 2bs, ...} each once (fio's random map visits
#     every block once; sequential jobs go in order);
#   - each job clone's calls come from one thread; O_DIRECT jobs opened their
#     files with O_DIRECT, buffered jobs without.
source "$(dirname "$0")/lib.sh"
need_root
command -v fio >/dev/null || skip "fio not installed"


D="$TMP/fio"
mkdir -p "$D"
cat >"$TMP/job.fio" <<EOF
[global]
directory=$D
size=8m
ioengine=psync
invalidate=1

[seqread-psync]
rw=read
bs=64k
nrfiles=2

[randread-psync-direct]
rw=randread
bs=4k
direct=1

[seqwrite-pvsync2]
ioengine=pvsync2
rw=write
bs=32k

[randwrite-pvsync2-direct]
ioengine=pvsync2
rw=randwrite
bs=16k
direct=1
nrfiles=2

[randread-pvsync2]
ioengine=pvsync2
rw=randread
bs=16k
nrfiles=2
numjobs=2

[randwrite-psync]
rw=randwrite
bs=8k

[seqread-sync-thread]
ioengine=sync
thread
rw=read
bs=128k
EOF

fio "$TMP/job.fio" --create_only=1 --output-format=json >"$TMP/layout.json" 2>&1 \
  || { cat "$TMP/layout.json"; fail "fio layout run failed"; }
sync

"$GPUIO" trace -q -o "$TMP/run.json" -- \
  fio "$TMP/job.fio" --output-format=json --output="$TMP/fio.json" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- fio exited non-zero"; }
cat "$TMP/gpuio.err"
check_struct "$TMP/run.json"

# the checker's own per-file totals, when it has them, must agree too
$CHECK files "$TMP/run.json" >"$TMP/check_files.json" 2>/dev/null || rm -f "$TMP/check_files.json"

python3 - "$TMP/run.json" "$TMP/fio.json" "$D" "$TMP/check_files.json" <<'EOF' || fail "trace does not account for fio's I/O"
import collections, json, os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth

trace, fiojson, d, checkfiles = sys.argv[1:]
ev = truth.load(trace)
inf = truth.info(ev)
if inf.get("dropped"):
    print(f"FAIL trace dropped {inf['dropped']} events"); sys.exit(1)
fio = json.load(open(fiojson))
ENGINE_CALLS = {"psync": ("pread64", "pwrite64"), "pvsync2": ("preadv2", "pwritev2"),
                "sync": ("read", "write")}
JOBS = {  # name: (engine, bs, direct, nrfiles)
    "seqread-psync": ("psync", 65536, False, 2),
    "randread-psync-direct": ("psync", 4096, True, 1),
    "seqwrite-pvsync2": ("pvsync2", 32768, False, 1),
    "randwrite-pvsync2-direct": ("pvsync2", 16384, True, 2),
    "randread-pvsync2": ("pvsync2", 16384, False, 2),
    "randwrite-psync": ("psync", 8192, False, 1),
    "seqread-sync-thread": ("sync", 131072, False, 1),
}
# fio's report: per job name, summed over clones
rep = collections.defaultdict(lambda: {"read": [0, 0], "write": [0, 0]})
for j in fio["jobs"]:
    if j.get("error"):
        print(f"FAIL fio job {j['jobname']} error {j['error']}"); sys.exit(1)
    for rw in ("read", "write"):
        rep[j["jobname"]][rw][0] += j[rw]["io_bytes"]
        rep[j["jobname"]][rw][1] += j[rw]["total_ios"]
if set(rep) != set(JOBS):
    print(f"FAIL fio ran jobs {sorted(rep)}"); sys.exit(1)

calls = truth.vfs(ev)
byfile = collections.defaultdict(list)
for e in calls:
    p = e["args"].get("path", "")
    if p.startswith(d + "/"):
        byfile[os.path.basename(p)].append(e)

bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        bad += 1

for job, (engine, bs, direct, nrfiles) in JOBS.items():
    rcall, wcall = ENGINE_CALLS[engine]
    files = sorted(f for f in os.listdir(d) if f.startswith(job + "."))
    clones = sum(1 for j in fio["jobs"] if j["jobname"] == job)
    check(len(files) == clones * nrfiles, f"{job}: {len(files)} files on disk")
    tot = {"read": [0, 0], "write": [0, 0]}
    for f in files:
        size = os.path.getsize(os.path.join(d, f))
        evs = byfile.get(f, [])
        rw = "read" if rep[job]["read"][1] else "write"
        want_call = rcall if rw == "read" else wcall
        io = [e for e in evs if e["name"] in truth.READ_CALLS | truth.WRITE_CALLS]
        other = sorted({e["name"] for e in io if e["name"] != want_call})
        check(not other, f"{f}: data calls are all {want_call}" + (f" (also {other})" if other else ""))
        io = [e for e in io if e["name"] == want_call]
        nbytes = sum(e["args"].get("bytes", 0) for e in io)
        tot[rw][0] += nbytes
        tot[rw][1] += len(io)
        check(nbytes == size, f"{f}: {rw} {nbytes} bytes in the trace, file is {size}")
        sizes = sorted({e["args"].get("bytes") for e in io} | {e["args"].get("requested") for e in io})
        check(sizes == [bs], f"{f}: every {want_call} moved bs={bs} ({sizes})")
        offs = sorted(e["args"].get("offset", -1) for e in io)
        check(offs == list(range(0, size, bs)), f"{f}: offsets are each block of the file once")
        if job.startswith("seq"):
            inorder = [e["args"].get("offset") for e in io]
            check(inorder == list(range(0, size, bs)), f"{f}: sequential offsets in time order")
        tids = {(e["pid"], e["tid"]) for e in io}
        check(len(tids) == 1, f"{f}: I/O from one thread {sorted(tids)}")
        if job.endswith("-thread"):
            check(all(p != t for p, t in tids), f"{f}: the thread job's I/O is on a thread, not a main thread")
        opens = [e for e in evs if e["name"] in truth.OPEN_CALLS]
        check(opens and all(("O_DIRECT" in e["args"].get("flags", "")) == direct for e in opens),
              f"{f}: {len(opens)} open(s), O_DIRECT {'set' if direct else 'not set'}: "
              f"{sorted({e['args'].get('flags') for e in opens})}")
    for rw in ("read", "write"):
        check(tot[rw] == rep[job][rw],
              f"{job}: {rw} bytes/ios in trace {tot[rw]} == fio's {rep[job][rw]}")

# the numjobs=2 clones run in two processes; the thread job runs in fio's
# main process, not in a process of its own
clone_pids = {e["pid"] for f, evs in byfile.items() if f.startswith("randread-pvsync2.") for e in evs
              if e["name"] == "preadv2"}
check(len(clone_pids) == 2, f"randread-pvsync2 numjobs=2 ran in 2 processes {sorted(clone_pids)}")
names = truth.process_names(ev)
job_pids = {e["pid"] for evs in byfile.values() for e in evs}
check(all(p in names for p in job_pids), f"process_name metadata for every job pid {sorted(job_pids)}")

if os.path.exists(checkfiles):
    cf = json.load(open(checkfiles))
    mine = truth.file_totals(ev)
    for p, t in mine.items():
        if p.startswith(d + "/") and "." in os.path.basename(p):
            c = cf.get(p, {})
            for k in ("read_bytes", "write_bytes"):
                if k in c and c[k] != t[k]:
                    check(False, f"check_trace.py files: {p} {k}={c[k]}, events say {t[k]}")
sys.exit(1 if bad else 0)
EOF
echo "PASS: trace accounts exactly for fio's bytes and I/Os per job and per file"
