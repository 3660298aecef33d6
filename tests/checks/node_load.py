"""A whole node's trace under load (t_node_load): nothing lost, and fio's
own count of its preads (total_ios, io_bytes over its jobs) found exactly
in the report of the capture."""
import json


def whole(info_f, report_f, fio_f, path):
    """INFO_F: gpuio info --json; REPORT_F: gpuio report --json; FIO_F:
    fio's JSON; PATH: the file fio read."""
    info = json.load(open(info_f))
    rep = json.load(open(report_f))
    fio = json.load(open(fio_f))
    ios = sum(j["read"]["total_ios"] for j in fio["jobs"])
    nbytes = sum(j["read"]["io_bytes"] for j in fio["jobs"])
    st = info["stats"]
    lost = {k: v for k, v in st["drops"].items() if v}
    f = [x for x in rep["files"] if x["path"] == path]
    print("records %d, dropped %d %s; fio: %d preads, %d bytes; the report: %s" % (
        st["records"], st["dropped"], lost, ios, nbytes,
        "%d reads, %d bytes" % (f[0]["read_ops"], f[0]["read_bytes"]) if f else "no such file"))
    bad = 0
    if not st["final"] or st["dropped"] or lost:
        print("FAIL: the capture lost records: %d %s" % (st["dropped"], lost))
        bad += 1
    if not f:
        print("FAIL: the report has no file %s" % path)
        return 1
    if (f[0]["read_ops"], f[0]["read_bytes"]) != (ios, nbytes):
        print("FAIL: the report's reads of %s (%d, %d bytes) are not fio's (%d, %d bytes)" % (
            path, f[0]["read_ops"], f[0]["read_bytes"], ios, nbytes))
        bad += 1
    return 1 if bad else 0
