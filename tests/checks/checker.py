"""tests/check_trace.py itself (t_checker)."""
import check_trace as ct


def totals(path):
    """t_checker: check_trace.py's files/block/info totals and ns() on the hand-
    made good trace"""
    ev = ct.load(path)
    f = ct.file_totals(ev)
    assert f["/a"]["read_bytes"] == 100 and f["/a"]["reads"] == 1, f
    b = ct.block_totals(ev)
    assert b["sda"]["read_bytes"] == 8192 and b["sda"]["reads"] == 2, b
    assert b["sda"]["write_bytes"] == 512 and b["sda"]["writes"] == 1, b
    assert ct.trace_info(ev) == {"dropped": 0, "hostname": "h"}
    assert ct.ns(1234.567) == 1234567 and ct.ns(-1.5) == -1500
