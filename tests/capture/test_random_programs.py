"""Random small programs of loops and ``if`` statements: converted and original compute the same
results and raise the same errors, with no handler and with a handler that runs every loop and
``if`` itself."""

import atexit
import importlib.util
import itertools
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gcompile.capture import convert_or_reason, handling

_DIR = Path(tempfile.mkdtemp(prefix="gcompile-capture-"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
_COUNT = itertools.count()
VARIABLES = ["s", "t", "u"]  # s and t start bound; u only when a program assigns it


def atom(draw, loop_vars, values=True):
    """A name or a small literal; ``values=False`` keeps to bounded ones (loop bounds)."""
    names = ["a", "b", "c", *loop_vars] + (VARIABLES if values else [])
    return draw(st.one_of(st.sampled_from(names), st.integers(-3, 6).map(str)))


def expression(draw, loop_vars):
    """``a + b``, or now and then a conditional expression of two such."""
    left, right = atom(draw, loop_vars), atom(draw, loop_vars)
    simple = f"{left} {draw(st.sampled_from(['+', '-', '*']))} {right}"
    if draw(st.integers(0, 4)):
        return simple
    return f"({simple} if {condition(draw, loop_vars)} else {atom(draw, loop_vars)})"


def condition(draw, loop_vars):
    """``x > y``, perhaps joined by ``and``/``or`` with another, perhaps under ``not``."""
    test = f"{atom(draw, loop_vars)} > {atom(draw, loop_vars)}"
    joint = draw(st.sampled_from(["", "", " and ", " or "]))
    if joint:
        test = f"{test}{joint}{atom(draw, loop_vars)} < {atom(draw, loop_vars)}"
    return f"not ({test})" if draw(st.integers(0, 3)) == 0 else test


def iterable(draw, loop_vars):
    bounds = [atom(draw, loop_vars, values=False) for _ in range(draw(st.integers(1, 3)))]
    if len(bounds) == 3:
        bounds[2] = str(draw(st.sampled_from([-3, -2, -1, 1, 2, 3, 0])))  # 0: ValueError
    call = f"range({', '.join(bounds)})"
    kind = draw(st.sampled_from(["range", "range", "reversed", "list", "enumerate"]))
    if kind == "reversed":
        return f"reversed({call})"
    if kind == "enumerate":  # (the target unpacks: ``for k, i in enumerate(...)``)
        return f"enumerate({call}, {draw(st.integers(-2, 2))})"
    if kind == "list":
        return f"[{', '.join(atom(draw, loop_vars) for _ in range(3))}]"
    return call


def block(draw, indent, loop_vars):
    """One to three statements at ``indent`` spaces, as lines."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        lines += statement(draw, indent, loop_vars)
    return lines


def statement(draw, indent, loop_vars):
    """One statement (an assignment, an ``if`` perhaps with ``elif``, a ``for``, a ``break`` in
    loops), as lines."""
    pad = " " * indent
    nest = indent < 16  # at most three compound statements deep
    kinds = ["assign", "augment"] + (["if", "for"] if nest else [])
    kinds += ["break", "continue"] if loop_vars else []
    kinds += ["return"] if not loop_vars else []  # (an early return, merged: ``returns.py``)
    kind = draw(st.sampled_from(kinds))
    name = draw(st.sampled_from(VARIABLES))
    if kind == "assign":
        return [f"{pad}{name} = ({expression(draw, loop_vars)}) % 997"]
    if kind == "augment" and draw(st.booleans()):
        return [f"{pad}{name} += ({expression(draw, loop_vars)}) % 7"]
    if kind == "augment":
        return [f"{pad}{name} = ({name} + {expression(draw, loop_vars)}) % 997"]
    if kind == "return":
        return [f"{pad}if {condition(draw, loop_vars)}:", f"{pad}    return {expression(draw, [])}"]
    if kind in ("break", "continue"):
        return [f"{pad}if {expression(draw, loop_vars)} > 5:", f"{pad}    {kind}"]
    if kind == "if":
        lines = [f"{pad}if {condition(draw, loop_vars)}:"]
        lines += block(draw, indent + 4, loop_vars)
        if draw(st.booleans()):
            lines += [f"{pad}elif {condition(draw, loop_vars)}:"]
            lines += block(draw, indent + 4, loop_vars)
        if draw(st.booleans()):
            lines += [f"{pad}else:", *block(draw, indent + 4, loop_vars)]
        return lines
    target = f"i{len(loop_vars)}"
    iterated = iterable(draw, loop_vars)
    unpacked = f"k{len(loop_vars)}, {target}" if iterated.startswith("enumerate") else target
    lines = [f"{pad}for {unpacked} in {iterated}:"]
    return lines + block(draw, indent + 4, [*loop_vars, target])


@st.composite
def programs(draw):
    lines = ["def program(a, b, c):", "    s = 0", "    t = 1"]
    lines += block(draw, 4, [])
    result = draw(st.sampled_from(["s, t", "s, t, u", "s, i0", "t"]))
    return "\n".join([*lines, f"    return {result}", ""])


def load(source):
    """The ``program`` function of ``source``, imported from a file of its own."""
    path = _DIR / f"program_{next(_COUNT)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


def outcome(fn, args):
    try:
        return fn(*args)
    except Exception as error:
        return type(error), str(error)


class RunsLoops:
    """A handler that runs every loop and ``if`` itself, through the functions it is given."""

    def capture_range(self, body, start, stop, step, carried, info, reverse):
        items = range(start, stop, step)
        return self.capture_each(body, reversed(items) if reverse else items, carried, info)

    def capture_each(self, body, iterable, carried, info):
        for item in iterable:
            carried = body(item, *carried)
        return carried

    def capture_cond(self, test, then, orelse, carried, info):
        return then(*carried) if test else orelse(*carried)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.tuples(*[st.integers(-3, 6)] * 3))
def test_random_programs_match(source, args):
    original = load(source)
    converted, why = convert_or_reason(original)
    if converted is None:
        assert "nothing to convert" in why, why
        return
    event(f"{len(converted.loops)} loops converted, {len(converted.notes)} left")
    event(f"{len(converted.branches)} ifs converted, {len(converted.branch_notes)} left")
    expected = outcome(original, args)
    assert outcome(converted.function, args) == expected, converted.source
    with handling(RunsLoops()):
        assert outcome(converted.function, args) == expected, converted.source
