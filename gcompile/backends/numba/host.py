"""The host function: the whole graph as one generated Python function.

It unpacks the inputs, allocates each kernel's outputs and calls the compiled
kernel with the flat views, scalars and trace-time integers the kernel asks for,
runs matrix products through NumPy's own call (``np.matmul``/``np.dot``, so the
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
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ...errors import UnsupportedError
from ...ir import ops
from ...ir.graph import Graph, Node, map_arg
from ...ir.kernel import FusedKernel
from ...ir.printer import format_node
from ...ir.subgraph import subgraphs_of
from .. import interpreter
from . import cache, codegen


@dataclass
class HostProgram:
    """A compiled graph: the callable and everything it is made of, for inspection."""

    run: Callable[[list], list]
    source: str
    kernels: list = field(default_factory=list)  # (KernelCode, Loaded) per compiled kernel
    notes: list = field(default_factory=list)  # kernels left to the interpreter, and why
    kernel_compiles: int = 0
    disk_cache_hits: int = 0
    timings: dict = field(default_factory=dict)

    @property
    def code(self) -> str:
        """The host function and every kernel, readable (node names, IR lines as comments)."""
        parts = [self.source]
        for code, loaded in self.kernels:
            flags = f"parallel={code.parallel}, fastmath={code.fastmath_flags}"
            origin = (
                f"  [{loaded.event}: {loaded.path.name}]" if loaded.path else f"  [{loaded.event}]"
            )
            parts.append(f"# kernel {code.name} ({flags}){origin}\n{code.readable}")
        for note in self.notes:
            parts.append(f"# {note}")
        return "\n\n".join(parts)


def _variable(node: Node) -> str:
    """The host function's variable holding ``node``'s value."""
    return f"v_{node.name}"


def _references_of_a_listed_object() -> int:
    """What ``sys.getrefcount(held[i])`` says for an object only the list ``held`` holds."""
    held = [object()]
    return sys.getrefcount(held[0])


_ONLY_LISTED = _references_of_a_listed_object()


class BufferPool:
    """Large output buffers of earlier calls, handed out again once nobody else holds them.

    Writing into freshly allocated memory costs a page fault and a page of zeroes per 4 KiB
    (measured: 14.7 GB/s instead of 34.9), which would dominate a kernel running at memory
    speed. An array the host returned is kept here; when a later call needs the same shape,
    dtype and order and the reference count shows that only the pool still holds it (the caller
    dropped it, and no view of it exists, since a view references its base), it is reused.
    Small arrays are left to NumPy's allocator. At most ``keep`` buffers per kind are held.
    """

    MIN_BYTES = 1 << 20

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
                        return held[i]
        array = np.empty(shape, dtype, order=order)
        if array.nbytes >= self.MIN_BYTES:
            with self.lock:
                held = self.free.setdefault(key, [])
                held.append(array)
                if len(held) > self.keep:
                    held.pop(0)
        return array


class _HostWriter:
    def __init__(self, graph: Graph, options: dict):
        self.graph = graph
        self.options = options
        self.lines: list[str] = []
        self.pool = BufferPool()
        self.globals: dict[str, Any] = {"np": np, "_empty": self.pool.empty}
        self.program = HostProgram(run=None, source="")

    def constant(self, node: Node) -> None:
        name = f"_const_{node.name}"
        self.globals[name] = node.target
        fresh = node.returned and isinstance(node.target, np.ndarray)
        self.emit(node, f"{name}.copy()" if fresh else name)

    def emit(self, node: Node, expression: str) -> None:
        self.lines.append(f"    # {format_node(node)}")
        self.lines.append(f"    {_variable(node)} = {expression}")

    def generic(self, node: Node) -> None:
        self.call_runner(
            node, f"_op_{node.name}", functools.partial(interpreter.evaluate_node, node)
        )

    def interpreted(self, node: Node, what: str, reason: str) -> None:
        """``node`` (holding sub-graphs) run by its op's ``interpret`` in the interpreter."""
        evaluate = functools.partial(node.target.interpret, interpreter.runner(node))
        self.call_runner(node, f"_interpret_{node.name}", evaluate)
        self.program.notes.append(f"{what} {node.name} runs in the interpreter: {reason}")

    def call_runner(self, node: Node, name: str, evaluate: Callable) -> None:
        """Emit a call of global ``name``, which runs ``evaluate(args, kwargs)`` for ``node``."""
        inputs = node.all_input_nodes
        self.globals[name] = _node_runner(node, inputs, evaluate)
        self.emit(node, f"{name}({', '.join(_variable(v) for v in inputs)})")

    def product(self, node: Node) -> None:
        """A ``matmul``/``dot`` node: NumPy's own call, writing into a buffer from the pool.

        A fresh result per call would pay a page fault per 4 KiB written (see ``BufferPool``).
        """
        meta = node.meta
        result = _variable(node)
        operands = ", ".join(_variable(v) for v in node.args)
        dtype = node.kwargs.get("dtype")
        extra = f", dtype={self.dtype_name(np.dtype(dtype))}" if dtype is not None else ""
        function = "np.matmul" if node.target is ops.MATMUL else "np.dot"
        self.lines.append(f"    # {format_node(node)}")
        self.lines.append(
            f"    {result} = _empty({tuple(meta.shape)!r}, {self.dtype_name(meta.dtype)}, 'C')"
        )
        self.lines.append(f"    {function}({operands}, out={result}{extra})")

    def dtype_name(self, dtype: np.dtype) -> str:
        """The host function's global holding ``dtype``."""
        name = f"_{dtype.name}"
        self.globals.setdefault(name, dtype)
        return name

    def kernel(self, node: Node) -> None:
        kernel: FusedKernel = node.target
        start = time.perf_counter()
        options = self.options
        if kernel.style == "epilogue":
            options = {**options, "parallel": False}  # runs after BLAS (module docstring)
        try:
            code = codegen.generate(kernel, options)
            code.readable = codegen.generate(kernel, {**options, "readable": True}).source
        except codegen.NoTemplate as missing:
            self.interpreted(node, "kernel", str(missing))
            return
        self.program.timings[f"codegen {kernel.name}"] = time.perf_counter() - start
        start = time.perf_counter()
        try:
            loaded = cache.load(code.source, code.signature(), code.parallel, code.fastmath_flags)
        except Exception as error:  # Numba's own errors have no common base class
            raise UnsupportedError(
                f"a kernel Numba cannot compile ({kernel.name}: {', '.join(kernel.members)})",
                detail=f"{type(error).__name__}: {_numba_message(error)}",
                hint="the function runs eagerly; report this with the code from fn.code",
            ) from error
        seconds = time.perf_counter() - start
        self.program.timings[f"numba {kernel.name} ({loaded.event})"] = seconds
        self.program.kernel_compiles += loaded.event == "compiled"
        self.program.disk_cache_hits += loaded.event == "disk"
        self.program.kernels.append((code, loaded))
        function = f"_kernel_{node.name}"
        self.globals[function] = loaded.function
        self.lines.append(f"    # {format_node(node)}")
        outputs = []
        for position, meta in enumerate(code.outputs):
            out = f"_out{position}_{node.name}"
            if kernel.inplace_input is not None and position == len(code.outputs) - 1:
                self.lines.append(f"    {out} = {_variable(node.args[kernel.inplace_input])}")
            else:
                shape = tuple(meta.shape) if meta.ndim else (1,)
                order = code.orders[position]
                dtype = self.dtype_name(meta.dtype)
                self.lines.append(f"    {out} = _empty({shape!r}, {dtype}, {order!r})")
            outputs.append(out)
        arguments = []
        for argument in code.arguments:
            kind = argument[0]
            if kind == "output":
                arguments.append(outputs[argument[1]])
            elif kind == "int":
                arguments.append(repr(argument[1]))
            else:
                value = node.args[argument[1]]
                arguments.append(self.kernel_input(value, argument))
        self.lines.append(f"    {function}({', '.join(arguments)})")
        results = []
        for out, meta in zip(outputs, code.outputs):
            results.append(f"{out}[0]" if meta.ndim == 0 else out)
        value = results[0] if len(results) == 1 else f"({', '.join(results)},)"
        self.lines.append(f"    {_variable(node)} = {value}")

    def kernel_input(self, value: Node, argument: tuple) -> str:
        name = _variable(value)
        kind = argument[0]
        if kind == "flat":
            return f"{name}.reshape(-1, order={argument[2]!r})"
        if kind == "scalar":
            meta = value.meta
            return name if meta.weak or meta.scalar else f"{name}[()]"
        views = argument[2]
        helper = f"_views_{len(self.globals)}"
        self.globals[helper] = _view_applier(views)
        return f"{helper}({name})"

    def build(self) -> HostProgram:
        graph = self.graph
        names = [_variable(p) for p in graph.placeholders]
        header = f"def host_{graph.name}(inputs):"
        if names:
            self.lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = inputs")
        last_use = _last_uses(graph)
        for node in graph.nodes:
            if node.op == "constant":
                self.constant(node)
            elif node.op == "call":
                if isinstance(node.target, FusedKernel):
                    self.kernel(node)
                elif subgraphs_of(node):
                    reason = "the Numba backend generates no code for this op"
                    self.interpreted(node, f"{node.kind} op", reason)
                elif node.target is ops.KERNEL_OUTPUT:
                    self.emit(node, f"{_variable(node.args[0])}[{node.kwargs['item']}]")
                elif _product_into_buffer(node):
                    self.product(node)
                else:
                    self.generic(node)
            dead = [_variable(v) for v in last_use.get(node, ())]
            if dead:
                self.lines.append(f"    del {', '.join(dead)}")
        outputs = [
            _variable(v) if isinstance(v, Node) else repr(v) for v in graph.output_node.args[0]
        ]
        for literal in graph.output_node.args[0]:
            if not isinstance(literal, Node):
                outputs = None
        if outputs is None:
            values = graph.output_node.args[0]
            self.globals["_literal_outputs"] = values
            lookup = ", ".join(
                _variable(v) if isinstance(v, Node) else f"_literal_outputs[{i}]"
                for i, v in enumerate(values)
            )
            self.lines.append(f"    return [{lookup}]")
        else:
            self.lines.append(f"    return [{', '.join(outputs)}]")
        source = "\n".join([header, *self.lines]) + "\n"
        namespace = dict(self.globals)
        exec(compile(source, f"<gcompile host {graph.name}>", "exec"), namespace)
        self.program.run = namespace[f"host_{graph.name}"]
        self.program.source = source
        return self.program


def _numba_message(error: Exception) -> str:
    """The informative lines of a Numba error (not its pipeline-stage headers)."""
    lines = [line.strip() for line in str(error).splitlines()]
    useful = [
        line
        for line in lines
        if line and not line.startswith(("Failed in ", "During:", "File ", "^", "raised from"))
    ]
    return " / ".join(useful[:3]) or type(error).__name__


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
    return all(
        isinstance(v, Node) and not v.meta.scalar and v.meta.ndim > 0 for v in node.args
    )


def _last_uses(graph: Graph) -> dict:
    """Per node, the values whose last reader it is (outputs excepted): the host deletes them."""
    kept = set(graph.output_node.all_input_nodes)
    last: dict[Node, Node] = {}
    for node in graph.nodes:
        for value in node.all_input_nodes:
            last[value] = node
    released: dict[Node, list] = {}
    for value, reader in last.items():
        if value not in kept and reader.op != "output":
            released.setdefault(reader, []).append(value)
    return released


def _node_runner(node: Node, inputs: list, evaluate: Callable) -> Callable:
    """Runs ``node`` on the values of its input nodes by ``evaluate(args, kwargs)``, with the
    interpreter's error context."""

    def run(*values):
        env = dict(zip(inputs, values))
        try:
            return evaluate(
                map_arg(node.args, env.__getitem__), map_arg(node.kwargs, env.__getitem__)
            )
        except UnsupportedError:
            raise
        except Exception as exc:
            interpreter.add_context(exc, node)
            raise

    return run


def _view_applier(views: tuple) -> Callable:
    def apply(value):
        for view in views:
            value = view.target.impl(value, **view.kwargs)
        return value

    return apply


def compile_graph(graph: Graph, options: dict | None = None) -> Callable[[list], list]:
    """Backend entry point: the host function of ``graph`` with its kernels compiled."""
    program = _HostWriter(graph, dict(options or {})).build()
    run = program.run
    run.program = program
    return run
