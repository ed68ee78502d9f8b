"""Small kernels as loop IR, without any backend: fused by the real passes, lowered by ``loops``."""

from __future__ import annotations

import textwrap

import gcompile
from gcompile.ir import ops
from gcompile.ir.kernel import FusedKernel
from gcompile.loops import blocks, lanes, online, parallel, ranges
from gcompile.loops.lower import lower
from gcompile.loops.printer import format_kernel
from gcompile.loops.rewrite import Context, apply_rewrites

# the rewrites of the loop IR, in the order a backend applies them (math selection is Numba's)
PIPELINE = [
    ("split_lanes", lanes.split_lanes),
    ("blocked_sums", blocks.blocked_sums),
    ("online_pair", online.online_pair),
    ("range_fixups", ranges.range_fixups),
    ("chunk_total", parallel.chunk_total),
    ("parallel_loops", parallel.parallel_loops),
]
SIN_LIMITS = (4096.0, 2.0**45)  # a stand-in backend whose sin is fast only for |x| <= limit


def sin_limits(node):
    return SIN_LIMITS if node.target is ops.SIN else None


def context(parallel: bool = False) -> Context:
    return Context(parallel=parallel, range_limits=sin_limits)


def kernel_of(fn, *args) -> FusedKernel:
    """The first fused kernel of ``fn(*args)``."""
    graph = gcompile.trace(fn, *args, stage="fused")
    return next(n.target for n in graph.nodes if isinstance(n.target, FusedKernel))


def lowered(fn, *args):
    """The plain loop nest of ``fn(*args)``'s kernel."""
    return lower(kernel_of(fn, *args), False, lambda nodes: any(map(sin_limits, nodes)))


def through(kernel, last: str, parallel: bool = False, first: str | None = None):
    """``kernel`` after the rewrites of ``PIPELINE`` from ``first`` (default: the start) up to
    and including ``last``."""
    names = [name for name, _ in PIPELINE]
    start = names.index(first) if first else 0
    steps = PIPELINE[start : names.index(last) + 1]
    return apply_rewrites(kernel, context(parallel), steps)


def before_after(kernel, name: str, parallel: bool = False) -> tuple[str, str]:
    """The text of ``kernel`` just before rewrite ``name`` and just after it."""
    names = [n for n, _ in PIPELINE]
    position = names.index(name)
    before = through(kernel, names[position - 1], parallel) if position else kernel
    after = apply_rewrites(before, context(parallel), [PIPELINE[position]])
    return format_kernel(before), format_kernel(after)


def golden(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")
