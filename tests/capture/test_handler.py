"""What a loop handler receives from converted functions, and what its answers do."""

import numpy as np
import pytest

from gcompile.capture import UNDEFINED, convert, handling

from . import branch_programs as b
from . import programs as p


class Recorder:
    """Records every loop offered to it; declines them, runs them itself, or answers
    ``answer`` (a function of the call's record)."""

    def __init__(self, mode="decline", answer=None):
        self.mode, self.answer, self.calls = mode, answer, []

    def capture_range(self, body, start, stop, step, carried, info, reverse):
        self.calls.append(("range", (start, stop, step), reverse, carried, info))
        items = range(start, stop, step)
        return self._finish(body, reversed(items) if reverse else items, carried)

    def capture_each(self, body, iterable, carried, info):
        self.calls.append(("each", iterable, None, carried, info))
        return self._finish(body, iterable, carried)

    def _finish(self, body, items, carried):
        if self.mode == "decline":
            return NotImplemented
        if self.mode == "answer":
            return self.answer(self.calls[-1])
        for item in items:
            carried = body(item, *carried)
        return carried


def line_of(fn, offset):
    return fn.__code__.co_firstlineno + offset


@pytest.mark.parametrize("mode", ["decline", "run"])
def test_range_bounds_carried_and_info(mode):
    fn = convert(p.range_three).function
    recorder = Recorder(mode)
    with handling(recorder):
        assert fn(10, 0, -3) == p.range_three(10, 0, -3)
    [(kind, bounds, reverse, carried, info)] = recorder.calls
    assert (kind, bounds, reverse, carried) == ("range", (10, 0, -3), False, ())
    assert info.line == line_of(p.range_three, 2) and info.kind == "range"
    assert (info.target, info.carried, info.source) == ("i", (), "for i in range(a, b, c):")


@pytest.mark.parametrize("mode", ["decline", "run"])
def test_omitted_start_and_step_and_reversed(mode):
    recorder = Recorder(mode)
    with handling(recorder):
        assert convert(p.range_one).function(4) == p.range_one(4)
        assert convert(p.reversed_range).function(1, 7, 2) == p.reversed_range(1, 7, 2)
    (_, one, rev1, carried1, _), (_, three, rev3, carried3, info) = recorder.calls
    assert (one, rev1, carried1) == ((0, 4, 1), False, (0,))
    assert (three, rev3, carried3) == ((1, 7, 2), True, (0,))
    assert info.kind == "reversed_range" and info.line == line_of(p.reversed_range, 2)


@pytest.mark.parametrize("mode", ["decline", "run"])
def test_each_gets_the_evaluated_iterable(mode):
    rows = np.arange(6.0).reshape(3, 2)
    recorder = Recorder(mode)
    with handling(recorder):
        np.testing.assert_array_equal(convert(p.over_array_rows).function(rows), [20.0, 35.0])
    [(kind, iterable, _, carried, info)] = recorder.calls
    assert kind == "each" and iterable is rows and info.kind == "each"
    np.testing.assert_array_equal(carried[0], np.zeros(2))


def test_answers_set_the_carried_names():
    fn = convert(p.conditionals).function
    with handling(Recorder("answer", lambda call: (100, 200))):
        assert fn([1, 2], 0) == (100, 200)
    with handling(Recorder("answer", lambda call: (7,))):
        assert convert(p.target_after).function(0) == 7  # the target's slot
    with handling(Recorder("answer", lambda call: (1, 2, 3))):
        with pytest.raises(TypeError, match="returned 3 values for the 2 carried names"):
            fn([1], 0)


def test_unbound_names_arrive_as_undefined_and_stay_unbound():
    recorder = Recorder("answer", lambda call: call[3])  # changes nothing
    with handling(recorder):
        with pytest.raises(UnboundLocalError):
            convert(p.maybe_unbound).function(5)
    assert recorder.calls[0][3] == (False, UNDEFINED)  # (the flag of last: unbound.py)
    assert recorder.calls[0][4].carried == ("__gc_ok_last", "last")


def test_nested_loops_are_offered_from_the_body():
    recorder = Recorder("run")
    with handling(recorder):
        assert convert(p.nested).function(3, 4) == p.nested(3, 4)
    lines = [call[4].line for call in recorder.calls]
    outer, inner = line_of(p.nested, 2), line_of(p.nested, 4)
    assert lines == [outer, inner, inner, inner]
    assert [call[1] for call in recorder.calls[1:]] == [(0, 4, 1), (1, 4, 1), (2, 4, 1)]


def test_helpers_run_converted_under_a_handler():
    recorder = Recorder("run")
    with handling(recorder):
        assert convert(p.calls_helper).function(3) == p.calls_helper(3)
    assert [call[4].line for call in recorder.calls] == [line_of(p.helper_with_loop, 2)] * 2
    recorder = Recorder("run")
    assert convert(p.calls_helper).function(3) == p.calls_helper(3)  # no handler: as is
    assert recorder.calls == []


def test_methods_of_the_module_run_converted_under_a_handler():
    """``Summer().total(n)``: the class call converts ``calls_method``; the bound methods
    run converted, so ``_loop``'s loop is offered."""
    recorder = Recorder("run")
    with handling(recorder):
        assert convert(p.calls_method).function(4) == p.calls_method(4) == 12
    assert [call[4].line for call in recorder.calls] == [line_of(p.Summer._loop, 2)]


def test_shadowed_range_is_not_offered():
    recorder = Recorder("answer", lambda call: (0,))
    with handling(recorder):
        assert convert(p.shadowed_range).function(2) == p.shadowed_range(2)
    assert recorder.calls == []


def test_handler_is_per_context_and_reset():
    recorder = Recorder("decline")
    with handling(recorder):
        with handling(None):
            convert(p.range_one).function(3)
        convert(p.range_one).function(3)
    convert(p.range_one).function(3)
    assert len(recorder.calls) == 1


class Branches(Recorder):
    """Runs loops itself and is also offered ``if`` statements: records them, and declines
    (``"decline"``), answers ``answer(record)`` (``"answer"``), or else runs the ``then``
    branch whatever the test."""

    def __init__(self, branch="then", answer=None):
        super().__init__("run")
        self.branch, self.branch_answer, self.conds = branch, answer, []

    def capture_cond(self, test, then, orelse, carried, info):
        self.conds.append((test, then, orelse, carried, info))
        if self.branch == "decline":
            return NotImplemented
        if self.branch == "answer":
            return self.branch_answer(self.conds[-1])
        return then(*carried)


def test_cond_gets_the_test_both_branches_the_carried_names_and_the_info():
    fn = convert(b.clamp_all).function
    handler = Branches("then")
    with handling(handler):
        assert fn([1, 7, 3], 4) == 12  # every x taken as above 4
    assert [test for test, *_ in handler.conds] == [False, True, False]
    _, then, orelse, carried, info = handler.conds[0]
    assert (then.__name__, orelse.__name__) == ("__gc_then_0", "__gc_else_0")
    assert carried == (UNDEFINED,)  # v is not bound yet in the first iteration
    assert then(*carried) == (4,) and orelse(*carried) == (1,)  # as they ran there
    assert (info.carried, info.source, info.effects) == (("v",), "if x > hi:", ())
    assert info.line == line_of(b.clamp_all, 3) and info.end_line == line_of(b.clamp_all, 6)


def test_declined_ifs_run_as_python_and_handlers_without_capture_cond_too():
    declining = Branches("decline")
    for handler in (declining, Recorder("run"), Recorder("decline")):
        with handling(handler):
            assert convert(b.clamp_all).function([1, 7, 3], 4) == 8
            assert convert(b.crc16).function(b"abc") == b.crc16(b"abc")
    assert len(declining.conds) == 3 + 3 * 8


def test_the_test_is_passed_as_computed_not_as_a_bool():
    class Opaque:
        def __bool__(self):
            raise TypeError("bool() of a traced value")

    flag = Opaque()
    with pytest.raises(TypeError, match="traced value"):
        convert(b.negate_if).function(flag, 4)
    handler = Branches("then")
    with handling(handler):
        assert convert(b.negate_if).function(flag, 4) == -6
    [(test, *_)] = handler.conds
    assert test is flag


def test_answers_set_the_carried_names_and_are_checked():
    fn = convert(b.negate_if).function
    with handling(Branches("answer", lambda call: (100,))):
        assert fn(True, 4) == fn(False, 4) == 100
    with handling(Branches("answer", lambda call: (1, 2))):
        with pytest.raises(TypeError, match=r"the `if` handler returned 2 values for the 1 "):
            fn(True, 4)


def test_nested_ifs_are_offered_from_the_branches():
    handler = Branches("decline")
    with handling(handler):
        assert convert(b.nested_ifs).function(4, 1) == b.nested_ifs(4, 1)
    lines = [info.line for *_, info in handler.conds]
    outer, odd, even = (line_of(b.nested_ifs, k) for k in (4, 5, 11))
    assert lines == [outer, even, outer, odd, outer, even, outer, odd]
    assert [call[4].line for call in handler.calls] == [line_of(b.nested_ifs, 3)]
