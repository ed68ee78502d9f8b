"""Fused kernels called from loop programs: the hooks of ``kernel_calls`` a program gives.

In a loop a kernel over a space no loop index sizes sums as NumPy does (lanes); one over a space
a loop index sizes (a triangular nest's products, which NumPy leaves to BLAS) has its serial
variant sum in order, one accumulator (short sums), and when its sums may be long
(``LONG_SUM``) also the blocked-lane variant, called through a test of its size. Its output
goes into an array made where it is called, or once before the loops when the value dies
within the trip (a scalar result, read at once). At the top level of a whole graph it
is called as the host calls it, into buffers the host allocates (a small output the program
makes itself): one variant, the parallel one only on spaces of ``PARALLEL_COMPILE`` times
the parallel threshold (``loops.program_parallel``).

A part of the program lowering (``programs._ProgramLowering``), whose statements and values it
adds to.
"""

from __future__ import annotations

from collections import Counter

from ...ir import ops
from ...ir.control import ForRange
from ...ir.graph import Node
from ...ir.kernel import FusedKernel
from ...ir.shape_env import data_sizes_in, hint, using
from ...ir.subgraph import subgraphs_of
from ...ir.symbolic import free_symbols, is_expr, product_of
from ...loops.nodes import Alloc, Assign, Item, Let, Name, Tuple, Var
from ...loops.program_parallel import PARALLEL_COMPILE
from . import codegen, kernels
from .kernel_calls import KernelCalls
from .memory import POOLED

# A sum in a loop body of at least this many terms is added in blocks of lanes (vectorised);
# a shorter one in order, in one accumulator (a block's set-up costs more than it saves).
LONG_SUM = 512


class ProgramKernelCalls(KernelCalls):
    """The calls of fused kernels in a program (see the module docstring); the lowering
    provides ``emit``, ``fresh``, ``assign``, ``shape``, ``value``, ``view_of``, ``top``,
    ``values``, ``buffers``, ``kernels``, ``loop_indices``, ``whole`` and ``options``."""

    def kernel(self, node: Node) -> None:
        """A fused kernel called with the arrays and its integers: in a loop its serial variant
        (and the blocked one for long sums); at the top level one variant, the parallel one
        where ``in_parallel`` says so, into buffers the host allocates."""
        if self.top():
            found = kernels.variants(node.target, self.options)
            found, threshold = [found[-1] if self.in_parallel.get(node) else found[0]], 0
        else:
            found, threshold = _loop_variants(node, self.options), LONG_SUM
        result = self.kernel_call(node, found, threshold)
        if found[0].code.writes is None:
            self.assign(node, result)
        else:
            self.values[node] = result

    def output_buffer(self, node: Node, position: int, meta, order: str, last=False) -> Var:
        """The array a kernel output goes into: a buffer of the host's (top level), one made
        once before the loops (a scalar result, read at once; or a value that dies within the
        trip), or one made where it is called."""
        out = self.fresh(f"out{position}_{node.name}")
        if self.top() and meta.ndim:
            if not self.whole or not small_output(node, meta):
                return self.buffer((tuple(meta.shape), meta.dtype, order))
            self.emit(Alloc(out, self.shape(meta.shape), meta.dtype, order=memory_order(order)))
            self.made[out] = (tuple(meta.shape), meta.dtype, memory_order(order))
            return out
        once = meta.ndim == 0 or _reusable(node, meta, self.loop_indices)
        shape = self.shape(meta.shape or (1,))
        self.emit(Alloc(out, shape, meta.dtype, order=memory_order(order), once=once))
        self.in_loop_buffers[(node, position)] = (out, order)
        return out

    def swapped(self, writeback: Node) -> bool:
        """Take a carried array's new value, a kernel's output in a buffer of its own, by
        swapping the two variables instead of copying it in (the next trip's kernel writes
        into the old array): where the array is the loop's own (copied at its entry, or made by
        the function: no caller holds it) and the output is read by nothing else. Emits the
        swap and returns True, or returns False (the write-back copies)."""
        target, value = writeback.args
        kernel = value.args[0] if value.target is ops.KERNEL_OUTPUT else value
        item = value.kwargs["item"] if value.target is ops.KERNEL_OUTPUT else 0
        found = self.in_loop_buffers.get((kernel, item))
        if found is None or set(value.users) != {writeback} or not self.open_loops:
            return False
        buffer, order = found
        loop = self.open_loops[-1][0]
        if not _owned_carried(loop, target, writeback) or order != "C":
            return False
        if target.meta.layout != "C" or (target.meta.dtype, target.meta.shape) != (
            value.meta.dtype,
            value.meta.shape,
        ):
            return False
        carried, held = self.values[target], self.fresh(f"held_{target.name}")
        self.statements += [Let(held, carried), Let(carried, buffer), Let(buffer, held)]
        self.values[writeback] = carried
        return True

    def buffers_for_results(self, results: list) -> None:
        """Make the arrays a whole graph's program returns, where it allocates them at its top
        level, buffers its caller passes (and keeps: the program does not return them). Numba
        wraps an array it returns in a NumPy array: 0.2 us for one it was given, 0.4 us for one
        it made, most of a small call's time. A result qualifies when it and each variable it
        was bound from (``a = b`` at the top level) are bound once in the whole program."""
        bound: Counter = Counter()
        _count_bindings(self.statements, bound)
        alias = {
            s.var: s.value
            for s in self.statements
            if isinstance(s, Let) and isinstance(s.value, Var)
        }
        roots = {}
        for result in results:
            chain = [result] if isinstance(result, Var) else []
            while chain and chain[-1] in alias:
                chain.append(alias[chain[-1]])
            if chain and all(bound[v] == 1 for v in chain[:-1]):
                if bound[chain[-1]] == 1 or chain[-1] in self.buffer_of:
                    roots[result] = chain[-1]
        statements = []
        for statement in self.statements:
            made = self.made.get(getattr(statement, "var", None))
            if (
                not isinstance(statement, Alloc)
                or made is None
                or statement.var not in roots.values()
                or data_sizes_in(made[0])  # (a length the program finds: the host has none)
            ):
                statements.append(statement)
                continue
            buffer = self.buffer(made)
            self.buffer_of[statement.var] = self.buffer_of[buffer]
            statements.append(Let(statement.var, buffer))
            if statement.fill is not None:
                statements.append(Assign(Item(buffer, (Name("..."),)), statement.fill))
        self.statements = statements
        self.buffer_of.update(
            {r: self.buffer_of[t] for r, t in roots.items() if t in self.buffer_of}
        )

    def kernel_function(self, node: Node, variant, position: int) -> Var:
        """The global a variant is called by: ``_fused_1``, and ``_fused_1_parallel`` (top
        level) or ``_fused_1_long`` (in a loop) for the second."""
        suffix = "" if not position else "_parallel" if self.top() else "_long"
        name = self.fresh(f"_{node.name}{suffix}")
        self.kernels[name] = variant
        return name

    def scalar_argument(self, value: Node):
        return self.value(value)  # (a program holds a 0-d value as its element)

    def viewed(self, value: Node, views: tuple):
        """An input read through ``views`` (basic indexing, transposes, reshapes)."""
        expression = self.value(value)
        for view in views:
            expression = self.view_of(
                expression, view.target, view.kwargs, view.args[0].meta, view.meta
            )
        return expression


def small_output(node: Node, meta) -> bool:
    """Whether a top-level output is below the size the host's buffer pool reuses, at the
    traced sizes: the program makes it (a large one comes from the pool, which hands back a
    buffer the caller dropped, and saves the first touch of fresh pages)."""
    with using(node.graph.shape_env):
        return hint(product_of(meta.shape)) * meta.dtype.itemsize < POOLED


def memory_order(order: str) -> str:
    """NumPy's order of a new array laid out as ``order`` (C unless Fortran)."""
    return "F" if order == "F" else "C"


def _owned_carried(loop: Node, target: Node, writeback: Node) -> bool:
    """Whether ``writeback`` writes the new value of an array ``loop`` carries (``target``, a
    placeholder of its body, the body returning the write-back for it) that only the loop
    holds: copied at its entry, or run in place in an array the function made."""
    op = loop.target
    body = op.body if isinstance(op, ForRange) else op.regions[0].graph
    if writeback.graph is not body or target.graph is not body or target.op != "placeholder":
        return False
    position = body.placeholders.index(target)
    carries = dict(op.carries)
    if position not in carries or body.output_node.args[0][carries[position]] is not writeback:
        return False
    argument = loop.args[position]
    made = isinstance(argument, Node) and argument.op == "call" and argument.kind == "creation"
    return position not in op.in_place or made


def _reusable(node: Node, meta, loop_indices: set) -> bool:
    """Whether one buffer, made before the loops, can hold ``node``'s output on every trip:
    its shape names no loop index nor a length the data decide (which a trip may bind), and its
    value dies within the trip (read by ops that copy or reduce it, never carried, returned,
    viewed or written into)."""
    if any(free_symbols(size) & loop_indices for size in meta.shape if is_expr(size)):
        return False
    if data_sizes_in(meta.shape):
        return False
    return _dies_within_the_trip(node)


def _dies_within_the_trip(node: Node) -> bool:
    """Whether ``node``'s array (or each output of it) is only read by ops that make values of
    their own: no view, write into it, loop, or output of its graph holds its memory."""
    for user in node.users:
        if user.target is ops.KERNEL_OUTPUT:
            if not _dies_within_the_trip(user):
                return False
            continue
        if user.op != "call" or subgraphs_of(user) and not isinstance(user.target, FusedKernel):
            return False
        if user.target.kind == "view" and user.meta.ndim > 0:
            return False
        if user.is_mutation and user.args and user.args[0] is node:
            return False
    return True


def in_parallel(graph, options: dict) -> dict:
    """Whether each fused kernel at the top level of a whole program ``graph`` runs its
    parallel variant: when its traced space reaches ``PARALLEL_COMPILE`` times the parallel
    threshold (its compile pays on large arrays only), the program guarded on that side (another
    size traces and compiles again). A space of a length the data decide, which no guard can
    stand for, is left out: serial."""
    if not options.get("parallel", True):
        return {}
    threshold = PARALLEL_COMPILE * int(options["parallel_threshold"])
    found = {}
    with using(graph.shape_env) as env:
        for node in graph.nodes:
            if node.op != "call" or not isinstance(node.target, FusedKernel):
                continue
            space = product_of(node.target.space)
            if not data_sizes_in(space):
                found[node] = env.decide(">=", space, threshold, "a program's kernel in parallel")
    return found


def _loop_variants(node: Node, options: dict) -> list:
    """A kernel called in a loop program. Over a space no loop index sizes (``x.sum()`` of a
    window, of a whole array), the usual variant: NumPy's lanes, so its bits up to 128 terms.
    Over one a loop index sizes (``A[i, :j] @ A[:j, j]`` of a triangular nest, a product
    NumPy leaves to BLAS), its variant summing in order (short sums), and when it has float
    sums of a length that may reach ``LONG_SUM`` (at the traced sizes) the usual one too,
    called through a test of its size; that one alone where the sums are twice as long as that
    (each variant costs a compile: a shorter call is the rarer)."""
    kernel: FusedKernel = node.target
    options = {**options, "parallel": False}
    env = node.graph.shape_env
    if not free_symbols(product_of(kernel.space)) & set(env.loops):
        return [kernels.Variant("serial", codegen.generate(kernel, options, False))]
    ordered = kernels.Variant(
        "serial", codegen.generate(kernel, {**options, "sequential_sums": True}, False)
    )
    with using(env):
        traced = hint(product_of(kernel.space))
    if traced < LONG_SUM // 2:
        return [ordered]
    short = kernels.Variant("serial", codegen.generate(kernel, options, False))
    if ordered.code.source == short.code.source or ordered.code.params != short.code.params:
        return [short]
    return [short] if traced >= 2 * LONG_SUM else [ordered, short]


def _count_bindings(statements: tuple, bound: Counter) -> None:
    """Count in ``bound`` each binding of a variable in ``statements`` and the blocks inside
    them (assignments, allocations, loop indices, carried values, object-mode outputs)."""
    for statement in statements:
        targets = [getattr(statement, "var", None)]
        if isinstance(statement, Assign):
            target = statement.target
            targets += target.items if isinstance(target, Tuple) else [target]
        targets += [var for var, _ in getattr(statement, "carried", ())]
        targets += [var for var, _ in getattr(statement, "outputs", ())]
        bound.update(target for target in targets if isinstance(target, Var))
        for block in ("body", "orelse", "test"):
            nested = getattr(statement, block, ())
            if isinstance(nested, tuple):
                _count_bindings(nested, bound)
