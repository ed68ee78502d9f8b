"""Converted functions compute what the originals compute when no handler is installed."""

import traceback

import numpy as np
import pytest

from gcompile.capture import UNDEFINED, Converted, convert, convert_or_reason

from . import programs as p


def same(fn, *args, **kwargs):
    """Run ``fn`` and its conversion on copies of the arguments; compare results, raised
    exceptions and the arguments afterwards."""
    converted = convert(fn)
    assert isinstance(converted, Converted), convert_or_reason(fn)[1]
    expected, expected_args = _outcome(fn, args, kwargs)
    got, got_args = _outcome(converted.function, args, kwargs)
    _assert_equal(got, expected)
    _assert_equal(got_args, expected_args)
    return converted


def _outcome(fn, args, kwargs):
    args = [a.copy() if isinstance(a, (np.ndarray, list)) else a for a in args]
    try:
        result = fn(*args, **kwargs)
    except Exception as error:  # compared by type and message
        result = (type(error), str(error))
    return result, args


def _assert_equal(a, b):
    if isinstance(a, (tuple, list)) and not isinstance(a, np.ndarray):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_equal(x, y)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b and type(a) is type(b)


@pytest.mark.parametrize("n", [-2, 0, 1, 2, 7])
def test_range_one_argument(n):
    assert len(same(p.range_one, n).loops) == 1


@pytest.mark.parametrize("a,b", [(0, 5), (3, 3), (4, 5), (5, 2), (-3, 2)])
def test_range_two_arguments(a, b):
    same(p.range_two, a, b)


@pytest.mark.parametrize(
    "a,b,c", [(0, 10, 3), (10, 0, -3), (5, -5, -1), (0, 1, 5), (3, 3, -1), (1, 2, 1), (0, 5, 0)]
)
def test_range_three_arguments_and_reversed(a, b, c):
    same(p.range_three, a, b, c)
    converted = same(p.reversed_range, a, b, c)
    assert converted.loops[0].kind == "reversed_range"


def test_iterables():
    assert same(p.over_list, [1.0, 2.5, -3.0]).loops[0].kind == "each"
    same(p.over_list, [])
    same(p.over_array_rows, np.arange(12.0).reshape(4, 3))
    same(p.conditionals, [5, -7, 1, 9, -2], 3)
    same(p.conditionals, np.array([5, -7, 1, 9, -2]), 3)


def test_nested_loops_convert_both():
    converted = same(p.nested, 4, 6)
    same(p.nested, 0, 3)
    assert [info.target for info in converted.loops] == ["i", "j"]
    assert converted.loops[0].carried == ("s",)
    assert converted.loops[1].carried == ("t",)
    same(p.while_inside, 9)
    for n in (0, 1, 4):
        same(p.reused_target, n)
    assert [info.carried for info in convert(p.reused_target).loops] == [("i", "s")] * 2


def test_arrays_carried_and_mutated_in_place():
    same(p.carried_array, np.arange(5.0), 3)
    converted = same(p.in_place, np.arange(6.0))
    assert converted.loops[0].carried == ()


def test_target_after_the_loop():
    assert same(p.target_after, 5).loops[0].carried == ("i",)
    same(p.target_after, 0)  # UnboundLocalError in both
    with pytest.raises(UnboundLocalError):
        convert(p.target_after).function(0)


def test_names_unbound_before_the_loop():
    for n in (0, 2, 3, 5):
        same(p.maybe_unbound, n)
        same(p.read_before_assigned, n)
    same(p.reads_unbound, 0)
    same(p.iterable_reads_carried, 1)  # the iterable is built before u holds UNDEFINED
    same(p.reads_unbound, 2)
    converted = convert(p.read_before_assigned)
    assert converted.loops[0].carried == ("s",)
    with pytest.raises(UnboundLocalError):
        convert(p.reads_unbound).function(1)


def test_return_and_breaks_not_at_a_branch_end_stay_python_loops_with_reasons():
    for fn, reason in [
        (p.breaks_in_try, "contains `break`"),
        (p.returns_in_try, "`return` inside the loop"),
    ]:
        converted = same(fn, [1, 3, -1, 4])
        assert converted.loops == []
        [(line, why)] = converted.notes
        assert why == reason
        assert line == fn.__code__.co_firstlineno + 1
    same(p.breaks_in_try, [])
    same(p.returns_in_try, [0, 1])
    for fn, args in ((p.breaks, [1, 3, -1, 4]), (p.continues, 7), (p.returns_inside, [1, 3])):
        # (desugared: ``exits.py``, ``loop_returns.py``)
        assert len(same(fn, args).loops) == 1


def test_globals_stay_live_and_closures_are_shared():
    same(p.globals_and_closures, 4)
    converted = convert(p.globals_and_closures)
    assert converted.function.__globals__ is p.globals_and_closures.__globals__
    old = p.SCALE
    try:
        p.SCALE = 5
        assert converted.function(4) == p.globals_and_closures(4) == 5 * (3 * 4 + 6)
    finally:
        p.SCALE = old
    inner = p.make_closure(3)
    conv = convert(inner)
    cells = dict(zip(conv.function.__code__.co_freevars, conv.function.__closure__))
    assert cells["k"] is inner.__closure__[0]
    assert conv.function(5) == inner(5) == 30
    other = convert(p.make_closure(4)).function
    assert other(5) == 40 and conv.function(5) == 30  # one per function, not per code


def test_helpers_of_the_module_are_called():
    same(p.calls_helper, 4)
    same(p.calls_helper_in_loop, 5)
    converted, why = convert_or_reason(p.calls_helper)
    assert converted is not None and converted.loops == [], why


def test_shadowed_range_is_used():
    converted = same(p.shadowed_range, 3)
    assert converted.function(3) == 9


def test_defaults_and_keywords():
    converted = same(p.defaults, 9)
    same(p.defaults, 9, 0, step=3)
    same(p.defaults, 9, scale=2)
    assert converted.function.__defaults__ == (1,)
    assert converted.function.__kwdefaults__ == {"step": 2, "scale": 1.5}
    assert converted.function.__name__ == "defaults"
    assert converted.function.__qualname__ == p.defaults.__qualname__
    assert converted.function.__wrapped__ is p.defaults


def test_names_assigned_only_in_loops_stay_local():
    assert same(p.stays_local, 2).function(2) == "unbound"


def test_methods():
    converted = convert(p.Derived.total)
    assert converted.function(p.Derived(), 4) == p.Derived().total(4) == 10
    converted = convert(p.Derived.private)  # (``self.__v``: spelled as Python mangles it)
    ours, theirs = p.Derived(), p.Derived()
    assert converted.function(ours, 5) == theirs.private(5) == 10
    assert vars(ours) == vars(theirs) == {"_Derived__v": 10}
    converted = convert(p.Derived.keyword)  # (a call's keywords are not mangled)
    assert converted.function(p.Derived(), 3) == p.Derived().keyword(3) == 3
    converted, why = convert_or_reason(p.Derived.helper)  # (a nested def: refused, as before)
    assert converted is None and "`__twice`" in why


def test_declined_functions_have_reasons():
    cases = [
        (p.no_loop, "nothing to convert"),
        (p.generator, "generators"),
        (lambda n: [i for i in range(n)], "lambdas"),
        (len, "not a plain Python function"),
    ]
    namespace = {}
    exec("def f(n):\n    for i in range(n):\n        pass\n", namespace)
    cases.append((namespace["f"], "source is not available"))
    for fn, reason in cases:
        converted, why = convert_or_reason(fn)
        assert converted is None and reason in why, (fn, why)


def test_frame_readers_keep_python_loops():
    converted = same(p.uses_exec, 4)
    assert converted.loops == [] and "eval" in converted.notes[0][1]


def test_conversions_are_cached():
    first = convert(p.nested)
    assert convert(p.nested) is first
    assert convert(first.function) is first


def test_tracebacks_point_at_the_users_lines():
    converted = convert(p.carried_array)
    with pytest.raises(TypeError) as caught:
        converted.function(np.array(["text"]), 2)  # fails in the loop body
    frames = [f for f in traceback.extract_tb(caught.tb) if f.filename == p.__file__]
    loop_line = p.carried_array.__code__.co_firstlineno + 2
    assert [(f.name, f.lineno) for f in frames] == [
        ("carried_array", loop_line),
        ("_loop_body_0", loop_line + 1),
    ]
    assert frames[-1].line == "x = 0.5 * x + 1.0"
    info = converted.loops[0]
    assert (info.line, info.end_line, info.source) == (
        loop_line,
        loop_line + 1,
        "for _ in range(n):",
    )
    assert info.filename == p.__file__


def test_undefined_is_one_object():
    import copy
    import pickle

    assert copy.deepcopy(UNDEFINED) is UNDEFINED
    assert pickle.loads(pickle.dumps(UNDEFINED)) is UNDEFINED
    assert repr(UNDEFINED) == "UNDEFINED"


def test_recursive_functions_call_themselves_by_their_global_name():
    converted = same(p.recursive_sum, np.arange(8.0))
    assert converted.function.__name__ == "recursive_sum"
    assert converted.function.__code__.co_freevars.count("recursive_sum") == 0
    assert "def recursive_sum(x):" in converted.source


def test_changes_to_python_objects_are_the_loops_effects():
    for fn, effect in [
        (p.appends, "calls `.extend(...)` (a change to a Python container)"),
        (p.sets_attributes, "assigns the attribute `.count`"),
    ]:
        (info,) = same(fn, 5).loops
        assert info.effects == (effect,)
    assert convert(p.range_two).loops[0].effects == ()
    outer, inner = same(p.appends_nested, 4).loops  # the list is a local of the function
    assert (
        outer.effects == inner.effects == ("calls `.extend(...)` (a change to a Python container)",)
    )
    converted = same(p.grows, 4)  # (a list the function makes, appended to: rows when traced)
    assert converted.loops[0].effects == () and "__gc_rt.append_to(out, " in converted.source


def test_enumerate_zip_and_unpacked_targets_run_as_written():
    for xs in ([1, 2, 3, 4], [5], []):
        for start in (0, 3):
            converted = same(p.enumerated_pairs, xs, start)
    assert "iterate(enumerate" in converted.source and "__gc_item_0" in converted.source
    same(p.strict_zip, [1, 2], [3, 4])
    same(p.strict_zip, [1, 2], [3])
    same(p.local_zip, [1, 2])


def test_break_and_continue_become_branches_and_a_flag():
    for rows in ([3, -1, 5, 2, 7], [], [-2], [9, 9, 9]):
        for limit in (0, 4, 50):
            converted = same(p.nested_exits, rows, limit)
    assert "__gc_break_0" in converted.source and "__gc_break_1" in converted.source
    assert "break" not in converted.source.replace("__gc_break", "")


def test_returns_in_loops_become_flags_and_one_return_after_the_loop():
    for rows in ([[1, 2], [3, -4, 5], [-6]], [[1], []], [], [[-1]]):
        assert len(same(p.returns_nested, rows).loops) == 2
    for items in ([1, 9, -2], [1, -2, 9], [1, 2], []):
        assert len(same(p.returns_two, items).loops) == 1
    source = convert(p.returns_two).source
    assert "__gc_returning_0 = 2" in source and "__gc_returning_0 == 2" in source
