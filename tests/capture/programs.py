"""Functions with loops for the capture tests; each is run original and converted."""

import numpy as np

SCALE = 2


def range_one(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def range_two(a, b):
    s = 1
    for i in range(a, b):
        s = s * 3 + i
    return s


def range_three(a, b, c):
    out = []
    for i in range(a, b, c):
        out.append(i)
    return out, len(out)


def reversed_range(a, b, c):
    s = 0
    for i in reversed(range(a, b, c)):
        s = s * 10 + i
    return s


def over_list(items):
    total = 0.0
    for x in items:
        total += x / 2
    return total


def over_array_rows(a):
    acc = np.zeros(a.shape[1:])
    for row in a:
        acc = acc + row * row
    return acc


def nested(n, m):
    s = 0
    for i in range(n):
        t = 0
        for j in range(i, m):
            t += i * j
        s += t
    return s


def carried_array(a, n):
    x = a.copy()
    for _ in range(n):
        x = 0.5 * x + 1.0
    return x


def in_place(a):
    for i in range(a.shape[0]):
        a[i] = a[i] * 2 + i
    return a.sum()


def target_after(n):
    for i in range(n):  # noqa: B007 - read after the loop
        pass
    return i


def breaks(items):
    for x in items:
        if x < 0:
            break
    return x


def breaks_in_try(items):
    for x in items:
        try:  # (a break that is not at the end of a branch: the loop stays as written)
            if x < 0:
                break
        finally:
            pass
    return x


def returns_inside(items):
    for x in items:
        if x > 2:
            return x
    return None


def returns_in_try(items):
    for x in items:
        try:
            if x > 2:
                return x
        finally:
            pass
    return None


def continues(n):
    s = 0
    for i in range(n):
        if i % 2:
            continue
        s += i
    return s


def maybe_unbound(n):
    for i in range(n):
        if i == 2:
            last = i
    return last


def read_before_assigned(n):
    for i in range(n):
        if i > 0:
            s = s + i  # noqa: F821 - bound in the first iteration
        else:
            s = 0
    return s


def reads_unbound(n):
    for _ in range(n):
        t = q + 1  # noqa: F821 - q is bound later: this raises
    q = 0
    return t, q


def globals_and_closures(n):
    offset = 3

    def shift(v):
        return v + offset

    s = 0
    for i in range(n):
        s += shift(i) * SCALE
    return s


def make_closure(k):
    def inner(n):
        s = 0
        for i in range(n):
            s += i * k
        return s

    return inner


def helper_with_loop(n):
    s = 0
    for i in range(n):
        s += i
    return s


def calls_helper(n):
    return helper_with_loop(n) + helper_with_loop(n + 1)


class Summer:
    def total(self, n):
        return self._loop(n) + np.sum(np.arange(n))  # (np.sum: a module's, not routed)

    def _loop(self, n):
        s = 0
        for i in range(n):
            s += i
        return s


def calls_method(n):
    return Summer().total(n)


def calls_helper_in_loop(n):
    s = 0
    for i in range(n):
        s += helper_with_loop(i)
    return s


def shadowed_range(n):
    range = lambda k: [k, k, k]  # noqa: A001
    s = 0
    for i in range(n):
        s += i
    return s


def defaults(n, start=1, *, step=2, scale=1.5):
    s = 0
    for i in range(start, n, step):
        s += i * scale
    return s


def while_inside(n):
    s = 0
    for i in range(n):
        k = i
        while k > 0:
            s += k
            k //= 2
    return s


def conditionals(xs, limit):
    big = small = 0
    for x in xs:
        if x > limit:
            big += x
        elif x < -limit:
            small -= x
    return big, small


def no_loop(x):
    return x + 1


def generator(n):
    for i in range(n):
        yield i


def uses_exec(n):
    s = 0
    for i in range(n):
        s += i
    return eval("s")


def stays_local(n):
    try:
        SCALE  # noqa: B018, F823 - local here: assigned only in the loop below
        found = "global"
    except UnboundLocalError:
        found = "unbound"
    for i in range(n):
        SCALE = i  # noqa: F841
    return found


class Base:
    def total(self, n):
        return n


class Derived(Base):
    def total(self, n):
        s = super().total(n)
        for i in range(n):
            s += i
        return s

    def private(self, n):
        self.__v = 0
        for i in range(n):
            self.__v += i
        return self.__v

    def keyword(self, n):
        options = dict(__a=1)
        total = 0
        for _ in range(n):
            total += "__a" in options
        return total

    def helper(self, n):
        def __twice(v):
            return 2 * v

        total = 0
        for i in range(n):
            total += __twice(i)
        return total


def iterable_reads_carried(n):
    for x in [n, u]:  # noqa: F821 - raises: u is unbound when the list is built
        u = x
    return u


def reused_target(n):
    s = 0
    for i in range(n):
        for i in range(i):  # noqa: B020 - the same name on purpose
            s += i
        s += i  # the inner loop's s is read here only by +=
    return s, i


def recursive_sum(x):
    """Recursion: the converted function calls itself by its global name."""
    if x.shape[0] == 1:
        return x * 1.0
    return recursive_sum(x[::2]) + recursive_sum(x[1::2])[: x[::2].shape[0]]


def appends(n):
    out = []
    for i in range(n):
        out.extend([i * i])  # (``out.append``: a list grown in a loop, ``accumulations``)
    return out


def grows(n):
    out = []
    for i in range(n):
        out.append(i * i)
    return out


class Counter:
    count = 0


def sets_attributes(n):
    counter = Counter()
    for i in range(n):
        counter.count += i
    return counter.count


def appends_nested(n):
    out = []
    for i in range(n):
        for j in range(i):
            out.extend([j])
    return out


def enumerated_pairs(xs, start):
    """Unpacked targets over ``enumerate(zip(...))``: the names keep their last values."""
    s = 0
    i = a = None
    for i, (a, b) in enumerate(zip(xs, xs[1:]), start):
        s += i * a - b
    return s, i, a


def strict_zip(xs, ys):
    t = 0
    for a, b in zip(xs, ys, strict=True):  # (unequal lengths raise ValueError at the end)
        t += a * b
    return t


def local_zip(xs):
    zip = lambda *parts: [(0, 0)]  # noqa: E731  (not the builtin: called as written)
    t = 1
    for a, b in zip(xs, xs):
        t += a + b
    return t


def nested_exits(rows, limit):
    """Breaks and continues in nested loops, and the loop variables after them."""
    total = 0
    i = j = None
    for i in range(len(rows)):
        if rows[i] < 0:
            continue
        for j in range(rows[i]):
            if j * i > limit:
                break
            elif j % 2:
                continue
            total += j
        else_part = total % 5
        if else_part == 4:
            break
    return total, i, j


def returns_nested(rows):
    for r in rows:
        for v in r:
            if v < 0:
                return v, len(r)
    return 0, None


def returns_two(items):
    for i, x in enumerate(items):
        if x > 5:
            return "big", i
        if x < 0:
            return "negative", i
    return "none", -1
