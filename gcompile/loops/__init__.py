"""The loop IR: a fused kernel as loops, loads and stores, between the graph and source text.

    FusedKernel --lower--> Kernel (the plain loop nest) --rewrites--> Kernel --backend--> source

Rooms: ``nodes`` (the IR), ``printer`` (its text), ``plan`` (phases of a kernel's loops),
``lower`` (the plain nest), ``indexing`` (index maps of reads), ``dtypes`` (what an op computes
in), ``reductions`` (accumulators), ``rewrite`` (what rewrites share), and the rewrites:
``lanes`` (split loops), ``blocks`` (blocked sums), ``online`` (online max and sum of exps),
``ranges`` (range fix-ups), ``parallel`` (chunked totals, parallel loops), ``allocations``
(buffers made once before a loop program's loops). Loop programs and the host function are
loop IR too (``nodes``: calls, subscripts, symbolic sizes), lowered by the backend. This
package imports only ``gcompile.ir``; backends import it.
"""

from .nodes import Kernel, Unsupported
from .printer import format_kernel

__all__ = ["Kernel", "Unsupported", "format_kernel"]
