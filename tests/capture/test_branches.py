"""Converted ``if`` statements compute what the originals compute when no handler is installed;
those that must run in the function's own frame are left as written, with the reason."""

import ast
import inspect
import re
import traceback

import numpy as np
import pytest

from gcompile.capture import convert
from gcompile.capture.plan import plan_scope

from . import branch_programs as b
from .test_convert import same

CALLS = [
    (b.crc16, [(b"",), (b"abc",), (bytes(range(40)),)]),
    (b.elif_chain, [([5, -7, 0, 1],), ([5, -7, 1],)]),
    (b.bound_in_one_branch, [(3,), (1,)]),
    (b.if_around_loops, [(4, True), (4, False), (0, False)]),
    (b.walrus_tests, [([1, 3, -2, 0],), ([5],), ([],)]),
    (b.element_writes, [(np.array([-1.0, 3.0, 0.5, -2.5, 4.0]),)]),
    (b.reads_only, [([1, 5, 2], 1), ([1, -5], 1)]),
    (b.unbound_in_test, [(6,), (2,)]),
    (b.tested_once, [([1, -2, 3, 0],)]),
    (b.nested_ifs, [(6, 2), (0, 1), (5, 4)]),
    (b.while_and_try, [(12,)]),
    (b.definitions_in_branches, [([-1, 2], True), ([-1, 2], False)]),
    (b.branch_raises, [([1, 2],), ([1, -2],)]),
    (b.array_tests, [(np.array([0.7, 0.05, -0.3, 0.9]),), (np.array([0.2, -0.05]),)]),
    (b.appends_in_branch, [(5,)]),
    (b.clamp_all, [([1, 7, 3], 4), ([], 0)]),
    (b.negate_if, [(True, 4), (0, 4)]),
    (b.returns_in_branch, [([3, 1, 2],), ([1],)]),
    (b.breaks_in_branch, [([1, 2, -1, 5], True), ([1], False)]),
    (b.continues_in_branch, [(7,)]),
    (b.captured_name, [(3,), (0,)]),
    (b.deletes_name, [(3,), (1,)]),
    (b.caught_after, [([1, 2],), ([1],)]),
    (b.reads_frame, [(5,)]),
    (b.one_sided_forms, [([5, -7, 0, 1, 3], 2), ([5, -3], 2), ([1], 2), ([0, -3, 5], 2)]),
    (b.left_as_written, [([3, -1],), ([-1],), ([1, -2],)]),
    (b.returns_none_on_a_path, [(5,), (0,), (-3,)]),
    (b.chained_comparisons, [([1, 5, 9], 2, 8), ([3], 7, 1)]),
]


def line_of(fn, text):
    """The line of ``fn``'s file where its first line starting with ``text`` (stripped) is."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if line.strip().startswith(text))


@pytest.mark.parametrize(("fn", "calls"), CALLS, ids=[fn.__name__ for fn, _ in CALLS])
def test_converted_functions_compute_what_python_does(fn, calls):
    for args in calls:
        same(fn, *args)


def test_unbound_names_raise_as_in_python():
    for fn, args in [
        (b.elif_chain, ([1],)),
        (b.bound_in_one_branch, (1,)),
        (b.if_around_loops, (2, True)),
        (b.walrus_tests, ([],)),
        (b.reads_only, ([-5], 1)),
        (b.unbound_in_test, (2,)),
    ]:
        with pytest.raises(UnboundLocalError):
            convert(fn).function(*args)


def test_a_function_running_past_its_last_if_returns_none_through_its_result():
    source = convert(b.returns_none_on_a_path).source
    assert "__gc_result = None" in source and source.endswith("\n    return __gc_result")


def test_names_an_if_leaves_unbound_get_flags_unless_bound_otherwise():
    flags = lambda fn: sorted(re.findall(r"__gc_ok_(\w+) = False", convert(fn).source))  # noqa: E731
    assert flags(b.one_sided_forms) == ["a", "b", "c", "d", "e", "f"]
    assert flags(b.left_as_written) == ["v"] and flags(b.crc16) == []  # (not g, h, w)


def test_ifs_become_cond_calls_with_their_carried_names():
    (info,) = convert(b.crc16).branches
    assert info.carried == ("crc",) and info.source == "if (crc & 1) ^ (byte & 1):"
    assert (info.line, info.end_line) == (line_of(b.crc16, "if (crc"), line_of(b.crc16, "crc >>="))
    assert info.filename == b.__file__ and info.where == f"{b.__file__}:{info.line}"
    infos = convert(b.elif_chain).branches
    assert [i.source for i in infos] == ["if x > LIMIT:", "elif x < -LIMIT:", "elif x == 0:"]
    assert [i.carried for i in infos] == [
        ("big", "small", "__gc_ok_zero_seen", "zero_seen"),  # (its flag: capture/unbound.py)
        ("small", "__gc_ok_zero_seen", "zero_seen"),
        ("__gc_ok_zero_seen", "zero_seen"),
    ]
    assert {i.end_line for i in infos} == {line_of(b.elif_chain, "pass")}
    converted = convert(b.if_around_loops)
    assert [i.carried for i in converted.branches] == [("s", "__gc_ok_t", "t")]
    assert [i.carried for i in converted.loops] == [("s",), ("t",)]
    assert convert(b.element_writes).branches[0].carried == ()
    assert convert(b.reads_only).branches[1].carried == ("s", "late")  # read, perhaps unbound
    # y: read in a branch, and a walrus does not count as certainly binding it
    assert convert(b.walrus_tests).branches[0].carried == ("y", "total", "z")


def test_changes_to_python_objects_are_the_branches_effects():
    (info,) = convert(b.appends_in_branch).branches
    assert info.effects == ("calls `.extend(...)` (a change to a Python container)",)
    assert convert(b.crc16).branches[0].effects == ()


@pytest.mark.parametrize(
    ("fn", "if_line", "reason"),
    [
        (b.returns_in_branch, "if len(xs)", "`return` inside a branch"),
        (b.breaks_in_branch, "if x < 0", "contains `break`"),
        (b.continues_in_branch, "if i % 2", "contains `continue`"),
        (
            b.make_nonlocal_counter(),
            "if n > 2",
            "assigns `count`, which the function declares `nonlocal`",
        ),
        (b.captured_name, "if n > 1", "assigns `k`, which a nested function, lambda, class"),
        (
            b.deletes_name,
            "if n > 2",
            "deletes `t` (with `del` or `except ... as t`), whose value comes from before the "
            "`if` or is used after it",
        ),
        (
            b.caught_after,
            "if len(xs)",
            "assigns `a`, which this function reads after catching an exception",
        ),
        (b.reads_frame, "if i % 2", "the function calls `eval()`"),
        (b.Derived.total, "if n > 2", "calls `super()` without arguments"),
    ],
)
def test_ifs_left_as_written_have_reasons(fn, if_line, reason):
    converted = convert(fn)
    line = line_of(fn, if_line)
    [why] = [why for at, why in converted.branch_notes if at == line]
    assert why.startswith(reason), why
    assert line not in [info.line for info in converted.branches]


def test_an_if_around_a_loop_with_its_own_break_converts():
    converted = convert(b.breaks_in_branch)
    assert [i.source for i in converted.branches] == ["if flag:"]
    assert converted.notes == [(line_of(b.breaks_in_branch, "for x in"), "contains `break`")]


def test_methods_and_closures_still_run():
    assert convert(b.Derived.total).function(b.Derived(), 4) == b.Derived().total(4) == 10
    bump, reference = b.make_nonlocal_counter(), b.make_nonlocal_counter()
    converted = convert(bump).function
    assert [converted(n) for n in (3, 1, 4)] == [reference(n) for n in (3, 1, 4)] == [3, 3, 7]


def test_branches_needing_the_frame_are_refused_by_the_plan():
    tree = ast.parse(
        "async def f(x):\n"
        "    if x:\n        await x\n"
        "    if x:\n        yield x\n"
        "    if x:\n        global g\n        g = 1\n"
        "    if x:\n        pass\n"
    )
    reasons = list(plan_scope(tree.body[0]).values())
    assert reasons[:3] == [
        "`await`, `async for` or `async with` inside a branch",
        "`yield` inside a branch",
        "a `global` statement inside a branch",
    ]
    assert reasons[3].carried == ()


def test_functions_with_ifs_and_no_loop_are_converted():
    for fn in (b.only_an_if, b.only_a_returning_if):  # (the early return made one return)
        converted = convert(fn)
        assert converted.loops == [] and len(converted.branches) == 1, converted.source
        same(fn, 3)
        same(fn, -3)
    assert "__gc_result" in convert(b.only_a_returning_if).source
    converted = convert(b.calls_with_an_if)  # it calls a function of its module
    assert converted.loops == [] and len(converted.branches) == 1
    same(b.calls_with_an_if, 3)
    same(b.calls_with_an_if, -3)


def test_tracebacks_point_at_the_users_lines():
    with pytest.raises(ValueError) as caught:
        convert(b.branch_raises).function([1, -2])
    frames = [f for f in traceback.extract_tb(caught.tb) if f.filename == b.__file__]
    assert [(f.name, f.lineno) for f in frames] == [
        ("branch_raises", line_of(b.branch_raises, "for x in")),
        ("_loop_body_0", line_of(b.branch_raises, "if x < 0")),
        ("__gc_then_0", line_of(b.branch_raises, "s += int")),
    ]
