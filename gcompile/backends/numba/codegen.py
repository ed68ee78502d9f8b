"""Code generation: a ``FusedKernel`` becomes the source of one Numba function with a loop nest.

    FusedKernel --lower--> loop IR (plain nest) --REWRITES--> loop IR --render--> source

The lowering (``loops.lower``) writes the kernel's plan as a plain loop nest; the rewrites, a
flat named list, make it fast (``REWRITES``); the renderer writes Numba source (``render``),
each element through the op's rule (``rules``). The function's parameters are the output
arrays (allocated by the host), the input arrays themselves, and integers the host computes
from the symbolic sizes at each call: the sizes of the iteration space (``n0``, ``n1``, ...) and
the offsets and strides of the reads (``o0``, ``s0``, ...). Sizes are never baked into the code,
so every size reuses the compiled function; only what shapes the loop (ndim, layouts, which
axes broadcast, literal constants) is in the text, and the text is the kernel's cache key. A
kernel has a serial and, when a loop of it can run in parallel, a parallel variant; the host
picks one per call by the size of its iteration space.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import from_dtype
from numba.core import types as nbtypes

from ...ir.kernel import FusedKernel
from ...loops import blocks, columns, lanes, online, parallel, ranges
from ...loops.lower import lower
from ...loops.nodes import Kernel, Param, Unsupported
from ...loops.rewrite import apply_rewrites
from .mathselect import MathContext, range_limits, select_math
from .render import render
from .rules import NoTemplate

SAFE_FASTMATH = ("afn", "arcp", "contract", "nsz")  # the LLVM flags the expansions tolerate

# The rewrites, in order: each may rely on those before it.
REWRITES = (
    ("split_lanes", lanes.split_lanes),
    ("blocked_sums", blocks.blocked_sums),
    ("online_pair", online.online_pair),
    ("range_fixups", ranges.range_fixups),
    ("chunk_total", parallel.chunk_total),
    ("parallel_columns", columns.parallel_columns),
    ("parallel_loops", parallel.parallel_loops),
    ("select_math", select_math),
)

__all__ = ["KernelCode", "NoTemplate", "REWRITES", "generate", "loop_kernel", "numba_type"]


@dataclass
class KernelCode:
    """The generated function of one kernel and how the host calls it.

    ``arguments`` has one entry per parameter: ``("output", i)`` the i-th output
    buffer, ``("base", i)`` input i itself (the kernel reads its memory flat), ``("array",
    i, views)`` input i through ``views`` (host-evaluated: an input without a layout
    promise), ``("scalar", i)`` input i as a scalar, ``("int", size)`` an integer the host
    computes at each call from the symbolic sizes (``size`` an int or an expression).
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
    writes: int | None = None  # the input the result is written into (then no output buffer)
    readable: str = ""  # the source with node names and IR lines as comments (``fn.code``)

    def signature(self) -> tuple:
        """The Numba argument types."""
        return tuple(self.types)

    @property
    def fastmath_flags(self) -> str:
        """Numba's ``fastmath`` argument: under ``fastmath=True``, a kernel with expansions gets
        only the flags they survive (``reassoc`` with ``nsz`` folds their rounding tricks away,
        ``nnan``/``ninf`` their special-value selects; ``shared/notes/vector-math.md``
        section 4)."""
        if not self.fastmath:
            return "False"
        if self.expansions:
            return "{" + ", ".join(repr(flag) for flag in SAFE_FASTMATH) + "}"
        return "True"


def numba_type(dtype: np.dtype) -> nbtypes.Type:
    """The Numba scalar type of ``dtype``."""
    return from_dtype(np.dtype(dtype))


def generate(kernel: FusedKernel, options: dict, parallel: bool = False) -> KernelCode:
    """The generated function of ``kernel`` (``NoTemplate`` when an op has no rule): its
    parallel variant when ``parallel`` (``code.parallel`` is False when no loop of it can run
    in parallel), else the serial one, with its readable form (node names, IR lines) rendered
    from the same loop IR. Options: ``fastmath``, ``sequential_sums``."""
    fastmath = bool(options.get("fastmath", False))
    ctx = MathContext(parallel=parallel, range_limits=range_limits)
    rewrites = REWRITES
    if options.get("sequential_sums"):  # short sums in a loop program: one accumulator each
        rewrites = [r for r in REWRITES if r[0] not in ("blocked_sums", "split_lanes")]
    loops = apply_rewrites(loop_kernel(kernel, fastmath), ctx, rewrites)
    source, params = render(loops, False)
    return KernelCode(
        kernel.name,
        source,
        readable=render(loops, True)[0],
        params=params,
        arguments=[p.argument for p in loops.params],
        types=[_param_type(p) for p in loops.params],
        parallel=loops.parallel,
        fastmath=fastmath,
        expansions=ctx.expansions,
        math=ctx.math,
        outputs=[meta for meta, _ in loops.outputs],
        orders=[order for _, order in loops.outputs],
        writes=loops.writes,
    )


def loop_kernel(kernel: FusedKernel, fastmath: bool = False) -> Kernel:
    """The plain loop nest of ``kernel``, before the rewrites."""
    for node in kernel.graph.nodes:
        dtype = getattr(node.meta, "dtype", None)
        if dtype is not None and without_arithmetic(dtype):
            raise NoTemplate(f"{dtype} (Numba has no {dtype} arithmetic)")
    try:
        return lower(kernel, fastmath, _range_limited)
    except Unsupported as missing:
        raise NoTemplate(str(missing)) from None


def without_arithmetic(dtype: np.dtype) -> bool:
    """Whether Numba has no arithmetic for ``dtype`` (float16, longdouble)."""
    return dtype.kind in "fc" and dtype.itemsize not in (4, 8, 16)


def _range_limited(nodes: list) -> bool:
    return any(range_limits(node) is not None for node in nodes)


def _param_type(param: Param) -> nbtypes.Type:
    if param.ndim is None:
        return numba_type(param.dtype)
    return nbtypes.Array(numba_type(param.dtype), param.ndim, param.layout, readonly=param.readonly)
