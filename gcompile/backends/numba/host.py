"""The host function: the whole graph as one generated Python function.

It unpacks the inputs, reads the symbolic sizes from their shapes (``s0, s1 =
v_x.shape``), allocates each kernel's outputs and calls the compiled kernel with
the arrays themselves, scalars, and the integers the kernel asks for computed from
the sizes (``kernels``: ``kernel(out, v_x, n0=s0 - 2, o0=s1 + 1, st0=s1)``), runs
matrix products through NumPy's own call (``np.matmul``/``np.dot``, so the
same multi-threaded BLAS as eager NumPy) writing into a pooled buffer, runs every
other node (copies, concatenations, write-backs into the caller's arrays) with the
op's NumPy implementation exactly as the interpreter does, releases each value
after its last use, and returns the outputs. A call costs one guard check (in
``api``) and one pass through this function. Its source is kept (``fn.code``).

A kernel the code generator has no template for, and any other op holding
sub-graphs (``ir/subgraph.py``), runs in the interpreter through its op's
``interpret``; the host records why (``notes``) and the backend warns.

An ``epilogue`` kernel (the pointwise ops after a matrix product) makes one serial
pass over the result, in place in the product's buffer when nothing else reads the
product and the result has its dtype (``FusedKernel.inplace_input``). Not
``prange``: OpenBLAS's worker threads busy-wait for about 0.1 s after each call
(measured: 100 ms of CPU time in a 0.2 s sleep after a 2048x1024 @ 1024x1024
product), so a parallel loop right after it finds no free core, and its barrier
waits for the scheduler. Measured
right after such a product (2 shared cores, ``OMP_WAIT_POLICY=PASSIVE`` as set on
import, Numba's ``omp`` layer): a bias+ReLU pass over the 2048x1024 float32 result
took 3-7 ms median in parallel (up to 28 ms with spinning OpenMP threads), 0.5 ms
serially; a GELU pass was no faster in parallel (19 ms) than serially (14-18 ms).
"""

from __future__ import annotations

import functools
import operator
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ...errors import UnsupportedError
from ...ir import ops
from ...ir.graph import Graph, Node, last_uses, map_arg, nodes_in
from ...ir.kernel import FusedKernel
from ...ir.shape_env import concrete, data_size_bindings, is_symbolic
from ...ir.subgraph import subgraphs_of
from ...ir.symbolic import is_expr, product_of
from ...loops.nodes import (
    Assign,
    Attr,
    Call,
    Comment,
    Const,
    Eval,
    Item,
    Kernel,
    Let,
    Name,
    Param,
    Release,
    Return,
    Size,
    Tuple,
    Var,
    size_of,
)
from .. import interpreter
from . import codegen, copies, kernels, scans
from .host_programs import ProgramCalls
from .host_programs import host_variable as _variable
from .kernel_calls import KernelCalls
from .render import Namespace, render


@dataclass
class HostProgram:
    """A compiled graph: the callable and everything it is made of, for inspection."""

    run: Callable[[list], list]
    source: str
    kernels: list = field(default_factory=list)  # (KernelCode, Loaded) per compiled variant
    variants: list = field(default_factory=list)  # every kernels.Variant, compiled or not yet
    notes: list = field(default_factory=list)  # kernels left to the interpreter, and why
    callbacks: list = field(default_factory=list)  # library calls loop programs call back for
    loops: list = field(default_factory=list)  # (name, source) of each compiled loop nest
    whole: str = ""  # whether the host is one Numba function (a graph with loops), and why not
    # the whole program when a call may go to it straight (``program_entry.ProgramEntry``)
    entry: Any = None
    kernel_compiles: int = 0
    disk_cache_hits: int = 0
    timings: dict = field(default_factory=dict)

    @property
    def code(self) -> str:
        """The host function and every kernel, readable (node names, IR lines as comments)."""
        parts = [self.source] + ([f"# {self.whole}"] if self.whole else [])
        for name, source in self.loops:
            parts.append(f"# loop {name} (one Numba function)\n{source}")
        for variant in self.variants:
            code, loaded = variant.code, variant.loaded
            flags = f"parallel={code.parallel}, fastmath={code.fastmath_flags}"
            if loaded is None:
                origin = "  [compiled on its first call]"
            elif loaded.path:
                origin = f"  [{loaded.event}: {loaded.path.name}]"
            else:
                origin = f"  [{loaded.event}]"
            called = f" (called as {variant.called_as})" if variant.called_as else ""
            heading = f"# kernel {code.name}{called}, {variant.role} ({flags}){origin}"
            parts.append(f"{heading}\n{code.readable}")
        for note in self.notes:
            parts.append(f"# {note}")
        return "\n\n".join(parts)


def _references_of_a_listed_object() -> int:
    """What ``sys.getrefcount(held[i])`` says for an object only the list ``held`` holds."""
    held = [object()]
    return sys.getrefcount(held[0])


_ONLY_LISTED = _references_of_a_listed_object()


class BufferPool:
    """Large output buffers of earlier calls, handed out again once nobody else holds them.

    Writing into freshly allocated memory costs a page fault and a page of zeroes per 4 KiB
    (measured: 14.7 GB/s instead of 34.9), which would dominate a kernel running at memory
    speed. An array the host made is kept here; when a later step or call needs the same shape,
    dtype and order and the reference count shows that only the pool still holds it (the caller
    dropped it, and no view of it exists, since a view references its base), it is reused.
    Arrays under ``MIN_BYTES`` (the C library's first threshold for giving an allocation pages of
    its own) are left to NumPy's allocator, whose heap keeps them; larger ones it may map afresh
    on every call (measured: 1760 page faults a call on 15 steps of 512 KiB temporaries, the
    program 6x slower than eager NumPy). At most ``keep`` buffers per kind are held.
    """

    MIN_BYTES = 1 << 17

    def __init__(self, keep: int = 2):
        self.keep = keep
        self.free: dict[tuple, list] = {}
        self.lock = threading.Lock()

    def empty(self, shape: tuple, dtype: np.dtype, order: str) -> np.ndarray:
        """An array to overwrite completely: a released buffer, or a new one."""
        key = (shape, dtype, order)
        held = self.free.get(key)
        if held:
            with self.lock:
                for i in range(len(held)):
                    if sys.getrefcount(held[i]) <= _ONLY_LISTED:
                        if _unchanged(held[i], shape):
                            return held[i]
                        del held[i]  # (its caller reshaped it in place, or made it read-only)
                        break
        array = np.empty(shape, dtype, order=order)
        if array.nbytes >= self.MIN_BYTES:
            with self.lock:
                held = self.free.setdefault(key, [])
                held.append(array)
                if len(held) > self.keep:
                    held.pop(0)
        return array


def _unchanged(array: np.ndarray, shape: tuple) -> bool:
    """Whether a pooled array still has the shape it was made with and can be written (its
    caller may have set ``.shape`` or ``.flags.writeable``)."""
    return array.shape == tuple(shape) and array.flags.writeable


class _HostLowering(ProgramCalls, KernelCalls):
    """Lowers a graph into the statements of its host function (loop IR, rendered as Python)."""

    def __init__(self, graph: Graph, options: dict):
        self.graph = graph
        self.options = options
        self.statements: list = []
        self.pool = BufferPool()
        self.globals: dict[str, Any] = {"np": np, "_empty": self.pool.empty}
        self.program = HostProgram(run=None, source="")
        env = graph.shape_env
        # symbol -> host variable, for the symbols the graph still uses (not those replaced)
        self.sizes = {s: s.name for s in env.sources if s not in env.replacements}
        self.data_sizes: list = []  # the lengths the data decide bound so far (``bind_data_sizes``)
        self.lazy: list = []  # kernels.LazyKernel stubs, told the namespace once it exists
        self.orders: dict[Node, list] = {}  # a kernel node -> the order of each output it makes

    def emit(self, statement) -> None:
        self.statements.append(statement)

    def let(self, node: Node, expression) -> None:
        """``node``'s value, under its IR line."""
        self.emit(Comment(node))
        self.emit(Let(Var(_variable(node)), expression))

    def value(self, value):
        return Var(_variable(value)) if isinstance(value, Node) else self.literal(value)

    def size(self, value):
        return size_of(value)

    def constant(self, node: Node) -> None:
        name = f"_const_{node.name}"
        self.globals[name] = node.target
        fresh = node.returned and isinstance(node.target, np.ndarray)
        self.let(node, Call(Attr(Name(name), "copy")) if fresh else Name(name))

    def generic(self, node: Node) -> None:
        """A node run by its op's NumPy implementation; symbolic parameters are passed
        computed from the sizes (``_op_reshape_1(v_x, shape=(s0 * s1,))``). An operator on
        NumPy scalars is the operator itself, as eager runs it (``ops.evaluate``), called
        directly: a scalar step then costs a call of ``operator.__truediv__``, not a runner."""
        if _scalar_operator(node):
            function = f"_operator_{node.target.dunder}"
            self.globals[function] = getattr(operator, f"__{node.target.dunder}__")
            operands = []
            for position, value in enumerate(node.args):
                if isinstance(value, Node):
                    operands.append(self.value(value))
                else:  # (a number literal, as the operator receives it)
                    self.globals[f"_literal_{node.name}_{position}"] = value
                    operands.append(Name(f"_literal_{node.name}_{position}"))
            self.let(node, Call(Name(function), tuple(operands)))
            return
        evaluate = functools.partial(interpreter.evaluate_node, node)
        given = [(key, self.literal(v)) for key, v in node.kwargs.items() if is_symbolic(v)]
        self.call_runner(node, f"_op_{node.name}", evaluate, given)

    def interpreted(self, node: Node, what: str, reason: str) -> None:
        """``node`` (holding sub-graphs) run by its op's ``interpret`` in the interpreter, at
        the call's sizes."""
        plans = interpreter.plans_of(node)

        def evaluate(args, kwargs, sizes=None):
            kwargs = kwargs if sizes is None else concrete(kwargs, sizes)
            return node.target.interpret(interpreter.run_graphs(plans, sizes), args, kwargs)

        symbolic = is_symbolic(node.kwargs) or any(plan.symbolic for plan in plans.values())
        given = [("sizes", self.sizes_dict())] if symbolic else []
        self.call_runner(node, f"_interpret_{node.name}", evaluate, given)
        self.program.notes.append(f"{what} {node.name} runs in the interpreter: {reason}")

    def call_runner(self, node: Node, name: str, evaluate: Callable, given: list) -> None:
        """Emit a call of global ``name``, which runs ``evaluate(args, kwargs)`` for ``node``
        (keywords ``given`` replace or add parameters)."""
        inputs = node.all_input_nodes
        self.globals[name] = _node_runner(node, inputs, evaluate)
        arguments = tuple(self.value(v) for v in inputs)
        self.let(node, Call(Name(name), arguments, tuple(given)))

    def literal(self, value: Any):
        """The expression of a parameter holding symbolic sizes: sizes from the host's size
        variables, other objects through globals."""
        if is_expr(value):
            return Size(value)
        if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # a store's ViewStep
            kind = self.global_of(type(value))
            return Call(kind, tuple(self.literal(v) for v in value))
        if isinstance(value, tuple):
            return Tuple(tuple(self.literal(v) for v in value))
        if isinstance(value, list):
            return Call(Name("list"), (Tuple(tuple(self.literal(v) for v in value)),))
        if isinstance(value, slice):
            parts = (value.start, value.stop, value.step)
            return Call(Name("slice"), tuple(self.literal(p) for p in parts))
        if value is None or value is Ellipsis or type(value) in (bool, int, str):
            return Const(value)
        return self.global_of(value)

    def global_of(self, value: Any) -> Name:
        """A new global of the host function holding ``value``."""
        name = f"_literal_{len(self.globals)}"
        self.globals[name] = value
        return Name(name)

    def product(self, node: Node) -> None:
        """A ``matmul``/``dot`` node: NumPy's own call, writing into a buffer from the pool.

        A fresh result per call would pay a page fault per 4 KiB written (see ``BufferPool``).
        """
        meta = node.meta
        result = Var(_variable(node))
        keywords = [("out", result)]
        if node.kwargs.get("dtype") is not None:
            keywords.append(("dtype", self.dtype_name(np.dtype(node.kwargs["dtype"]))))
        function = Name("np.matmul" if node.target is ops.MATMUL else "np.dot")
        buffer = (self.shape(meta.shape), self.dtype_name(meta.dtype), Const("C"))
        self.let(node, Call(Name("_empty"), buffer))
        operands = tuple(self.value(v) for v in node.args)
        self.emit(Eval(Call(function, operands, tuple(keywords))))

    def scan(self, node: Node) -> None:
        """A scan (``cumsum``, ``np.maximum.accumulate``): the loop of ``scans``, into a buffer
        from the pool."""
        meta = node.meta
        self.globals["_accumulate"] = scans.accumulate
        buffer = (self.shape(meta.shape), self.dtype_name(meta.dtype), Const("C"))
        self.let(node, Call(Name("_empty"), buffer))
        kind = Const(scans.kind_of(node))
        operands = (self.value(node.args[0]), Var(_variable(node)), Const(node.kwargs.get("axis")))
        self.emit(Eval(Call(Name("_accumulate"), (*operands, kind))))

    def copy(self, node: Node) -> bool:
        """A store copying a temporary into a region: the copy loop of ``copies`` (False for
        another store, which NumPy's assignment runs)."""
        base, value = self.value(node.args[0]), node.args[1]
        if not isinstance(value, Node):
            return False
        threshold, parallel = self.options["parallel_threshold"], self.options.get("parallel", True)
        statements = copies.copy_statements(
            node, self.value(value), base, self.order_of(value), threshold, parallel
        )
        if statements is None:
            return False
        self.globals.update(_copy_serial=copies.copy_serial, _copy_parallel=copies.copy_parallel)
        self.emit(Comment(node))
        self.statements += statements
        self.emit(Let(Var(_variable(node)), base))
        return True

    def dtype_name(self, dtype: np.dtype) -> Name:
        """The host function's global holding ``dtype``."""
        name = f"_{dtype.name}"
        self.globals.setdefault(name, dtype)
        return Name(name)

    def kernel(self, node: Node) -> None:
        kernel: FusedKernel = node.target
        start = time.perf_counter()
        try:
            found = kernels.variants(kernel, self.options)
        except codegen.NoTemplate as missing:
            self.interpreted(node, "kernel", str(missing))
            return
        self.program.timings[f"codegen {kernel.name}"] = time.perf_counter() - start
        size, threshold = product_of(kernel.space), int(self.options["parallel_threshold"])
        needed = kernels.first_needed(found, size, threshold, self.graph.shape_env)
        for variant in found:
            self.variant(kernel, node, variant, compile_now=variant is needed)
        self.emit(Comment(node))
        self.emit(Let(Var(_variable(node)), self.kernel_call(node, found, threshold)))

    def variant(self, kernel: FusedKernel, node: Node, variant, compile_now: bool) -> None:
        """Put ``variant`` in the host's globals: compiled now, or on its first call."""
        name = f"_{variant.role}_{node.name}"
        self.program.variants.append(variant)

        def compile_variant():
            function = kernels.load(kernel, variant, self.program)
            self.program.kernels.append((variant.code, variant.loaded))
            return function

        if compile_now:
            self.globals[name] = compile_variant()
        else:
            self.globals[name] = stub = kernels.LazyKernel(name, compile_variant)
            self.lazy.append(stub)

    def output_buffer(self, node: Node, position: int, meta, order: str, last: bool) -> Var:
        """A kernel's output buffer from the pool (or, for its last output, the product buffer
        it writes into)."""
        kernel, out = node.target, Var(f"_out{position}_{node.name}")
        if kernel.inplace_input is not None and last:
            self.emit(Let(out, self.value(node.args[kernel.inplace_input])))
        else:
            shape = self.shape(meta.shape if meta.ndim else (1,))
            buffer = (shape, self.dtype_name(meta.dtype), Const(order))
            self.emit(Let(out, Call(Name("_empty"), buffer)))
        return out

    def kernel_function(self, node: Node, variant, position: int) -> Var:
        return Var(f"_{variant.role}_{node.name}")

    def scalar_argument(self, value: Node):
        """A scalar operand: a 0-d array's element (``v_x[()]``)."""
        meta = value.meta
        return self.value(value) if meta.weak or meta.scalar else Item(self.value(value), ())

    def viewed(self, value: Node, views: tuple):
        """An input without a layout promise, through its views (at the call's sizes)."""
        helper = self.global_of(_view_applier(views))
        return Call(helper, (self.value(value), self.sizes_dict()))

    def sizes_dict(self):
        """The host variable holding every symbol's value by symbol (made once, on entry),
        with the lengths the data decide bound so far added."""
        if "_symbols" not in self.globals:
            self.globals["_symbols"] = tuple(s for s in self.sizes if s not in self.data_sizes)
        if not self.data_sizes:
            return Var("_sizes")
        self.globals["_with_sizes"] = _with_sizes
        bound = Tuple(tuple(Var(s.name) for s in self.data_sizes))
        return Call(
            Name("_with_sizes"), (Var("_sizes"), self.global_of(tuple(self.data_sizes)), bound)
        )

    def size_bindings(self) -> list:
        """``(s0, s1) = v_x.shape``: each symbolic size read from the input it comes from
        (``s2 = v_n``: an int argument traced as a symbol)."""
        by_input: dict = {}
        statements = []
        placeholders = self.graph.placeholders
        for symbol, name in self.sizes.items():
            position, axis = self.graph.shape_env.sources[symbol]
            if axis is None:  # a Python int argument, itself the size
                statements.append(Let(Var(name), self.value(placeholders[position])))
            else:
                by_input.setdefault(position, {})[axis] = name
        for position, axes in by_input.items():
            ndim = placeholders[position].meta.ndim
            targets = Tuple(tuple(Var(axes.get(axis, "_")) for axis in range(ndim)))
            statements.append(Assign(targets, Attr(self.value(placeholders[position]), "shape")))
        return statements

    def build(self) -> HostProgram:
        graph = self.graph
        names = tuple(self.value(p) for p in graph.placeholders)
        if names:
            self.emit(Assign(Tuple(names), Var("inputs")))
        if not self.whole_program():
            self.statements += self.size_bindings()
            self.body()
        symbols = tuple((symbol, Var(name)) for symbol, name in self.sizes.items())
        params = (Param(Var("inputs"), ("inputs",), np.dtype(object)),)
        host = Kernel(f"host_{graph.name}", params, tuple(self.statements), (), (), symbols=symbols)
        source, _ = render(host, True, Namespace(True, ()), function=f"host_{graph.name}")
        namespace = dict(self.globals)
        exec(compile(source, f"<gcompile host {graph.name}>", "exec"), namespace)
        for stub in self.lazy:
            stub.namespace = namespace
        self.program.run = namespace[f"host_{graph.name}"]
        self.program.source = source
        return self.program

    def body(self) -> None:
        """The host's statements node by node, then its return; the call's sizes as a dict
        first when a NumPy op needs them (``_sizes``)."""
        entry = len(self.statements)
        self.node_by_node()
        self.returns()
        if "_symbols" in self.globals:
            sizes = Tuple(tuple(Var(self.sizes[s]) for s in self.globals["_symbols"]))
            pairs = Call(Name("zip"), (Name("_symbols"), sizes))
            self.statements.insert(entry, Let(Var("_sizes"), Call(Name("dict"), (pairs,))))

    def node_by_node(self) -> None:
        """The host's statements for each node: kernels, loops, library calls, NumPy ops."""
        last_use = last_uses(self.graph)
        for node in self.graph.nodes:
            if node.op == "constant":
                self.constant(node)
            elif node.op == "call":
                self.call(node)
                self.bind_data_sizes(node)
            dead = tuple(self.value(v) for v in last_use.get(node, ()))
            if dead:
                self.emit(Release(dead))

    def bind_data_sizes(self, node: Node) -> None:
        """``u0 = v_extern_1.shape[0]``: each length the data decide, read from the first value
        that has it (``shape_env.data_size_bindings``)."""
        for symbol, item, axis in data_size_bindings(node.meta):
            if symbol in self.sizes:
                continue
            value = self.value(node) if item is None else Item(self.value(node), (Const(item),))
            self.emit(Let(Var(symbol.name), Item(Attr(value, "shape"), (Const(axis),))))
            self.sizes[symbol] = symbol.name
            self.data_sizes.append(symbol)

    def call(self, node: Node) -> None:
        if isinstance(node.target, FusedKernel):
            self.kernel(node)
        elif subgraphs_of(node) and node.target.holds_program:  # a loop or a branch
            self.loop(node)
        elif subgraphs_of(node):
            reason = "the Numba backend generates no code for this op"
            self.interpreted(node, f"{node.kind} op", reason)
        elif node.target is ops.KERNEL_OUTPUT:
            self.let(node, Item(self.value(node.args[0]), (Const(node.kwargs["item"]),)))
        elif _product_into_buffer(node):
            self.product(node)
        elif scans.kind_of(node) is not None and isinstance(node.args[0], Node):
            self.scan(node)
        elif not (node.target is ops.STORE and self.copy(node)):
            self.generic(node)

    def returns(self) -> None:
        """``return (...)``: the outputs, literals through a global."""
        values = self.graph.output_node.args[0]
        if not all(isinstance(v, Node) for v in values):
            self.globals["_literal_outputs"] = values
        self.emit(Return(tuple(self.output(v, i) for i, v in enumerate(values))))

    def output(self, value, position: int):
        if isinstance(value, Node):
            return self.value(value)
        return Item(Name("_literal_outputs"), (Const(position),))


def _product_into_buffer(node: Node) -> bool:
    """Whether ``node`` is a matrix product NumPy can write into a given C-ordered buffer.

    ``np.matmul`` and ``np.dot`` take ``out=`` of the result's dtype for array operands (not for
    a Python scalar operand, which ``dot`` multiplies) and an array result (not a 0-d scalar).
    """
    if node.target not in (ops.MATMUL, ops.DOT) or set(node.kwargs) - {"dtype"}:
        return False
    meta = node.meta
    if meta.scalar or meta.ndim == 0:
        return False
    return all(isinstance(v, Node) and not v.meta.scalar and v.meta.ndim > 0 for v in node.args)


def _scalar_operator(node: Node) -> bool:
    """Whether ``node`` is a Python operator on NumPy scalars (and number literals) with a
    strong scalar result: ``ops.evaluate`` runs the operator itself there."""
    target = node.target
    if not isinstance(target, ops.OpDef) or not target.dunder or node.kwargs or not node.args:
        return False
    if node.meta.weak or not node.meta.scalar:
        return False
    return all(v.meta.scalar if isinstance(v, Node) else ops.is_scalar_value(v) for v in node.args)


def _node_runner(node: Node, inputs: list, evaluate: Callable) -> Callable:
    """Runs ``node`` on the values of its input nodes by ``evaluate(args, kwargs)``, with the
    interpreter's error context; keyword arguments replace parameters (symbolic ones, computed
    by the host), except ``sizes``, which goes to ``evaluate`` itself."""

    flat = not nodes_in(node.kwargs) and all(
        isinstance(a, Node) or not nodes_in(a) for a in node.args
    )
    slots = {n: i for i, n in enumerate(inputs)}
    places = [slots[a] if isinstance(a, Node) else -1 for a in node.args]

    def arguments(values: tuple, given: dict) -> tuple:
        if flat:  # (the common case, without walking the arguments: a call is a few us)
            args = tuple(values[i] if i >= 0 else a for i, a in zip(places, node.args))
            return args, ({**node.kwargs, **given} if given else node.kwargs)
        env = dict(zip(inputs, values))
        return map_arg(node.args, env.__getitem__), {
            **map_arg(node.kwargs, env.__getitem__),
            **given,
        }

    def run(*values, **given):
        sizes = given.pop("sizes", None)
        args, kwargs = arguments(values, given)
        extra = {"sizes": sizes} if sizes is not None else {}
        try:
            return evaluate(args, kwargs, **extra)
        except UnsupportedError:
            raise
        except Exception as exc:
            interpreter.add_context(exc, node)
            raise

    return run


def _with_sizes(sizes: dict, symbols: tuple, values: tuple) -> dict:
    """``sizes`` with the lengths the data decided so far (``symbols``: their ``values``)."""
    return {**sizes, **dict(zip(symbols, values))}


def _view_applier(views: tuple) -> Callable:
    """Applies ``views`` to an input (one without a layout promise), at the call's sizes."""

    def apply(value, sizes: dict):
        for view in views:
            value = view.target.impl(value, **concrete(view.kwargs, sizes))
        return value

    return apply


def compile_graph(graph: Graph, options: dict | None = None) -> Callable[[list], list]:
    """Backend entry point: the host function of ``graph`` with its kernels compiled."""
    program = _HostLowering(graph, dict(options or {})).build()
    run = program.run
    run.program = program
    return run
