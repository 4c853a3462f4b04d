# SPDX-License-Identifier: MIT
"""The line tables of a fixed set of functions, and the line of every
instruction in them, as the running interpreter gives it: the vectors
tests/test-py-lines.c checks the decoders of core/python/py_lines.c on.

    python3.X tests/python/gen-linetables.py > tests/python/linetables/3.X.txt

One line per code object (the module, every function, lambda, class body
and comprehension in it, depth first):

    FORMAT FIRSTLINENO HEX_TABLE OFF:LINE OFF:LINE ...

FORMAT is lnotab (3.8, 3.9: co_lnotab), linetable (3.10: co_linetable) or
locations (3.11+: co_linetable); HEX_TABLE is "-" for an empty table. Each
OFF is a byte offset into co_code (3.11+: with its CACHE entries, as
frames count them), every even one; LINE is -1 where the instruction has
none. The lines come from co_lines() (3.10+) or dis.findlinestarts (3.8,
3.9: the last line start at or before the offset, which is what
f_lineno gives), and are checked against the interpreter's own
PyCode_Addr2Line, the function f_lineno calls, through ctypes.
"""
import ctypes
import dis
import sys
import types

# Lines of filler: the jumps of more than 127 and 255 lines must cross them.
FILLER = "\n".join("    # filler %d" % i for i in range(300))
BIGBODY = "\n".join("    v%d = a + %d" % (i, i) for i in range(280))
LONGLINE = " + ".join("a%d" % (i % 7) for i in range(120))

SOURCE = '''\
import os


def straight(a, b):
    c = a + b
    d = c * 2
    return d


def loops(n):
    total = 0
    for i in range(n):
        if i % 3:
            continue
        total += i
    while total > 10:
        total -= 7
        if total == 12:
            break
    else:
        total = -1
    return total


def handlers(x):
    try:
        y = 1 / x
    except ZeroDivisionError as e:
        y = str(e)
    except (TypeError, ValueError):
        y = None
    else:
        y = y + 1
    finally:
        x = 0
    with open(os.devnull) as f:
        f.read()
    return y


def outer(a):
    b = a + 1

    def inner(c):
        return a + b + c

    def counter():
        nonlocal b
        b += 1
        return b
    return inner(counter())


def comprehensions(xs):
    ys = [x * 2 for x in xs if x]
    zs = {x: y for x, y in zip(xs, ys)}
    ws = {x
          for x in ys}
    g = sum(x for x in zs)
    return ys, zs, ws, g


square = lambda v: v * v
pair = lambda v, w=3: (v,
                       w)


def gen(n):
    i = 0
    while i < n:
        yield i
        i += 1
    yield from range(3)


async def coro(x):
    await x
    return 1


def long_lines(a0, a1, a2, a3, a4, a5, a6):
    r = ''' + LONGLINE + '''
    s = [a0, a1, a2,
         a3, a4, a5, a6, r, ''' + LONGLINE + ''']
    return s


def far(a, b):
    x = a
''' + FILLER + '''
    y = b
    z = straight(x,
''' + FILLER + '''
                 y)
    while x < y:
        x += 1
''' + FILLER + '''
        if x == 5:
            break
    try:
        z += 1
''' + FILLER + '''
    finally:
        z -= 1
    return z


def big(a):
''' + BIGBODY + '''
    for i in range(a):
        a += i
''' + FILLER + '''
    return a


class Shape:
    sides = 0

    def __init__(self, n):
        self.n = n

    @property
    def area(self):
        return self.n ** 2


@staticmethod
def decorated(
        a,
        b):
    return (a
            +
            b)


def empty():
    pass


def cells(a):
    def use():
        return a
    return use
'''


def walk(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from walk(c)


def lines_lnotab(code):
    """3.8, 3.9: the last line start at or before each offset."""
    starts = list(dis.findlinestarts(code))
    out = []
    k = -1
    for off in range(0, len(code.co_code), 2):
        while k + 1 < len(starts) and starts[k + 1][0] <= off:
            k += 1
        out.append(starts[k][1] if k >= 0 else code.co_firstlineno)
    return out


def lines_ranges(code):
    """3.10+: co_lines, ranges of byte offsets, None for no line."""
    n = len(code.co_code)
    out = [-1] * (n // 2)
    for start, end, line in code.co_lines():
        for off in range(start, min(end, n), 2):
            out[off // 2] = -1 if line is None else line
    return out


def addr2line():
    try:
        f = ctypes.pythonapi.PyCode_Addr2Line
    except (AttributeError, OSError):
        return None
    f.argtypes = [ctypes.py_object, ctypes.c_int]
    f.restype = ctypes.c_int
    return f


def main():
    v = sys.version_info[:2]
    if v < (3, 8) or v > (3, 13):
        sys.exit("gen-linetables.py: Python 3.8 to 3.13, not %d.%d" % v)
    fmt = "lnotab" if v < (3, 10) else "linetable" if v == (3, 10) else "locations"
    a2l = addr2line()
    top = compile(SOURCE, "<linetables>", "exec")
    bad = 0
    for code in walk(top):
        table = code.co_lnotab if fmt == "lnotab" else code.co_linetable
        lines = lines_lnotab(code) if fmt == "lnotab" else lines_ranges(code)
        if a2l is not None:
            for i, line in enumerate(lines):
                got = a2l(code, 2 * i)
                if got != line:
                    print("%s offset %d: PyCode_Addr2Line %d, table %d" %
                          (code.co_name, 2 * i, got, line), file=sys.stderr)
                    bad += 1
        print(fmt, code.co_firstlineno, table.hex() or "-",
              " ".join("%d:%d" % (2 * i, line) for i, line in enumerate(lines)))
    if bad:
        sys.exit("gen-linetables.py: %d offsets disagree" % bad)


main()
