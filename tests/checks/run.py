#!/usr/bin/env python3
"""run.py MODULE.FUNCTION [ARG...]: run FUNCTION of tests/checks/MODULE.py with
the ARGs (strings). Exit status: what the function returns (None = 0), or
what it passes to sys.exit; an uncaught exception prints its traceback and
exits 1, as python3 does with a script. tests/ is on sys.path, so checks
import truth, check_trace, pftrace, gpu_records ... as the tests' scripts do.
"""
import importlib
import os
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)


def main():
    if len(sys.argv) < 2 or "." not in sys.argv[1]:
        raise SystemExit(__doc__)
    mod, fn = sys.argv[1].rsplit(".", 1)
    func = getattr(importlib.import_module("checks." + mod), fn)
    rc = func(*sys.argv[2:])
    sys.exit(0 if rc is None else int(rc))


if __name__ == "__main__":
    main()
