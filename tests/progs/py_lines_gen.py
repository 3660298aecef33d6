"""py_lines_gen.py — ground truth for gpuio's line-table decoder
(user/python/py_lines.c): run under a CPython 3.10+, it prints, for every
instruction of a set of code objects, the line the interpreter itself gives
(code.co_lines()), with what the decoder reads:
    minor firstlineno linetable-hex lasti line
(line -1: none). build/tests/py_lines_check compares the decoder with it."""
import sys

SRC = '''
import os
def plain(path):
    with open(path, "rb") as f:
        data = f.read()
    return len(data)

def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        elif i % 3 == 1:
            total -= (
                i *
                2
            )
        else:
            while total > 100:
                total //= 2
    return total

class Dataset:
    def __getitem__(self, i):
        try:
            return self.read(i)
        except KeyError:
            raise
        finally:
            pass

    def read(self, i):
        return [x for x in range(i) if x % 2]

def gen():
    yield 1
    x = yield 2
    yield from range(x or 3)

async def coro():
    await other()

def closure():
    a = 1
    def inner():
        nonlocal a
        a += 1
        return lambda: a
    return inner
''' + "\n".join("def f%d(x):\n    return x + %d\n" % (i, i) for i in range(40)) + '''
def long_function(x):
''' + "".join("    x = x * %d + %d  # line\n" % (i, i) for i in range(300)) + "    return x\n"


def codes(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from codes(c)


def main():
    minor = sys.version_info[1]
    top = compile(SRC, "/data/gen.py", "exec")
    for co in codes(top):
        lt = co.co_linetable
        lines = {}
        for start, end, line in co.co_lines():
            for off in range(start, end, 2):
                lines[off // 2] = -1 if line is None else line
        for lasti in range(len(co.co_code) // 2):
            print(minor, co.co_firstlineno, lt.hex() or "-", lasti, lines.get(lasti, -1))


main()
