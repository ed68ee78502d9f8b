"""The parallel-loop rewrite of loop programs (``loops.program_parallel``) on hand-written loop IR:
which loops' trips it proves independent, what their parallel copy is, and why it refuses the
others (the compiled side: ``tests/backends/test_program_parallel.py``)."""

from __future__ import annotations

import dataclasses

import numpy as np

import gcompile
from gcompile.ir.kernel import FusedKernel
from gcompile.ir.symbolic import Symbol
from gcompile.loops.nodes import (
    Affine,
    Alloc,
    Assign,
    Attr,
    BinOp,
    Call,
    CallKernel,
    Comment,
    Compare,
    Const,
    Eval,
    Item,
    Kernel,
    Let,
    Loop,
    Name,
    ObjectMode,
    Param,
    Return,
    Size,
    Slice,
    Store,
    Subscript,
    Tuple,
    Var,
)
from gcompile.loops.printer import format_kernel
from gcompile.loops.program_parallel import (
    ELEMENT,
    MAX_STATEMENTS,
    SCALE,
    Dependent,
    parallel_copy,
    parallel_program_loops,
)
from gcompile.loops.rewrite import Context

F64 = np.dtype(np.float64)
s0 = Symbol("s0", 2)
k0 = Symbol("k0", 0, s0 - 1)
a, out, k, j, t = Var("a"), Var("out"), Var("k"), Var("j"), Var("t")
buffer, row = Var("buffer"), Var("row")
AT_K = Size(k0)
ZERO = Const(0)
ALL = Slice()


def program(*body, before=(), after=(), start=ZERO, step=1, carried=()) -> Kernel:
    """A program of one top-level loop ``for k in range(start, s0, step)`` over ``body``."""
    params = (
        Param(a, ("input", 0), F64, 2),
        Param(out, ("input", 1), F64, 2),
        Param(Var("s0"), ("size", "s0"), np.dtype(np.int64)),
    )
    loop = Loop(k, start, Size(s0), step, body, kind="program", carried=carried)
    statements = (*before, loop, *after, Return((out,)))
    return Kernel("p", params, statements, (), (), symbols=((s0, Var("s0")), (k0, k)))


def verdict(kernel: Kernel) -> str:
    """``"parallel"``, or why the loop stays serial."""
    position = next(i for i, s in enumerate(kernel.body) if isinstance(s, Loop))
    try:
        parallel_copy(kernel, position)
    except Dependent as why:
        return str(why)
    return "parallel"


def copy(kernel: Kernel) -> Loop:
    position = next(i for i, s in enumerate(kernel.body) if isinstance(s, Loop))
    return parallel_copy(kernel, position)


def inner(body: tuple, var: Var = j) -> Loop:
    return Loop(var, Const(0), Size(s0), 1, body, kind="program")


def test_writes_at_the_loop_index_of_one_axis_are_independent():
    row_copy = Item(out, (AT_K, ALL)), Item(a, (AT_K, ALL))
    assert verdict(program(Store(out, Subscript((k, None)), Const(1.0)))) == "parallel"
    region_loop = Loop(t, Const(0), Item(Attr(row, "shape"), (Const(0),)), 1, ())
    through_view = (
        Let(row, Item(out, (AT_K,))),
        Loop(t, Const(0), region_loop.stop, 1, (Store(row, Subscript((t,)), Item(a, (AT_K, t))),)),
    )
    columns = (  # every access of out holds k on axis 1
        Let(t, Item(out, (Const(0), AT_K))),
        Store(out, Subscript((None, k)), Item(a, (Const(1), AT_K))),
    )
    triangle = inner((Store(out, Subscript((k, j)), Item(a, (Size(k0), j))),))
    for body in ((Assign(*row_copy),), through_view, columns, (triangle,)):
        assert verdict(program(*body)) == "parallel", body


def test_a_read_or_write_of_another_position_of_the_written_axis_refuses():
    written = "out is written beyond the trip's own index"
    previous = Assign(Item(out, (AT_K, ALL)), Item(out, (Size(k0 - 1), ALL)))
    assert verdict(program(previous)) == written
    assert verdict(program(Assign(Item(out, (Const(0), ALL)), Item(a, (AT_K, ALL))))) == written
    at_inner_index = inner((Store(out, Subscript((j, None)), Item(a, (AT_K, j))),))
    assert verdict(program(at_inner_index)) == written
    other_axis = (  # a row written, a column read: trip k reads what trip 0 writes
        Assign(Item(out, (AT_K, ALL)), Item(out, (ALL, AT_K))),
    )
    assert verdict(program(*other_axis)) == written
    shifted = (Let(row, Item(out, (Slice(Const(1), None),))), Store(row, Subscript((k,)), a))
    assert verdict(program(*shifted)) == written  # row[k] is out[k + 1]
    flat = Store(out, Affine(None, ((1, k),)), Const(0.0))
    assert verdict(program(flat)) == written
    reshaped = (
        Let(row, Call(Attr(out, "reshape"), (Tuple((Size(s0 * s0),)),))),
        Store(row, Subscript((k,)), Const(0.0)),
    )
    assert verdict(program(*reshaped)) == written  # a view whose axes it does not follow


def test_a_carried_value_refuses_but_an_array_carried_as_itself_is_dropped():
    total, step = Var("total"), Var("step")
    summed = program(
        Let(step, BinOp("+", total, Item(a, (AT_K, Const(0))))),
        before=(Let(total, Const(0.0)),),
        carried=((total, step),),
    )
    assert verdict(summed) == "a loop carrying total"
    array, alias = Var("array"), Var("alias")
    itself = program(
        Let(alias, array),
        Store(alias, Subscript((k, None)), Const(1.0)),
        before=(Let(array, out),),
        carried=((array, alias),),
    )
    parallel = copy(itself)
    assert parallel.parallel and parallel.carried == ()
    assert parallel.body == itself.body[1].body


def test_a_buffer_made_once_becomes_one_per_trip_in_the_parallel_copy():
    made = Alloc(buffer, Tuple((Const(1),)), F64, once=True)
    call = CallKernel(
        Var("_k"), ((None, buffer), (None, a), ("o0", Size(k0 * s0))), (buffer,), (a,)
    )
    kernel = program(
        call, Assign(Item(out, (AT_K, Const(0))), Item(buffer, (Const(0),))), before=(made,)
    )
    parallel = copy(kernel)
    own = parallel.body[0]
    assert isinstance(own, Alloc) and not own.once and own.var != buffer
    assert parallel.body[1].arguments[0] == (None, own.var)
    assert parallel.body[1].writes == (own.var,)
    assert kernel.body[1].body == (call, kernel.body[1].body[1])  # the serial loop keeps it
    kept = program(call, before=(made,), after=(Let(t, Item(buffer, (Const(0),))),))
    assert verdict(kept) == "a buffer made once, buffer, used beside the loop"
    inside = program(made, call)
    assert verdict(inside) == "a buffer made once for every trip, buffer"


def test_a_buffer_made_in_the_trip_is_its_own():
    made = Alloc(buffer, Tuple((Size(s0),)), F64)
    filled = inner((Store(buffer, Subscript((j,)), Item(a, (AT_K, j))),))
    assert verdict(program(made, filled, Assign(Item(out, (AT_K, ALL)), buffer))) == "parallel"
    zeros = Let(buffer, Call(Name("np.zeros"), (Tuple((Size(s0),)), Name("np.float64"))))
    assert verdict(program(zeros, filled)) == "parallel"


def test_kernel_calls_and_helpers_need_known_regions():
    unknown = CallKernel(Var("_k"), ((None, out), (None, a), ("o0", Size(k0 * s0))))
    assert verdict(program(unknown)) == "out is written beyond the trip's own index"
    in_place = CallKernel(
        Var("_k"),
        ((None, a), (None, out), ("o0", Size(k0 * s0))),
        (Item(out, (AT_K,)),),
        (a, Item(out, (AT_K,))),
    )
    assert verdict(program(in_place)) == "parallel"
    copy_args = (a, Tuple((Size(s0),)), out, Size(k0 * s0), Tuple((Const(1),)))
    copied = Eval(Call(Name("_copy_serial"), copy_args), (Item(out, (AT_K,)),))
    assert verdict(program(copied)) == "parallel"
    assert verdict(program(Eval(copied.value))) == "a call of _copy_serial in the loop body"
    from_previous = (Item(out, (Size(k0 - 1),)),) + copy_args[1:]
    shifted = Eval(Call(Name("_copy_serial"), from_previous), copied.writes)
    assert verdict(program(shifted)) == "out is written beyond the trip's own index"
    product = Eval(Call(Name("_matmul_into"), (out, a, a)))
    assert verdict(program(product)) == "a call of _matmul_into in the loop body"
    callback = ObjectMode(((t, "float64"),), (Let(t, Call(Name("np.linalg.det"), (a,))),))
    assert verdict(program(callback)) == "a ObjectMode in the loop body"
    assert verdict(program(Return((out,)))) == "a Return in the loop body"


def test_the_range_and_the_variables_must_be_the_trips_own():
    store = Store(out, Subscript((k, None)), Const(1.0))
    assert verdict(program(store, start=Size(s0 - 3))) == "a loop whose start may be negative"
    assert verdict(program(store, start=Size(s0 - 2))) == "parallel"
    assert verdict(program(store, step=2)) == "a loop of step 2"
    reused = program(Let(t, Item(a, (AT_K, Const(0)))), store, before=(Let(t, Const(0.0)),))
    assert verdict(reused) == "t is set in the trip and outside"
    read_after = program(Let(t, Item(a, (AT_K, Const(0)))), store, after=(Let(row, t),))
    assert verdict(read_after) == "t is set in the trip and outside"
    nested_parallel = Loop(j, Const(0), Size(s0), 1, (), parallel=True, kind="program")
    assert verdict(program(nested_parallel)) == "a parallel loop in the loop body"


def test_the_rewrite_keeps_loops_without_enough_work_and_respects_the_option():
    kernel = program(Store(out, Subscript((k, None)), Const(1.0)))
    # no graph node heads its statements: no work to run in parallel
    assert parallel_program_loops(kernel, Context(parallel=True, parallel_threshold=1)) is kernel
    assert parallel_program_loops(kernel, Context(parallel=False)) is kernel
    text = format_kernel(kernel)
    assert "prange" not in text


def test_the_work_test_chooses_the_parallel_copy_and_a_long_body_stays_serial():
    graph = gcompile.trace(lambda x: np.tanh(x) * 2.0, np.ones(4), stage="fused")
    kernel_node = next(n for n in graph.nodes if isinstance(n.target, FusedKernel))
    assert kernel_node.target.space == (s0,)  # (the trace's s0 is the program's: equal symbols)
    store = Store(out, Subscript((k, None)), Const(1.0))
    ctx = Context(parallel=True, parallel_threshold=100)
    chosen = parallel_program_loops(program(Comment(kernel_node), store), ctx)
    assert chosen.parallel
    test, (parallel,), (serial,) = chosen.body[0].cond, chosen.body[0].body, chosen.body[0].orelse
    elements = ELEMENT * s0 * s0  # s0 trips of the kernel's s0 elements (the store: no node)
    assert test == Compare((">=",), (Size(elements), Const(SCALE * ELEMENT * 100)))
    assert parallel.parallel and not serial.parallel
    long_body = (Comment(kernel_node),) * (MAX_STATEMENTS + 1) + (store,)
    assert not parallel_program_loops(program(*long_body), ctx).parallel
    sized_on_entry = dataclasses.replace(  # a size read from an input, not passed
        program(Comment(kernel_node), store),
        params=program().params[:2],
        entry=(Let(Var("s0"), Item(Attr(a, "shape"), (Const(0),))),),
    )
    assert parallel_program_loops(sized_on_entry, ctx).parallel
