"""The loop IR: a fused kernel as loops, loads and stores, between the graph and source text.

    FusedKernel --lower--> Kernel (the plain loop nest) --rewrites--> Kernel --backend--> source

Rooms: ``nodes`` (the IR), ``printer`` (its text), ``plan`` (phases of a kernel's loops),
``lower`` (the plain nest), ``indexing`` (index maps of reads), ``dtypes`` (what an op computes
in), ``reductions`` (accumulators), ``rewrite`` (what rewrites share), and the rewrites:
``lanes`` (split loops), ``blocks`` (blocked sums), ``online`` (online max and sum of exps),
``ranges`` (range fix-ups), ``parallel`` (chunked totals, parallel loops). This package
imports only ``gcompile.ir``; backends import it.
"""

from .nodes import Kernel, Unsupported
from .printer import format_kernel

__all__ = ["Kernel", "Unsupported", "format_kernel"]
