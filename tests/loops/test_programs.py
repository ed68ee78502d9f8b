"""Loop programs in the loop IR: their nodes' text, the allocation rewrite, and the check that
every variable is set before it is read (carried values included)."""

from __future__ import annotations

import numpy as np
import pytest

from gcompile.ir.symbolic import Symbol
from gcompile.loops.allocations import hoist_allocations
from gcompile.loops.nodes import (
    Alloc,
    Attr,
    Call,
    CallKernel,
    Const,
    Item,
    Kernel,
    Let,
    Loop,
    Name,
    Param,
    Return,
    Size,
    Slice,
    Tuple,
    Var,
)
from gcompile.loops.printer import format_kernel
from gcompile.loops.printer import format_value as text
from gcompile.loops.rewrite import Context
from gcompile.loops.verify import LoopIRError, verify

F64 = np.dtype(np.float64)
s0 = Symbol("s0")
a, k, t, out = Var("a"), Var("k"), Var("t"), Var("out")


def test_program_expressions_read_as_python():
    assert text(Item(a, (Slice(Const(1), Size(s0 - 1)), None, Const(0)))) == "a[1:s0-1, None, 0]"
    assert text(Item(a, ())) == "a[()]"
    assert text(Call(Attr(a, "reshape"), (Tuple((Size(2 * s0),)),))) == "a.reshape((2*s0,))"
    assert text(Call(Name("np.zeros"), (Tuple((Size(s0), Const(3))), Name("np.float64")))) == (
        "np.zeros((s0, 3), np.float64)"
    )


def program(body: tuple) -> Kernel:
    params = (Param(a, ("input", 0), F64, 1), Param(Var("s0"), ("size", "s0"), np.dtype(int)))
    return Kernel("p", params, body, (), (), symbols=((s0, Var("s0")),))


def loop_over(body: tuple, carried: tuple = ()) -> Loop:
    return Loop(k, Const(0), Size(s0), 1, body, kind="program", carried=carried)


def test_a_buffer_used_once_per_trip_is_made_once_before_the_loops():
    buffer = Alloc(out, Tuple((Size(s0),)), F64, once=True)
    fresh = Alloc(Var("fresh"), Tuple((Size(s0),)), F64)
    call = CallKernel(Var("_k"), ((None, out), (None, a), ("n0", Size(s0))))
    before = program((loop_over((buffer, fresh, call)), Return((a,))))
    after = hoist_allocations(before, Context())
    assert after.body[0] == buffer
    assert after.body[1].body == (fresh, call)
    assert format_kernel(after).splitlines()[1:] == [
        "  out = alloc once[(s0,)] f64 C",
        "  for k in range(s0) [program]:",
        "    fresh = alloc[(s0,)] f64 C",
        "    call _k(out, a, n0=s0)",
        "  return a",
    ]
    assert hoist_allocations(after, Context()) == after


def test_a_carried_value_is_read_after_the_body_and_must_be_set_before_the_loop():
    step = Let(Var("next"), Item(a, (Const(0),)))
    verify(program((Let(t, Const(0.0)), loop_over((step,), ((t, Var("next")),)))))
    with pytest.raises(LoopIRError, match="next"):
        verify(program((Let(t, Const(0.0)), loop_over((), ((t, Var("next")),)))))
    with pytest.raises(LoopIRError, match="out"):
        verify(program((CallKernel(Var("_k"), ((None, out),)),)))
