"""tests/checks: the Python checks of the tests/t_*.sh scripts, one module
per subject. A test runs one with `pycheck MODULE.FUNCTION ARG...`
(tests/lib.sh: python3 tests/checks/run.py ...); the function gets the
arguments as strings, prints what it checked, and returns the exit status
(None = 0) or raises (an assertion's traceback, exit 1). What computes truth
(parses a program's log or fio's report, counts what a capture must hold)
is a plain function with its unit tests in test_MODULE.py:

    python3 -m unittest discover -s tests/checks -t tests      (t_checks_unit)
"""
