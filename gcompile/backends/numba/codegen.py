"""Code generation: a ``FusedKernel`` becomes the source of one Numba function with a loop nest.

The function's parameters are the output arrays (allocated by the host), the
input arrays, and integers: the sizes of the iteration space (``n0``, ``n1``, ...)
and the offsets and strides of the reads (``o0``, ``s0``, ...). Sizes are never
baked into the code, so a new size of the same structure reuses the compiled
function; only what shapes the loop (ndim, layouts, which axes broadcast, literal
constants) is in the text, and the text is the kernel's cache key.

Reads. An input array whose layout is C or F is passed flat (a 1-D view of its
memory), and every read of it, through any chain of views the kernel folded in
(slices, transposes, broadcasts, reshapes), is an affine index
``o + s0*i0 + i1`` into that memory; strides of 0 (broadcast) vanish and strides
of 1 are literal, so the innermost loop walks contiguous memory and LLVM can
vectorise it. An input without a layout promise (``A``) is passed as the view
the host computes, indexed in ``A`` layout.

Loops. ``kept`` axes are the outer loops (all axes for a pointwise kernel; in
Fortran order when the output is F). A reduction or row kernel runs, per kept
index, one or more *phases* over the reduced axes: a reduction computed in phase
``p`` is usable from phase ``p + 1`` on (softmax: max, then sum of exp, then
divide). A value computed in one phase and read in a later one is kept in a
per-row buffer (``buf_*``), not recomputed. A max and the sum of ``exp(x - max)``
over the same rows share one phase (``online``: logsumexp, log-softmax).

Numerics. Operands are cast to the dtypes of NumPy's loop (``templates``);
every result is cast to its node's dtype, so integers wrap as NumPy's do.
Float64 sums are blocked: the innermost reduced loop runs in blocks of 128
elements, each summed from zero; block sums collect 128 at a time into the
total. No partial sum takes more than 128 terms of similar size, so the error
stays a few ulp times log2(n), as with NumPy's pairwise sum, where one
accumulator's would grow with n. Float32 (and
complex64) sums accumulate in float64, which is more accurate than NumPy's
float32 pairwise sum, so the two agree within NumPy's own error. Products, max
and min accumulate naively in the result dtype, as NumPy does.

Parallel loops. Above ``parallel_threshold`` elements the outer kept loop is a
``prange``. A reduction over all axes is split into ``CHUNKS`` fixed chunks of
its first axis, reduced in parallel and combined in chunk order, so the result
does not depend on the number of threads.
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass, field

import numpy as np
from numba import from_dtype
from numba.core import types as nbtypes

from ...ir import ops
from ...ir.graph import Node
from ...ir.kernel import FusedKernel
from ...ir.meta import normalize_axes
from ...ir.printer import format_node
from ...ir.shape_env import hint, map_symbolic
from . import mathlib, online
from . import templates as tpl

BLOCK = 128  # elements per block of a blocked or split loop
# Each expansion call site is charged EXPANSION_COST s of compile time (twice that for sin, cos
# and tan); past COMPILE_BUDGET s per kernel, functions with a libm twin call libm instead.
# (exp is inlined by Numba at every call site; the other families are compiled once and inlined
# by LLVM, so for them the charge overestimates repeated calls: the budget stays conservative.)
EXPANSION_COST = 0.25
COMPILE_BUDGET = 2.5
SAFE_FASTMATH = ("afn", "arcp", "contract", "nsz")  # the LLVM flags the expansions tolerate
CHUNKS = 16  # parallel chunks of a reduction over all axes (fixed: results must not vary)
BLOCK_BITS = 7  # blocked summation: 2**7 blocks per partial total

_RESERVED = {"np", "math", "cmath", "_s", "prange", "range", "kernel", "abs", "bool", "min", "max"}
_GENERATED = re.compile(
    r"^(i|n|o|s|b|e|lo|hi|c)\d*$|^(acc|mid|blk|cnt|buf|part|best|at|rowlen|lane|bad|dev|mean|ref|top|shrink)_?"
)


class NoTemplate(Exception):
    """The kernel uses something the code generator cannot express (it runs in the interpreter)."""


@dataclass
class KernelCode:
    """The generated function of one kernel and how the host calls it.

    ``arguments`` has one entry per parameter: ``("output", i)`` the i-th output
    buffer, ``("flat", i, order)`` input i as a 1-D view of its memory, ``("array", i,
    views)`` input i through ``views`` (host-evaluated), ``("scalar", i)`` input i as
    a scalar, ``("int", value)`` an integer computed at trace time.
    """

    name: str
    source: str
    params: list = field(default_factory=list)
    arguments: list = field(default_factory=list)
    types: list = field(default_factory=list)
    parallel: bool = False
    fastmath: bool = False  # what the user asked for; ``fastmath_flags`` is what Numba gets
    expansions: bool = False  # the kernel inlines mathlib expansions
    math: dict = field(default_factory=dict)  # float function -> how it is computed, and why
    outputs: list = field(default_factory=list)  # metas of the outputs, in order
    orders: list = field(default_factory=list)  # "C" or "F" per output buffer

    def signature(self) -> tuple:
        """The Numba argument types."""
        return tuple(self.types)

    @property
    def fastmath_flags(self) -> str:
        """Numba's ``fastmath`` argument: under ``fastmath=True``, a kernel with expansions gets
        only the flags they survive (``reassoc`` with ``nsz`` folds their rounding tricks away,
        ``nnan``/``ninf`` their special-value selects; ``shared/notes/vector-math.md`` section 4)."""
        if not self.fastmath:
            return "False"
        if self.expansions:
            return "{" + ", ".join(repr(flag) for flag in SAFE_FASTMATH) + "}"
        return "True"


def numba_type(dtype: np.dtype) -> nbtypes.Type:
    """The Numba scalar type of ``dtype``."""
    return from_dtype(np.dtype(dtype))


def _identifier(name: str) -> str:
    name = re.sub(r"\W", "_", name)
    if (
        keyword.iskeyword(name)
        or name in _RESERVED
        or _GENERATED.match(name)
        or name[0].isdigit()
        or name.startswith("out_")
    ):
        return f"{name}_v"
    return name


def _probe_affine(shape: tuple, layout: str, views: list) -> tuple | None:
    """``(offset, strides)`` in elements of the memory of an array of ``shape`` and ``layout``
    after ``views``, found by applying the views to a data-free stand-in; None if not affine."""
    memory = np.zeros(1, np.int64)
    step, strides = 1, [0] * len(shape)
    axes = range(len(shape)) if layout == "F" else reversed(range(len(shape)))
    for axis in axes:
        strides[axis] = step * 8
        step *= max(shape[axis], 1)
    value = np.lib.stride_tricks.as_strided(memory, shape, strides, writeable=False)
    try:
        for view in views:
            params = {k: _hinted(v) for k, v in view.kwargs.items()}
            if view.target is ops.RESHAPE:
                value = np.reshape(value, params["shape"], copy=False)
            elif view.target is ops.RAVEL:
                value = np.reshape(value, -1, copy=False)
            else:
                value = view.target.impl(value, **params)
    except (ValueError, TypeError):
        return None
    base = memory.__array_interface__["data"][0]
    offset = (value.__array_interface__["data"][0] - base) // 8
    return offset, [s // 8 for s in value.strides]


def _hinted(value):
    """Sizes (ints or symbolic, in a literal structure) at the traced call's values."""
    return map_symbolic(value, hint)


def _view_chain(value: Node) -> tuple[Node, list]:
    """``(root, views)`` inside a kernel's sub-graph: views are the cloned index maps."""
    views = []
    while value.op == "call" and value.kind == "view":
        views.append(value)
        value = value.args[0]
    return value, views[::-1]


class _Generator:
    def __init__(self, kernel: FusedKernel, options: dict):
        self.kernel = kernel
        self.graph = kernel.graph
        self.space = tuple(kernel.space)
        self.nd = len(self.space)
        self.members = [n for n in self.graph.nodes if n.op == "call"]
        self.reductions = [n for n in self.members if n.target.loop_reduction]
        self.axes = (
            normalize_axes(
                self.reductions[0].kwargs.get("axis"), self.reductions[0].args[0].meta.ndim
            )
            if self.reductions
            else ()
        )
        self.kept = [a for a in range(self.nd) if a not in self.axes]
        self.outputs = list(self.graph.output_node.args[0])
        self.code = KernelCode(kernel.name, "", fastmath=bool(options.get("fastmath", False)))
        self.names: dict[Node, str] = {}
        self.int_params: dict[tuple, str] = {}
        self.placeholder_index = {p: i for i, p in enumerate(self.graph.placeholders)}
        size = hint(math.prod(self.space))
        threshold = options.get("parallel_threshold")
        self.parallel = (
            bool(options.get("parallel", True)) and threshold is not None and size >= int(threshold)
        )
        self.loads: dict = {}
        self.used_counter = False
        self.readable = bool(options.get("readable"))
        self.vector_loop = False  # whether the loop being emitted can vectorise (no accumulator)
        self.flagging = False  # the loop records arguments out of a fast path's range in ``bad``
        self.fixup = False  # emitting the exact recomputation of a flagged block
        self.in_row_values = False
        self.range_checks: list = []
        self.compile_cost = 0.0  # estimated seconds Numba spends on the inlined expansions

    # -- names and parameters --------------------------------------------------------------------
    def name(self, node: Node) -> str:
        if not self.readable:  # the compiled text: canonical names, so equal kernels share it
            return self.names.setdefault(node, f"v{len(self.names)}")
        if node not in self.names:
            taken = set(self.names.values())
            base = _identifier(node.name)
            name, k = base, 1
            while name in taken:
                k += 1
                name = f"{base}_{k}"
            self.names[node] = name
        return self.names[node]

    def param(self, name: str, argument: tuple, numba_type) -> str:
        self.code.params.append(name)
        self.code.arguments.append(argument)
        self.code.types.append(numba_type)
        return name

    def int_param(self, prefix: str, value: int) -> str:
        key = (prefix, value)
        if key not in self.int_params:
            name = f"{prefix}{sum(1 for p, _ in self.int_params if p == prefix)}"
            self.int_params[key] = self.param(name, ("int", int(value)), nbtypes.intp)
        return self.int_params[key]

    # -- classification --------------------------------------------------------------------------
    def alias_root(self, value: Node) -> Node:
        root, _ = _view_chain(value)
        return root

    def full(self, node: Node) -> bool:
        return not node.target.loop_reduction and tuple(node.meta.shape) == self.space

    def plan_phases(self) -> None:
        """Assign every member a loop (full values) or the loop after which it is known (row values).

        ``var``/``std`` take two loops, as NumPy computes them: the mean, then the sum of squared
        deviations from it (``var_pass`` is the first).
        """
        self.loop_of: dict[Node, int] = {}
        self.after_of: dict[Node, int] = {}
        self.var_pass: dict[Node, int] = {}
        self.online = online.find_pair(self)  # max and sum(exp(x - max)) in one loop
        for node in self.members:
            if node.kind == "view" or self.online and self.online.place(node, self.after_of):
                continue
            inputs = [self.alias_root(v) for v in node.all_input_nodes]
            levels_full = [self.loop_of[v] for v in inputs if v in self.loop_of]
            levels_row = [self.after_of[v] for v in inputs if v in self.after_of]
            level = max(levels_full + [r + 1 for r in levels_row] + [0])
            if node.target in (ops.VAR, ops.STD):
                self.var_pass[node] = level
                self.after_of[node] = level + 1
            elif node.target.loop_reduction:
                self.after_of[node] = level
            elif self.full(node):
                self.loop_of[node] = level
            else:
                if levels_full:
                    raise NoTemplate(f"{node.name}: a per-row value computed from a full row")
                self.after_of[node] = max(levels_row + [-1])
        self.phases = 1 + max(list(self.loop_of.values()) + list(self.after_of.values()) + [0])
        if not self.axes:
            self.phases = 1
        self.stashed = set()
        for node, loop in self.loop_of.items():
            for user in node.users:
                if self.loop_of.get(user, self.after_of.get(user, loop)) > loop:
                    self.stashed.add(node)
        self.current_phase = 0

    # -- reads -------------------------------------------------------------------------------------
    def consumer_vars(self, shape: tuple) -> list:
        """Loop variable (or None for index 0) of each axis of a value of ``shape`` in the loops."""
        if len(shape) == self.nd:
            axes = list(range(self.nd))
        elif (
            self.axes
            and len(shape) == len(self.kept)
            and all(s == self.space[k] or s == 1 for s, k in zip(shape, self.kept))
        ):
            axes = self.kept
        else:
            axes = list(range(self.nd - len(shape), self.nd))
        return [None if size == 1 else f"i{axis}" for size, axis in zip(shape, axes)]

    def read(self, value: Node, consumer_shape: tuple, block: list, indent: str) -> str:
        """The expression of ``value`` (an input, or a view of one) for a consumer of ``consumer_shape``."""
        cvars = self.consumer_vars(consumer_shape)
        shape = tuple(value.meta.shape)
        pad = len(cvars) - len(shape)
        vars_ = [None if size == 1 else cvars[pad + j] for j, size in enumerate(shape)]
        root, views = _view_chain(value)
        key = (value, tuple(vars_))
        if key in self.loads:
            return self.loads[key]
        index = self.placeholder_index[root]
        meta = root.meta
        if meta.ndim == 0 or value.meta.ndim == 0 and not views:
            name = self.scalar_input(root, index)
            self.loads[key] = name
            return name
        affine = (
            _probe_affine(_hinted(meta.shape), meta.layout, views) if meta.layout in "CF" else None
        )
        if affine is not None:
            offset, strides = affine
            terms = []
            if offset:
                terms.append(self.int_param("o", offset))
            for var, stride in zip(vars_, strides):
                if var is None or stride == 0:
                    continue
                if stride == 1:
                    terms.append(var)
                elif stride == -1:
                    terms.append(f"-{var}")
                else:
                    terms.append(f"{self.int_param('s', stride)} * {var}")
            array = self.flat_input(root, index)
            position = " + ".join(terms).replace("+ -", "- ") or "0"
            if terms:
                # Unsigned, so Numba does not test for negative indices (that test stops LLVM
                # from vectorising the loop); the index of a valid view is never negative.
                position = f"np.uint64({position})"
            expr = f"{array}[{position}]"
        else:
            array = self.view_input(value, index, views)
            if value.meta.ndim == 0:
                self.loads[key] = array
                return array
            expr = f"{array}[{', '.join(v or '0' for v in vars_)}]"
        load = f"ld{len(self.loads)}"
        block.append(f"{indent}{load} = {expr}")
        self.loads[key] = load
        return load

    def scalar_input(self, root: Node, index: int) -> str:
        name = self.name(root)
        if name not in self.code.params:
            # (a weak Python scalar's meta dtype is already the type Numba gives it)
            self.param(name, ("scalar", index), numba_type(root.meta.dtype))
        return name

    def flat_input(self, root: Node, index: int) -> str:
        name = self.name(root)
        if name not in self.code.params:
            order = "F" if root.meta.layout == "F" and root.meta.ndim > 1 else "C"
            self.param(
                name,
                ("flat", index, order),
                nbtypes.Array(
                    numba_type(root.meta.dtype), 1, "C", readonly=not root.meta.writeable
                ),
            )
        return name

    def view_input(self, value: Node, index: int, views: list) -> str:
        name = (
            f"{self.name(self.alias_root(value))}_{len(self.code.params)}"
            if views
            else self.name(value)
        )
        if name not in self.code.params:
            meta = value.meta
            if meta.ndim == 0:
                return self.param(name, ("array", index, tuple(views)), numba_type(meta.dtype))
            self.param(
                name,
                ("array", index, tuple(views)),
                nbtypes.Array(numba_type(meta.dtype), meta.ndim, "A", readonly=not meta.writeable),
            )
        return name

    # -- expressions ---------------------------------------------------------------------------------
    def operand(self, value, consumer: Node, block: list, indent: str) -> tuple:
        """``(expr, dtype or python type)`` of one operand of ``consumer``."""
        if not isinstance(value, Node):
            kind = type(value) if not isinstance(value, np.generic) else np.dtype(type(value))
            return value, kind
        root = self.alias_root(value)
        if root in self.loop_of or root in self.after_of:
            if root in self.stashed and self.current_phase > self.loop_of[root]:
                return f"buf_{self.name(root)}[np.uint64(cnt)]", root.meta.dtype
            return self.name(root), root.meta.dtype
        shape = (
            consumer.args[0].meta.shape if consumer.target.loop_reduction else consumer.meta.shape
        )
        expr = self.read(value, tuple(shape), block, indent)
        meta = value.meta
        if meta.weak:
            return expr, type(np.zeros((), meta.dtype).item())
        return expr, meta.dtype

    def typed(self, expr, kind, dtype: np.dtype) -> str:
        """An operand converted to ``dtype`` (literals become typed literals)."""
        if not isinstance(expr, str):
            return tpl.literal(expr, dtype)
        return tpl.cast(expr, np.dtype(kind), dtype)  # np.dtype(float) is float64, and so on

    def elementwise(self, node: Node, block: list, indent: str) -> str:
        op = node.target
        out = node.meta.dtype
        operands = [self.operand(v, node, block, indent) for v in node.args]
        if isinstance(op.impl, np.ufunc):
            loop = tpl.loop_dtypes(op, [k for _, k in operands], node.kwargs)
            if loop is None:
                raise NoTemplate(f"{op.name}: no NumPy loop for these operand types")
            if any(d == np.float16 for d in loop):
                raise NoTemplate(f"float16 (NumPy's loop for {op.name} here; Numba has no float16)")
            args = [self.typed(e, k, d) for (e, k), d in zip(operands, loop)]
            expr = self.ufunc(node, args, loop)
        elif op is ops.WHERE:
            cond = self.typed(*operands[0], np.dtype(bool))
            x, y = (self.typed(e, k, out) for e, k in operands[1:])
            expr = f"({x} if {cond} else {y})"
        elif op is ops.CLIP:
            expr = self.typed(*operands[0], out)
            if out.kind == "c":
                expr = None
            elif len(operands) > 1:
                lo, hi = (operands + [(None, None)] * 2)[1:3]
                if lo[0] is not None:
                    expr = f"_s.maximum({expr}, {self.typed(*lo, out)})"
                if hi[0] is not None:
                    expr = f"_s.minimum({expr}, {self.typed(*hi, out)})"
        elif op is ops.ASTYPE:
            expr = self.typed(*operands[0], out)
        elif op is ops.COPY:
            expr = self.typed(*operands[0], out)
        elif op in (ops.REAL, ops.IMAG):
            expr, kind = operands[0]
            source = np.dtype(kind)  # np.dtype(complex) is complex128, and so on
            expr = tpl.part_expression(op.name, self.typed(expr, kind, source), source, out)
        elif op is ops.COMPLEX:
            part = np.finfo(out).dtype  # float32 of complex64, float64 of complex128
            real, imag = (self.typed(e, k, part) for e, k in operands)
            expr = f"complex({real}, {imag})"
        elif op is ops.ROUND:
            expr = tpl.round_expression(
                self.typed(*operands[0], out), out, int(node.kwargs.get("decimals", 0))
            )
        else:
            expr = None
        if expr is None:
            kinds = ", ".join(str(k) for _, k in operands)
            raise NoTemplate(f"no template for {op.name} on ({kinds})")
        return f"{tpl.type_name(out)}({expr})"

    def ufunc(self, node: Node, args: list, loop: list) -> str | None:
        """A ufunc's expression: its ``mathlib`` expansion in a vector loop, else the scalar one.

        A range-limited expansion (sin, cos, tan) is used only in a loop that flags arguments
        beyond its range (``range_checks``); a flagged block is recomputed exactly with libm.
        """
        name = node.target.name
        power = tpl.power_expression(name, node.args, args, loop)
        if power is not None:
            return power
        template = self.expansion_of(node)
        floating = loop[0].kind == "f"
        limit = template.limit(loop[0]) if template and floating else None
        # (SciPy's functions have no libm twin: their expansion serves every loop)
        libm = name in tpl.LIBM_FUNCTIONS
        vector = self.vector_loop or (template is not None and not libm)
        cost = EXPANSION_COST * (2 if limit is not None else 1)
        over_budget = libm and template is not None and self.compile_cost + cost > COMPILE_BUDGET
        # (the exact recomputation of a flagged block calls libm wherever it can: it runs
        # rarely, and a second inlined expansion would double the compile time)
        if (
            template is None
            or not vector
            or (limit is not None and not self.flagging)
            or (libm and (over_budget or self.fixup))
        ):
            if floating and (template is not None or libm):
                reason = self.libm_reason(template)
                if template is not None and vector and over_budget and not self.fixup:
                    reason = (
                        "libm call per element: the kernel already inlines expansions worth "
                        f"{self.compile_cost:.1f} s of compile time (budget {COMPILE_BUDGET:g} s)"
                    )
                    earlier = self.code.math.get(name, "")
                    if earlier.startswith("inlined") and "budget" not in earlier:
                        self.code.math[name] = f"{earlier}; further calls: {reason}"
                self.code.math.setdefault(name, reason)
            return tpl.ufunc_expression(name, args, loop)
        fast = tpl.ufunc_expression(name, args, loop, vector=True)
        self.code.expansions = True
        self.compile_cost += cost
        loop_kind = "a vector loop" if self.vector_loop else "a scalar loop"
        how = f"inlined expansion _m.{template.function(loop[0])} in {loop_kind}"
        if limit is None:
            self.code.math[name] = how
            return fast
        bound = tpl.literal(limit, loop[0])
        self.code.math[name] = f"{how}; a block with an |x| > {limit:g} is recomputed with libm"
        self.range_checks.append(f"(abs({args[0]}) > {bound})")
        return fast

    def libm_reason(self, template) -> str:
        """Why a float function is a scalar libm call in this kernel (``explain`` shows it)."""
        if template is None:
            return "libm call per element: gcompile has no vectorisable expansion for it"
        if not self.vector_loop:
            return (
                "libm call: computed once per row, outside the element loops"
                if self.in_row_values
                else "libm call per element: its loop accumulates a reduction that cannot be "
                "split from it (argmax/argmin, prod), so the loop does not vectorise"
            )
        return "libm call: a 0-d kernel has no loop to vectorise"

    # -- reductions ----------------------------------------------------------------------------------
    def reduction_setup(self, node: Node) -> dict:
        """Accumulator dtype and the source of init / update / combine / final of a reduction."""
        op, out = node.target, node.meta.dtype
        name = self.name(node)
        kind = out.kind
        if op in (ops.SUM, ops.MEAN):
            if kind == "f" or kind == "c":
                wide = np.dtype(np.complex128 if kind == "c" else np.float64)
                blocked = out == wide
                return dict(
                    acc=wide,
                    lane="sum",
                    blocked=blocked,
                    init=tpl.literal(0, wide),
                    update="{a} += {v}",
                    combine="{a} += {p}",
                    final=self.mean_final(f"acc_{name}", out)
                    if op is ops.MEAN
                    else f"{tpl.type_name(out)}(acc_{name})",
                )
            acc = np.dtype(np.uint64 if kind == "u" else np.int64)
            if kind not in "iub":
                raise NoTemplate(f"{op.name} of {out}")
            final = f"{tpl.type_name(out)}(acc_{name})"
            return dict(
                acc=acc,
                lane="sum",
                init=tpl.literal(0, acc),
                update="{a} += {v}",
                combine="{a} += {p}",
                final=final,
            )
        if op is ops.PROD:
            acc = out if kind in "fc" else np.dtype(np.uint64 if kind == "u" else np.int64)
            return dict(
                acc=acc,
                init=tpl.literal(1, acc),
                update="{a} *= {v}",
                combine="{a} *= {p}",
                final=f"{tpl.type_name(out)}(acc_{name})",
            )
        if op in (ops.AMAX, ops.AMIN):
            if kind == "c":
                raise NoTemplate(f"no template for {op.name} on complex")
            high = op is ops.AMAX
            if kind == "f":
                init = "-np.inf" if high else "np.inf"
                init = init if out == np.float64 else f"{tpl.type_name(out)}({init})"
            elif kind == "b":
                init = "False" if high else "True"
            else:
                info = np.iinfo(out)
                init = tpl.literal(info.min if high else info.max, out)
            helper = "_s.maximum" if high else "_s.minimum"
            return dict(
                acc=out,
                lane="max" if high else "min",
                init=init,
                update=f"{{a}} = {helper}({{a}}, {{v}})",
                combine=f"{{a}} = {helper}({{a}}, {{p}})",
                final=f"acc_{name}",
            )
        if op in (ops.ANY, ops.ALL):
            sym = "|" if op is ops.ANY else "&"
            return dict(
                acc=np.dtype(bool),
                lane="any" if op is ops.ANY else "all",
                init="False" if op is ops.ANY else "True",
                update=f"{{a}} = {{a}} {sym} {{v}}",
                combine=f"{{a}} = {{a}} {sym} {{p}}",
                final=f"acc_{name}",
            )
        if op in (ops.VAR, ops.STD):
            if kind != "f" or node.args[0].meta.dtype.kind == "c":
                raise NoTemplate(f"no template for {op.name} on {node.args[0].meta.dtype}")
            wide = np.dtype(np.float64)
            t = tpl.type_name(out)
            count = self.reduced_count()
            ddof = int(node.kwargs.get("ddof", 0) or 0)
            var = f"{t}({t}(acc_{name}) / {t}(max({count} - {ddof}, 0)))"
            return dict(
                acc=wide,
                lane="sum",
                combine="{a} += {p}",
                blocked=out == wide,
                init="0.0",
                var=True,
                out=out,
                update="{a} += {v}",
                mean=self.mean_final(f"acc_m_{name}", out),
                final=f"{t}(np.sqrt({var}))" if op is ops.STD else var,
            )
        if op in (ops.ARGMAX, ops.ARGMIN):
            if node.args[0].meta.dtype.kind == "c":
                raise NoTemplate(f"no template for {op.name} on complex")
            return dict(
                acc=node.args[0].meta.dtype, arg=True, high=op is ops.ARGMAX, final=f"at_{name}"
            )
        raise NoTemplate(f"no loop for reduction {op.name}")

    def reduced_count(self, axes: tuple | None = None) -> str:
        """Source of the number of elements the reduced ``axes`` (default: all) span per row."""
        return " * ".join(f"n{a}" for a in (self.axes if axes is None else axes)) or "1"

    def mean_final(self, acc: str, out: np.dtype) -> str:
        count = self.reduced_count()
        t = tpl.type_name(out)
        return f"{t}({t}({acc}) / {t}({count}))"

    # -- emission ------------------------------------------------------------------------------------
    def comment(self, node: Node, block: list, indent: str) -> None:
        if not self.readable:
            return
        text = format_node(node)
        if node.source:
            text += f"    # {node.source}"
        block.append(f"{indent}# {text}")

    def emit_full(self, node: Node, block: list, indent: str) -> None:
        self.comment(node, block, indent)
        block.append(f"{indent}{self.name(node)} = {self.elementwise(node, block, indent)}")
        if node in self.stashed:
            block.append(f"{indent}buf_{self.name(node)}[np.uint64(cnt)] = {self.name(node)}")

    def emit_update(
        self, node: Node, setup: dict, block: list, indent: str, acc: str, into: str | None = None
    ) -> None:
        """The loop-body statement of a reduction accumulating into ``acc_<acc>``.

        ``into``: a block buffer element the operand is stored in instead (a split loop), in
        the buffer's ``lane_dtype``.
        """
        self.comment(node, block, indent)
        expr, kind = self.operand(node.args[0], node, block, indent)
        name = self.name(node)
        if setup.get("arg"):
            value = self.typed(expr, kind, setup["acc"])
            better = ">" if setup["high"] else "<"
            test = f"{value} {better} best_{name}"
            if setup["acc"].kind == "f":
                test = f"best_{name} == best_{name} and ({test} or {value} != {value})"
            block.append(f"{indent}if at_{name} < 0 or {test}:")
            block.append(f"{indent}    best_{name} = {value}")
            block.append(f"{indent}    at_{name} = cnt")
            self.used_counter = True
            return
        if setup.get("var") and acc == name:  # second pass: squared deviation from the mean
            out = setup["out"]
            block.append(f"{indent}dev_{name} = {self.typed(expr, kind, out)} - mean_{name}")
            expr, kind = f"dev_{name} * dev_{name}", out
        if into is not None:
            block.append(
                f"{indent}{into} = {self.typed(expr, kind, self.lane_dtype(node, acc, setup))}"
            )
            return
        value = self.typed(expr, kind, setup["acc"])
        if setup.get("blocked"):
            block.append(f"{indent}blk_{acc} += {value}")
            return
        block.append(indent + setup["update"].format(a=f"acc_{acc}", v=value))

    def store_full(self, node: Node, position: int, block: list, indent: str) -> None:
        vars_ = self.consumer_vars(self.space)
        index = ", ".join(v or "0" for v in vars_)
        block.append(f"{indent}out{position}[{index}] = {self.name(node)}")

    def store_row(self, node: Node, position: int, value: str, block: list, indent: str) -> None:
        shape = tuple(node.meta.shape)
        if node.meta.ndim == 0:
            block.append(f"{indent}out{position}[0] = {value}")
            return
        vars_ = self.consumer_vars(shape)
        block.append(f"{indent}out{position}[{', '.join(v or '0' for v in vars_)}] = {value}")

    def output_order(self, meta) -> str:
        """``"F"`` or ``"C"``: the order of a new array NumPy would make (its default ``K``).

        A layout the metadata leaves open (``A``) is Fortran when every input spanning
        the output's axes is Fortran-ordered, as NumPy's ufuncs decide; otherwise C.
        """
        if meta.ndim < 2:
            return "C"
        if meta.layout in "CF":
            return meta.layout
        spanning = [
            p.meta
            for p in self.graph.placeholders
            if p.meta.ndim == meta.ndim and sum(hint(s) > 1 for s in p.meta.shape) > 1
        ]
        return "F" if spanning and all(m.layout == "F" for m in spanning) else "C"

    def generate(self) -> KernelCode:
        for node in self.graph.nodes:
            dtype = getattr(node.meta, "dtype", None)
            if dtype is not None and dtype.kind in "fc" and dtype.itemsize not in (4, 8, 16):
                raise NoTemplate(f"{dtype} (Numba has no {dtype} arithmetic)")
        self.plan_phases()
        for position, node in enumerate(self.outputs):
            meta = node.meta
            if not isinstance(node, Node) or self.alias_root(node) is not node:
                raise NoTemplate("a kernel output that is a view or a literal")
            ndim = max(meta.ndim, 1)
            layout = self.output_order(meta)
            self.param(
                f"out{position}",
                ("output", position),
                nbtypes.Array(numba_type(meta.dtype), ndim, layout),
            )
            self.code.outputs.append(meta)
            self.code.orders.append(layout)
        for axis in range(self.nd):
            self.param(f"n{axis}", ("int", hint(self.space[axis])), nbtypes.intp)
        setups = {r: self.reduction_setup(r) for r in self.reductions}
        body = self.loop_nest(setups)
        self.code.parallel = self.parallel  # decided by loop_nest
        header = f"def kernel({', '.join(self.code.params)}):"
        self.code.source = "\n".join([header, *body]) + "\n"
        return self.code

    def loop_nest(self, setups: dict) -> list:
        lines: list = []
        kept = list(self.kept)
        if not self.axes and self.code.orders[0] == "F" and self.nd > 1:
            kept = kept[::-1]
        chunked = self.parallel and not kept and self.phases == 1
        # A pointwise loop calling a range-limited expansion runs its innermost axis in blocks
        # (``row_body``), each recomputed exactly when it flagged an argument out of range.
        innermost = (
            kept.pop() if not self.axes and kept and self.range_limited(self.members) else None
        )
        self.parallel = self.parallel and (chunked or bool(kept) or innermost is not None)
        indent = "    "
        if self.axes and any(self.stashed):
            lines.append(f"{indent}rowlen = {self.reduced_count()}")
        for depth, axis in enumerate(kept):
            loop = "prange" if self.parallel and depth == 0 else "range"
            lines.append(f"{indent}for i{axis} in {loop}(n{axis}):")
            indent += "    "
            self.loads = {}
        if chunked:
            return lines + self.chunked_reduction(setups, indent)
        parallel_blocks = innermost is not None and self.parallel and not kept
        self.row_body(setups, lines, indent, None, innermost, parallel_blocks)
        return lines

    def row_body(
        self,
        setups: dict,
        lines: list,
        indent: str,
        chunk,
        innermost: int | None = None,
        parallel_blocks: bool = False,
    ) -> None:
        """Per kept index: row values known before any loop, then each phase and what follows it.

        ``innermost``: the axis a pointwise kernel left for this loop (it runs in blocks), as a
        ``prange`` over the blocks when ``parallel_blocks``.
        """
        self.row_values(-1, lines, indent)
        for node in [n for n in self.members if n in self.stashed]:  # (a set: its order varies)
            lines.append(
                f"{indent}buf_{self.name(node)} = np.empty(rowlen, {tpl.type_name(node.meta.dtype)})"
            )
        for phase in range(self.phases):
            self.current_phase = phase
            # (node, accumulator name): reductions of this loop, and the mean pass of var/std
            reductions = [r for r in self.reductions if self.after_of[r] == phase]
            accumulating = [(r, self.name(r)) for r in reductions] + [
                (r, f"m_{self.name(r)}") for r in self.reductions if self.var_pass.get(r) == phase
            ]
            fulls = [n for n in self.members if self.loop_of.get(n) == phase]
            reduced = list(self.axes) if self.axes else [] if innermost is None else [innermost]
            # Split: a loop that accumulates computes each block's values in a vector loop into
            # a stack buffer, then reduces the block by eight lanes (one running max or sum
            # waits for the previous element: 2-6 ns per element).
            split = (
                bool(accumulating)
                and bool(reduced)
                and all(setups[r].get("lane") for r, _ in accumulating)
            )
            self.vector_loop = not accumulating or split
            self.flagging = self.vector_loop and bool(reduced) and self.range_limited(fulls)
            lines += self.accumulator_setup(accumulating, setups, split, indent)
            pair = self.online if self.online and self.online.in_phase(accumulating) else None
            lines += pair.setup_lines(self, indent) if pair else []
            self.used_counter = False
            blocked = [
                (acc, setups[r]["init"]) for r, acc in accumulating if setups[r].get("blocked")
            ]
            in_blocks = bool(reduced) and bool(blocked or split or self.flagging)
            last = reduced[-1] if reduced else None
            inner, body_indent, block_indent, block_setup = self.phase_loops(
                reduced, indent, chunk, parallel_blocks, blocked if in_blocks else None, split
            )
            saved = self.loads
            lane = f"np.uint64(i{last} - b{last})" if split else None
            body = self.phase_body(fulls, accumulating, setups, body_indent, lane)
            counting = reduced and (
                self.used_counter
                or any(n in self.stashed for n in fulls)
                or any(self.loop_of[n] < phase for n in self.stashed)
            )
            if counting:
                body.append(f"{body_indent}cnt += 1")
                lines.append(f"{indent}cnt = {'0' if chunk is None else f'lo * {chunk}'}")
            if pair:  # the block's loop again, without the exps: for blocks before any max
                plain = self.phase_body(fulls, accumulating, setups, body_indent, lane, False)
                plain += [f"{body_indent}cnt += 1"] if counting else []
                body = pair.unswitch(self, inner.pop(), body, plain, block_indent)
            if self.flagging and self.range_checks:
                body.append(f"{body_indent}bad = bad | {' | '.join(self.range_checks)}")
                if counting:
                    inner.insert(block_setup, f"{block_indent}cnt0 = cnt")
                body.append(f"{block_indent}if bad:")
                if counting:
                    body.append(f"{block_indent}    cnt = cnt0")
                body.append(f"{block_indent}    for i{last} in range(b{last}, e{last}):")
                self.fixup = True
                redo = self.phase_body(fulls, accumulating, setups, body_indent + "    ", lane)
                self.fixup = False
                body += redo + ([f"{body_indent}    cnt += 1"] if counting else [])
            if split:
                body += self.block_reductions(accumulating, setups, pair, block_indent, last)
            if blocked and block_indent is not None:
                body += _block_sum_lines(blocked, block_indent)
                lines.append(f"{indent}blocks = 0")
            if not reduced and not body:
                body.append(f"{body_indent}pass")
            lines += inner + body
            self.loads = saved
            self.flagging = False
            if chunk is not None:
                return
            self.phase_results(accumulating, setups, pair, lines, indent)
            self.row_values(phase, lines, indent)

    def phase_loops(
        self,
        reduced: list,
        indent: str,
        chunk,
        parallel_blocks: bool,
        blocked: list | None,
        split: bool,
    ) -> tuple:
        """A phase's loop headers over the reduced axes: ``(lines, body indent, block indent,
        index in lines where a block's set-up ends)``. With ``blocked`` not None the innermost
        loop runs in blocks of BLOCK: a block's sum starts from zero, and a block whose
        arguments left a fast path's range is recomputed."""
        inner, body_indent, block_indent, block_setup = [], indent, None, None
        for depth, axis in enumerate(reduced):
            start, stop = ("lo", "hi") if chunk is not None and depth == 0 else ("0", f"n{axis}")
            if blocked is not None and axis == reduced[-1]:
                block_indent = body_indent + "    "
                if parallel_blocks:
                    blocks = f"({stop} + {BLOCK - 1}) // {BLOCK}"
                    inner.append(f"{body_indent}for c{axis} in prange({blocks}):")
                    inner.append(f"{block_indent}b{axis} = c{axis} * {BLOCK}")
                else:
                    inner.append(f"{body_indent}for b{axis} in range({start}, {stop}, {BLOCK}):")
                # not min(): Numba compiles its overload of min per kernel (twice if parallel)
                inner.append(
                    f"{block_indent}e{axis} = {stop} if b{axis} + {BLOCK} > {stop} "
                    f"else b{axis} + {BLOCK}"
                )
                if not split:
                    inner += [f"{block_indent}blk_{acc} = {zero}" for acc, zero in blocked]
                if self.flagging:
                    inner.append(f"{block_indent}bad = False")
                block_setup = len(inner)
                start, stop = f"b{axis}", f"e{axis}"
                body_indent = block_indent
            bounds = f"{start}, {stop}" if start != "0" else stop
            inner.append(f"{body_indent}for i{axis} in range({bounds}):")
            body_indent += "    "
        return inner, body_indent, block_indent, block_setup

    def accumulator_setup(self, accumulating: list, setups: dict, split: bool, indent: str) -> list:
        """Before a phase loop: each accumulator's start value, and its block buffer if split."""
        lines = []
        for r, acc in accumulating:
            setup = setups[r]
            if setup.get("arg"):  # at = -1: no element seen yet
                lines.append(f"{indent}best_{acc} = {tpl.literal(0, setup['acc'])}")
                lines.append(f"{indent}at_{acc} = -1")
                continue
            lines.append(f"{indent}acc_{acc} = {setup['init']}")
            if setup.get("blocked"):
                lines.append(f"{indent}mid_{acc} = {setup['init']}")
            if split:
                zero = tpl.literal(0, self.lane_dtype(r, acc, setup))
                lines.append(
                    f"{indent}lane_{acc} = carray(_s.block_buffer({zero}, {BLOCK}), {BLOCK})"
                )
        return lines

    def block_reductions(
        self, accumulating: list, setups: dict, pair, block_indent: str, last: int
    ) -> list:
        """After a split loop's block: each block buffer reduced by lanes into its accumulator
        (the online pair's max and sum by the pair's own lines)."""
        lines = []
        for r, acc in accumulating:
            if pair and r in (pair.top, pair.total):
                continue
            setup = setups[r]
            lane_type = self.lane_dtype(r, acc, setup)
            value = self.lane_reduction(setup, lane_type, f"lane_{acc}", f"e{last} - b{last}")
            if setup.get("blocked"):
                lines.append(f"{block_indent}blk_{acc} = {value}")
            else:
                lines.append(block_indent + setup["combine"].format(a=f"acc_{acc}", p=value))
        if pair:
            lines += pair.block_lines(self, setups, block_indent, f"e{last} - b{last}")
        return lines

    def phase_results(self, accumulating: list, setups: dict, pair, lines: list, indent: str):
        """After a phase loop: each reduction's final value, stored when it is an output."""
        outputs = {node: i for i, node in enumerate(self.outputs)}
        for r, acc in accumulating:
            name, setup = self.name(r), setups[r]
            if setup.get("blocked"):
                lines.append(f"{indent}acc_{acc} += mid_{acc}")
            if acc != name:  # the mean pass of var/std
                lines.append(f"{indent}mean_{name} = {setup['mean']}")
                continue
            if pair and r is pair.total:
                lines += pair.settle_lines(self, indent)
            lines.append(f"{indent}{name} = {setup['final']}")
            if r in outputs:
                self.store_row(r, outputs[r], name, lines, indent)

    def phase_body(
        self,
        fulls: list,
        accumulating: list,
        setups: dict,
        indent: str,
        lane: str | None,
        online_exps: bool = True,
    ) -> list:
        """One element of a phase loop: its values, stores and reduction updates.

        ``lane``: the index into the block buffers when the loop is split (reduction operands
        are stored there, not accumulated). Range checks of the fast paths collect in
        ``range_checks``. ``online_exps``: whether the online loop's exps are taken (not
        before the first block's max).
        """
        outputs = {node: i for i, node in enumerate(self.outputs)}
        self.loads = {}
        self.range_checks = []
        body: list = []
        for node in self.members:
            if node in fulls:
                self.emit_full(node, body, indent)
                if node in outputs:
                    self.store_full(node, outputs[node], body, indent)
            for r, acc in accumulating:
                if r is node and self.online and r is self.online.total:
                    if online_exps:
                        body += self.online.element_lines(self, indent, lane, setups[r])
                elif r is node:
                    into = f"lane_{acc}[{lane}]" if lane else None
                    self.emit_update(node, setups[node], body, indent, acc, into)
        return body

    def lane_dtype(self, node: Node, acc: str, setup: dict) -> np.dtype:
        """The element type of a reduction's block buffer: its operand's own float type when
        that is narrower than the accumulator (the lane reduction widens it exactly), so the
        vector loop keeps its width (LLVM declines a float32 loop that stores float64)."""
        second_pass = setup.get("var") and acc == self.name(node)
        operand = setup["out"] if second_pass else node.args[0].meta.dtype
        wide = setup["acc"]
        if operand.kind == wide.kind and operand.itemsize < wide.itemsize:
            return operand
        return wide

    def lane_reduction(self, setup: dict, lane: np.dtype, buffer: str, count: str) -> str:
        """The reduction of one block buffer (elements of ``lane``) of ``count`` values."""
        kind = setup["lane"]
        helper = "float_lane" if lane.kind == "f" and kind in ("sum", "max", "min") else "lane"
        if kind == "sum":
            return f"_s.{helper}_sum({buffer}, {count}, {tpl.literal(0, setup['acc'])})"
        return f"_s.{helper}_{kind}({buffer}, {count})"

    def range_limited(self, nodes: list) -> bool:
        """Whether any of ``nodes`` is a function whose fast path holds only in a range (sin...)."""
        return any(
            (t := self.expansion_of(n)) is not None and t.range_limit is not None for n in nodes
        )

    @staticmethod
    def expansion_of(node: Node):
        op = node.target
        if not isinstance(op.impl, np.ufunc) or node.meta.dtype not in (np.float32, np.float64):
            return None
        return mathlib.TEMPLATES.get(op.name)

    def row_values(self, after: int, lines: list, indent: str) -> None:
        """The per-row elementwise values known once loop ``after`` is done, and their stores."""
        self.vector_loop = False  # once per row, outside the loops over the row
        self.in_row_values = True
        outputs = {node: i for i, node in enumerate(self.outputs)}
        for node in self.members:
            if self.after_of.get(node) == after and not node.target.loop_reduction:
                self.comment(node, lines, indent)
                lines.append(f"{indent}{self.name(node)} = {self.elementwise(node, lines, indent)}")
                if node in outputs:
                    self.store_row(node, outputs[node], self.name(node), lines, indent)
        self.in_row_values = False

    def chunked_reduction(self, setups: dict, indent: str) -> list:
        """A reduction over all axes: ``CHUNKS`` parallel partial results, combined in order."""
        lines: list = []
        first = self.axes[0]
        inner = self.reduced_count(self.axes[1:])
        for r in self.reductions:
            setup, name = setups[r], self.name(r)
            if setup.get("arg"):
                lines.append(
                    f"{indent}part_best_{name} = np.empty({CHUNKS}, {tpl.type_name(setup['acc'])})"
                )
                lines.append(f"{indent}part_at_{name} = np.full({CHUNKS}, -1, np.int64)")
            else:
                lines.append(
                    f"{indent}part_{name} = np.empty({CHUNKS}, {tpl.type_name(setup['acc'])})"
                )
        lines.append(f"{indent}for c in prange({CHUNKS}):")
        body_indent = indent + "    "
        lines.append(f"{body_indent}lo = n{first} * c // {CHUNKS}")
        lines.append(f"{body_indent}hi = n{first} * (c + 1) // {CHUNKS}")
        self.row_body(setups, lines, body_indent, inner)
        for r in self.reductions:
            setup, name = setups[r], self.name(r)
            if setup.get("arg"):
                lines.append(f"{body_indent}if hi > lo:")
                lines.append(f"{body_indent}    part_best_{name}[c] = best_{name}")
                lines.append(f"{body_indent}    part_at_{name}[c] = at_{name}")
            else:
                total = f"acc_{name} + mid_{name}" if setup.get("blocked") else f"acc_{name}"
                lines.append(f"{body_indent}part_{name}[c] = {total}")
        outputs = {node: i for i, node in enumerate(self.outputs)}
        for r in self.reductions:
            setup, name = setups[r], self.name(r)
            if setup.get("arg"):
                better = ">" if setup["high"] else "<"
                value = f"part_best_{name}[c]"
                test = f"{value} {better} best_{name}"
                if setup["acc"].kind == "f":
                    test = f"best_{name} == best_{name} and ({test} or {value} != {value})"
                lines += [
                    f"{indent}best_{name} = part_best_{name}[0]",
                    f"{indent}at_{name} = part_at_{name}[0]",
                    f"{indent}for c in range(1, {CHUNKS}):",
                    f"{indent}    if part_at_{name}[c] >= 0 and (at_{name} < 0 or {test}):",
                    f"{indent}        best_{name} = {value}",
                    f"{indent}        at_{name} = part_at_{name}[c]",
                ]
            else:
                lines.append(f"{indent}acc_{name} = {setup['init']}")
                lines.append(f"{indent}for c in range({CHUNKS}):")
                lines.append(
                    f"{indent}    " + setup["combine"].format(a=f"acc_{name}", p=f"part_{name}[c]")
                )
            lines.append(f"{indent}{name} = {setup['final']}")
            if r in outputs:
                self.store_row(r, outputs[r], name, lines, indent)
        self.row_values(0, lines, indent)  # what follows the reductions (one phase: loop 0)
        return lines


def generate(kernel: FusedKernel, options: dict) -> KernelCode:
    """The generated function of ``kernel`` (``NoTemplate`` when an op has no template)."""
    return _Generator(kernel, options).generate()


def _block_sum_lines(blocked: list, block_indent: str) -> list:
    """After each block: its sum into the block sums, every 2**BLOCK_BITS blocks those into the
    total, so no partial sum collects more than 2**BLOCK_BITS terms."""
    mask = (1 << BLOCK_BITS) - 1
    lines = [f"{block_indent}blocks += 1"]
    lines += [f"{block_indent}mid_{acc} += blk_{acc}" for acc, _ in blocked]
    lines.append(f"{block_indent}if blocks & {mask} == 0:")
    for acc, zero in blocked:
        lines.append(f"{block_indent}    acc_{acc} += mid_{acc}")
        lines.append(f"{block_indent}    mid_{acc} = {zero}")
    return lines
