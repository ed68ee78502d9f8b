# ruff: noqa: B007, F821, F841 - user-code styles (unused loop variables, names bound later)
"""Functions with ``if`` statements for the capture tests; each is run original and converted.

A function converts only when it has a ``for`` loop (or calls a helper of its module), so the
ones whose ``if`` is outside a loop have one beside it.
"""

import numpy as np

LIMIT = 3


def crc16(data):
    """Data-dependent branches assigning a loop's carried variable."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            if (crc & 1) ^ (byte & 1):
                crc = (crc >> 1) ^ 0xA001
            else:
                crc >>= 1
            byte >>= 1
    return crc


def elif_chain(xs):
    """``elif`` chains, augmented assignments, a name bound in one branch only."""
    big = small = 0
    for x in xs:
        if x > LIMIT:
            big += x
        elif x < -LIMIT:
            small -= x
        elif x == 0:
            zero_seen = True
        else:
            pass
    return big, small, zero_seen


def bound_in_one_branch(n):
    """UnboundLocalError after the ``if`` when the branch that binds did not run."""
    s = 0
    for i in range(n):
        s += i
    if s > 3:
        found = s
    return found


def if_around_loops(n, flag):
    """Loops inside branches; ``t`` unbound after when ``flag``."""
    s = 0
    if flag:
        for i in range(n):
            s += i
    else:
        t = 3
        for i in range(n):
            t = t * 2 + i
    return s, t


def walrus_tests(xs):
    """A walrus in the test (and in an ``elif``'s) assigns in the enclosing scope."""
    total = 0
    for x in xs:
        if (y := x * 2) > 4:
            total += y
        elif (z := x - 1) < 0:
            total -= z
    return total, y


def element_writes(a):
    """Array elements written in branches (the array is read, not rebound)."""
    for i in range(a.shape[0]):
        if a[i] < 0:
            a[i] = -a[i]
        elif a[i] > 2:
            a[i] = a[i] * 2
    return a.sum()


def reads_only(xs, k):
    """Names only read in branches: parameters, locals, and a local bound later (raises)."""
    s = 0
    offset = 10
    for x in xs:
        if x > k:
            s = s + x + offset
        elif x < -k:
            s = s - late
    late = 1
    return s


def unbound_in_test(n):
    """The test reads a name perhaps unbound: it raises before either branch runs."""
    for i in range(n):
        pass
    if n > 5:
        u = 1
    if u > 0:
        u = 2
    return u


def tested_once(xs):
    """The test is evaluated exactly once per ``if``."""
    calls = []

    def probe(v):
        calls.append(v)
        return v > 0

    s = 0
    for x in xs:
        if probe(x):
            s += 1
        else:
            s -= 1
    return s, calls


def nested_ifs(a, b):
    """Ifs nested in branches, in a loop; a name assigned in every branch."""
    out = []
    for i in range(a):
        if i % 2:
            if i > b:
                kind = "odd big"
            else:
                kind = "odd small"
        else:
            kind = "even"
            if i == b:
                kind = "even b"
        out.append(kind)
    return out, kind


def while_and_try(n):
    """Ifs inside a ``while`` and a ``try``; an ``except ... as`` inside a branch."""
    s = 0
    for i in range(n):
        k = i
        while k > 0:
            if k % 3 == 0:
                try:
                    s += 10 // (k - 3)
                except ZeroDivisionError as error:
                    s -= len(str(error))
            k //= 2
    return s


def definitions_in_branches(xs, flag):
    """A function defined or chosen in a branch, used after the ``if``."""
    if flag:

        def step(v):
            return v + 1

    else:
        step = abs
    s = 0
    for x in xs:
        s += step(x)
    return s


def branch_raises(xs):
    """An exception raised in a branch propagates as it would."""
    s = 0
    for x in xs:
        if x < 0:
            s += int("not a number")
        s += x
    return s


def array_tests(x):
    """Tests on NumPy values: 0-d arrays and NumPy scalars."""
    acc = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            acc[i] = 1.0
        elif np.abs(x[i]) < 0.1:
            acc[i] = -1.0
    if x.sum() > 1:
        acc = acc * 2
    return acc


def appends_in_branch(n):
    out = []
    for i in range(n):
        if i % 2:
            out.extend([i])
    return out


# ------------------------------------------------------------------- ifs left as written


def returns_in_branch(xs):
    """The outer ``if`` keeps a return that is not at its end (the inner one's merges)."""
    for x in xs:
        pass
    if len(xs) > 2:
        if xs[0] > 0:
            return xs[0]
        xs = xs[1:]
    return None


def breaks_in_branch(xs, flag):
    """The ``if`` with ``break`` stays; the one around a loop with its own ``break`` converts.
    (A ``break`` in a ``try`` is not at the end of a branch: the loop keeps it.)"""
    s = 0
    if flag:
        for x in xs:
            if x < 0:
                try:
                    break
                finally:
                    s -= 1
            s += x
    return s


def continues_in_branch(n):
    s = 0
    for i in range(n):
        if i % 2:
            try:
                continue
            finally:
                s -= 1
        s += i
    return s


def make_nonlocal_counter():
    count = 0

    def bump(n):
        nonlocal count
        for i in range(n):
            pass
        if n > 2:
            count += n
        return count

    return bump


def captured_name(n):
    k = 1
    for i in range(n):
        pass
    if n > 1:
        k = n
    get = lambda: k
    return get()


def deletes_name(n):
    t = n
    for i in range(n):
        pass
    if n > 2:
        del t
    return n


def caught_after(xs):
    a = 0
    for x in xs:
        pass
    try:
        if len(xs) > 1:
            a = 1
            xs[10]
    except IndexError:
        pass
    return a


def reads_frame(n):
    s = 0
    for i in range(n):
        if i % 2:
            s += i
    return eval("s")


class Base:
    def total(self, n):
        return n


class Derived(Base):
    def total(self, n):
        s = 0
        for i in range(n):
            s += i
        if n > 2:
            s += super().total(n)
        return s


# ------------------------------------------------------------------- for the handler tests


def clamp_all(xs, hi):
    out = 0
    for x in xs:
        if x > hi:
            v = hi
        else:
            v = x
        out += v
    return out


def negate_if(flag, n):
    s = 0
    for i in range(n):
        s += i
    if flag:
        s = -s
    return s


# ------------------------------------------------------------------- not converted


def only_an_if(x):
    if x > 0:
        x = -x
    return x


def only_a_returning_if(x):
    if x > 0:
        return 1
    return 0


def calls_with_an_if(x):
    if x > 0:
        x = only_an_if(x)
    return x


def one_sided_forms(xs, k):
    """Names an ``if`` binds on one side only, in every plain form (they get flags)."""
    total = 0
    for x in xs:
        if x > k:
            a, (b, c) = x, (x + 1, x + 2)
            d: int = x
        elif x < -k:
            for e in range(x, 0):
                pass
        if x == 0:
            f = 1
        if x % 2:
            f += 1  # (read first: raises where no branch bound f)
        total += a + b + c + d
    return total, e, f


def left_as_written(xs):
    """Names an ``if`` binds on one side only that keep no flag: read by a nested scope,
    deleted, bound by a walrus."""
    for x in xs:
        if x > 0:
            g = x
            h = x
            if (w := x) > 1:
                del h
        if x < 0:
            v = [g * 2 for _ in range(2)]
    return g, (lambda: g)(), w, v


def returns_none_on_a_path(x):
    """Returns from an ``if``/``elif`` without ``else``: None past its end (made explicit)."""
    if x > 0:
        return x * 2
    elif x < 0:
        return -x


def chained_comparisons(xs, lo, hi):
    """Chains evaluate each operand once, the later ones only while the comparisons hold."""
    seen = []

    def probe(v):
        seen.append(v)
        return v

    flags = [lo < x <= hi for x in xs] + [hi > x != lo for x in xs]
    return flags, lo > probe(hi) < probe(99), probe(lo) <= probe(hi) <= probe(hi * 2), seen
