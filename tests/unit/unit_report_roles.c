// SPDX-License-Identifier: MIT
/*
 * unit_report_roles — the report's file roles (report/report_roles.c): what
 * a path alone says, on paths a PyTorch job really opens (the interpreter's
 * stdlib, torch's .so files in dist-packages, ld.so.cache, /proc, pipes) and
 * on its data, checkpoints and logs; the decision from what the program did
 * (written then read is data, synced / rewritten / recurring / named
 * checkpoints, stdout and logs are other); digit runs in name patterns.
 */
#include <string.h>
#include "report/report_roles.h"
#include "unit.h"

#define CODE   RPT_PATH_CODE
#define PSEUDO RPT_PATH_PSEUDO
#define SHM    RPT_PATH_SHM
#define CKPT   RPT_PATH_CKPT
#define LOG    RPT_PATH_LOG

static const struct {
	const char *path;
	unsigned want;
} paths[] = {
	/* the interpreter and its libraries */
	{ "/usr/lib/python3.11/os.py", CODE },
	{ "/usr/lib/python3.11/__pycache__/os.cpython-311.pyc", CODE },
	{ "/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so", CODE },
	{ "/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so", CODE },
	{ "/usr/lib/python3/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so", CODE },
	{ "/usr/lib/python3/dist-packages/distutils-precedence.pth", CODE },
	{ "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py", CODE },
	{ "/usr/local/lib/python3.11/dist-packages/_sandboxing_egress_ca.pth", CODE },
	{ "/opt/conda/lib/python3.11/site-packages/numpy/core/_multiarray_umath.so", CODE },
	{ "/opt/conda/lib/python3.11/site-packages/torch/version.py", CODE },
	{ "/opt/conda/lib/libstdc++.so.6.0.32", CODE },
	{ "/home/u/venv/lib/python3.11/site-packages/tqdm/METADATA", CODE },
	{ "/home/u/project/train.py", CODE },
	{ "/home/u/project/__pycache__/model.cpython-311.pyc", CODE },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", CODE },
	{ "/lib/x86_64-linux-gnu/libgomp.so.1", CODE },
	{ "/usr/lib64/libcuda.so.535.104.05", CODE },
	{ "/usr/lib/locale/locale-archive", CODE },
	{ "/usr/share/zoneinfo/Etc/UTC", CODE },
	{ "/etc/ld.so.cache", CODE },
	{ "/etc/ssl/openssl.cnf", CODE },
	{ "/usr/bin/python3.11", CODE },
	/* pseudo files */
	{ "/proc/self/stat", PSEUDO },
	{ "/proc/23396/status", PSEUDO },
	{ "/proc", PSEUDO },
	{ "/sys/devices/system/cpu/online", PSEUDO },
	{ "/dev/null", PSEUDO },
	{ "/dev/nvidia0", PSEUDO },
	{ "pipe:[40213]", PSEUDO },
	{ "socket:[40214]", PSEUDO },
	{ "anon_inode:[eventfd]", PSEUDO },
	{ "/memfd:cuda-shm (deleted)", PSEUDO },
	{ "/dev/shm/torch_1234_567_0", SHM },
	{ "/dev/shm/imagenet/shard-0001.tar", SHM },
	/* data: nothing in the name */
	{ "/data/train/shard-0001.tar", 0 },
	{ "/data/imagenet/train/n01440764/n01440764_10026.JPEG", 0 },
	{ "/scratch/u/coco/annotations.h5", 0 },
	{ "/data/libri/speech.sound", 0 },    /* ".so" only as a whole suffix */
	{ "/data/x/file.1.2", 0 },
	{ "/usrlib/data.bin", 0 },            /* not /usr/lib */
	{ "/procedures/a.dat", 0 },           /* not /proc */
	{ "/data/shapes/CUBE.PY", 0 },        /* code suffixes are lower case */
	{ "?dev=8:1,ino=1234", 0 },           /* a file without a path record */
	/* checkpoint-like names */
	{ "/ckpt/ckpt_step100.pt", CKPT },
	{ "/runs/exp1/ckpt_0002.pt", CKPT },
	{ "/runs/exp1/model_final.pth", CKPT },
	{ "/runs/exp1/last.ckpt", CKPT },
	{ "/runs/exp1/model.safetensors", CKPT },
	{ "/runs/exp1/model-00001-of-00002.safetensors.tmp", CKPT },
	{ "/runs/exp1/checkpoint-500/pytorch_model.bin", CKPT },
	{ "/runs/exp1/optimizer_state.bin", CKPT },
	{ "/runs/exp1/step_100/__0_0.distcp", CKPT },
	{ "/runs/exp1/Checkpoints/weights.dat", CKPT },
	{ "/data/vectors.bin", 0 },           /* .bin alone is not a checkpoint */
	{ "/tmp/ckpt.pt (deleted)", CKPT },
	/* logs and outputs */
	{ "/runs/exp1/train.log", LOG },
	{ "/runs/exp1/metrics.jsonl", LOG },
	{ "/runs/exp1/results.txt", LOG },
	{ "/runs/exp1/events.out.tfevents.1700000000.node1", LOG },
	{ "/runs/exp1/checkpoints/train.log", LOG },   /* a log, whatever its folder */
	{ "/var/log/job.log.1", LOG },
	{ "/tmp/bash_jobs.0/3f2a/stdout", LOG },
};

static void path_table(void)
{
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		unsigned got = rpt_path_class(paths[i].path, strlen(paths[i].path));

		CHECK(got == paths[i].want, "%s: class 0x%x, want 0x%x", paths[i].path, got,
		      paths[i].want);
	}
	/* the length given is the path: the rest of the buffer is not read */
	CHECK(rpt_path_class("/etc/x", 0) == 0, "empty path");
	CHECK(rpt_path_class("/data/a.pyXXXX", 10) == CODE, "length bounds the name");
}

static enum rpt_role role(const char *path, struct rpt_role_facts x)
{
	return rpt_role_decide(rpt_path_class(path, strlen(path)), &x);
}

static void decisions(void)
{
	const uint64_t MiB = 1 << 20;
	struct rpt_role_facts ro = { .rbytes = 16384 };
	struct rpt_role_facts shard = { .rbytes = 8 * MiB, .wbytes = 4 * MiB, .big_bursts = 1,
					.rewrites = 1, .read_after_write = true, .synced = true };
	struct rpt_role_facts synced = { .wbytes = 8 * MiB, .big_bursts = 1, .rewrites = 1,
					 .synced = true };
	struct rpt_role_facts once = { .wbytes = 8 * MiB, .big_bursts = 1, .rewrites = 1 };
	struct rpt_role_facts rewritten = { .wbytes = 24 * MiB, .big_bursts = 3, .rewrites = 3 };
	struct rpt_role_facts appended = { .wbytes = 24 * MiB, .big_bursts = 3, .rewrites = 1 };
	struct rpt_role_facts recurring = { .wbytes = 8 * MiB, .big_bursts = 1, .rewrites = 1,
					    .recurring = true };
	struct rpt_role_facts small_synced = { .wbytes = 4096, .synced = true };
	struct rpt_role_facts out = { .wbytes = 8 * MiB, .big_bursts = 1, .stdio = true,
				      .synced = true };
	struct rpt_role_facts pipe = { .rbytes = 100, .special = true };
	struct rpt_role_facts none = { 0 };
	struct rpt_role_facts executed = { .exec_mapped = true };

	CHECK(role("/data/train/shard-0001.tar", ro) == RPT_ROLE_DATA, "read only: data");
	CHECK(role("/usr/lib/python3.11/os.py", ro) == RPT_ROLE_CODE, "stdlib: code");
	CHECK(role("/usr/lib/python3.11/__pycache__/os.cpython-311.pyc", once) == RPT_ROLE_CODE,
	      "a .pyc written: code");
	CHECK(role("/usr/lib/python3/dist-packages/torch/utils/checkpoint.py", once) ==
	      RPT_ROLE_CODE, "torch's checkpoint.py: code");
	CHECK(role("/proc/self/stat", ro) == RPT_ROLE_OTHER, "/proc: other");
	CHECK(role("/data/shard-00.bin", shard) == RPT_ROLE_DATA, "written, synced, then read: data");
	CHECK(role("/ckpt/ckpt_step100.pt", shard) == RPT_ROLE_DATA,
	      "a checkpoint name written then read: data");
	CHECK(role("/out/state.dat", synced) == RPT_ROLE_CHECKPOINT, "synced: checkpoint");
	CHECK(role("/out/ckpt_step100.pt", once) == RPT_ROLE_CHECKPOINT, "named: checkpoint");
	CHECK(role("/out/weights.dat", once) == RPT_ROLE_OTHER, "written once, closed: other");
	CHECK(role("/out/weights.dat", rewritten) == RPT_ROLE_CHECKPOINT, "rewritten: checkpoint");
	CHECK(role("/out/weights.dat", appended) == RPT_ROLE_OTHER, "appended in bursts: other");
	CHECK(role("/out/weights_0003.dat", recurring) == RPT_ROLE_CHECKPOINT,
	      "same pattern again: checkpoint");
	CHECK(role("/out/ckpt.pt", small_synced) == RPT_ROLE_OTHER,
	      "under RPT_CKPT_MIN_BYTES: not a checkpoint");
	CHECK(role("/runs/train.log", synced) == RPT_ROLE_OTHER, "a synced log: other");
	CHECK(role("/runs/out.dat", out) == RPT_ROLE_OTHER, "stdout redirected: other");
	CHECK(role("/runs/x", pipe) == RPT_ROLE_OTHER, "a pipe: other");
	CHECK(role("/dev/shm/torch_1_2_3", none) == RPT_ROLE_OTHER, "shm segment: other");
	CHECK(role("/dev/shm/imagenet/shard-0001.tar", ro) == RPT_ROLE_DATA,
	      "data staged in /dev/shm: data");
	CHECK(role("/data/opened-only.bin", none) == RPT_ROLE_DATA, "opened, mapped: data");
	CHECK(role("/work/build/tests/demo_loader", executed) == RPT_ROLE_CODE,
	      "an executable run from anywhere (instruction fetches faulted on it): code");
}

static int pcmp(const char *a, const char *b)
{
	return rpt_path_pattern_cmp(a, strlen(a), b, strlen(b));
}

static void patterns(void)
{
	CHECK(pcmp("/r/ckpt_0001.pt", "/r/ckpt_0002.pt") == 0, "digits differ");
	CHECK(pcmp("/r/ckpt_9.pt", "/r/ckpt_10.pt") == 0, "digit runs of any length");
	CHECK(pcmp("/r/step100/model.bin", "/r/step200/model.bin") == 0, "in a folder");
	CHECK(pcmp("/r/ckpt_1.pt", "/r/ckpt_1.pth") < 0, "suffix differs");
	CHECK(pcmp("/r/a_1.pt", "/r/b_1.pt") < 0 && pcmp("/r/b_1.pt", "/r/a_1.pt") > 0, "order");
	CHECK(pcmp("/r/a1", "/r/ab") < 0 && pcmp("/r/ab", "/r/a1") > 0, "digit vs letter, both ways");
	CHECK(pcmp("/r/a", "/r/a1") < 0 && pcmp("/r/a1", "/r/a") > 0, "prefix first");
	CHECK(pcmp("/r/shard-00.bin", "/r/checkpoint-0.pt") != 0, "other names");
}

int main(void)
{
	path_table();
	decisions();
	patterns();
	return unit_done("unit_report_roles");
}
