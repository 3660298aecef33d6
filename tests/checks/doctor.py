"""`gpuio doctor` against the machine's own sources (t_doctor)."""
import json
import os
import re
import sys

from checks.common import Checks, load_json


def machine(docf, textf, infof):
    """t_doctor: each fact `gpuio doctor --json` (DOCF) gives, against its own
    source: uname, the BTF file, the modes and refusals a real trace recorded
    (INFOF: gpuio info --json); the text output (TEXTF) says the same"""
    d = json.load(open(docf))
    text = open(textf).read()
    info = json.load(open(infof))
    check = Checks()

    check(d["can_trace"] is True, "can_trace as root here")
    check(d["kernel"]["release"]["value"] == os.uname().release,
          f'kernel release {d["kernel"]["release"]["value"]} == uname -r')
    btf = os.path.exists("/sys/kernel/btf/vmlinux")
    check((d["kernel"]["btf"]["status"] == "ok") == btf, f"BTF ok == /sys/kernel/btf/vmlinux exists ({btf})")
    modes = info["modes"]
    for layer in ("vfs", "block", "proc", "pagecache", "io_uring", "sched", "fault"):
        check(d["attach"][layer]["value"] == modes[layer],
              f'{layer}: doctor {d["attach"][layer]["value"]} == trace {modes[layer]}')
    # the refusals a real trace recorded are the ones doctor gives for vfs
    for part in info["modes_detail"].split(";"):
        part = part.strip()
        if part.startswith("vfs "):
            check(part in d["attach"]["vfs"]["detail"], f"vfs refusal said: {part}")
    if "vfs fentry refused" in info["modes_detail"]:
        check(d["attach"]["vfs"]["status"] == "warn", "vfs below fentry is a warning")
    check(d["gpu"]["nvml"]["status"] == "no", "NVML absent here")
    # the text says the same things
    for sec in ("kernel", "attach", "gpu", "permissions"):
        for key, f in d[sec].items():
            check(re.search(r"\b%s\s+%s" % (re.escape(key), re.escape(f["value"])), text) is not None,
                  f"text has {key} {f['value']}")
    return check.status()


def stand_in_driver(path, v):
    """t_doctor: with the stand-in libcuda.so.1 the CUDA driver is the version V
    its cuDriverGetVersion returns"""
    d = json.load(open(path))
    v = int(v)
    f = d["gpu"]["cuda_driver"]
    assert f["status"] == "ok" and f"cuDriverGetVersion {v})" in f["value"], f
    assert f["value"].startswith(f"CUDA {v // 1000}.{v % 1000 // 10} "), f
    print(f"ok   stand-in driver: {f['value']}")


def cupti_listed(path, real):
    """t_doctor: CUPTI found, CUDA 13.x, the toolkit's libcupti.so.13 (REAL) among
    those listed"""
    f = json.load(open(path))["gpu"]["cupti"]
    assert f["status"] == "ok" and "(CUDA 13." in f["value"], f
    listed = [p.split(" (")[0] for p in f["detail"].split("found: ")[1].split("; ")]
    assert any(os.path.realpath(p) == real for p in listed if p.startswith("/")), (listed, real)
    print(f"ok   CUPTI: {f['value']}")


def no_driver(path):
    """t_doctor: where libcuda.so.1 does not load, doctor reports no CUDA driver"""
    f = load_json(path)["gpu"]["cuda_driver"]
    return 1 if f["status"] != "no" else 0


def cupti_override(path, real):
    """t_doctor: GPUIO_CUPTI=REAL is the CUPTI doctor uses, and it says why"""
    f = load_json(path)["gpu"]["cupti"]
    assert f["value"].startswith(real) and "GPUIO_CUPTI" in f["detail"], f


def nvml_standin(path):
    """t_doctor: through the stand-in libnvidia-ml.so.1: its 2 GPUs and driver version"""
    f = load_json(path)["gpu"]["nvml"]
    assert f["status"] == "ok" and f["value"] == "2 GPU(s), driver 999.99-standin", f
