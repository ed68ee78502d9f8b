"""Branch-free math that LLVM vectorises inside generated loops (issue 6).

Numba lowers ``math.exp``, ``math.tanh`` and the like to one libm call per element (``exp``
float64: 6.4 ns against NumPy's 0.89 ns SIMD loop; ``shared/notes/vector-math.md``), and a call
in a loop keeps the loop scalar. The functions here are straight-line code: selects instead of
branches, ``fma`` and bit casts through the intrinsics in ``bits``, constants typed to the
dtype (float32 stays float32), and nothing left to call once inlined, so a loop calling them
vectorises. Each family module (``exp``, ``log``, ``trig``, ``atan``, ``hyperbolic``,
``special``) documents its methods and declares its functions in ``TEMPLATES``; this package
exports every ``<ufunc>_f32`` / ``<ufunc>_f64``, which generated kernels call as
``_m.<ufunc>_f64(x)``.

How they are inlined is a compile-time matter (``bits.inline_in_numba_ir``/``inline_in_llvm``).
Numba's IR inlining types and lowers the expansion again at every call site of every kernel:
a kernel with two sines, two cosines and an arcsin (haversine) spent 2.8 s of CPU compiling.
So the exported functions of every family but ``exp`` are compiled once per signature (their
helpers inlined into them by Numba), kept in Numba's disk cache, and inlined by LLVM
(``alwaysinline``) into the kernel before its loops are vectorised: the same haversine kernel
compiled in 0.8 s once they were cached (1.3 s the first time on a machine), with the same
vector instructions in its loop. ``exp`` stays with Numba's IR inlining: with exp and sin both
inlined by LLVM, the exp/sin chain's loop lost its interleaving (half the vector FMAs, 5%
slower), and exp, short and the most common, costs little to inline. The family modules'
own names stay Numba-inlined (``hyperbolic``, ``log`` and ``special`` call ``exp``'s).
"""

from __future__ import annotations

import numpy as np

from .bits import inline_in_llvm
from .template import MathTemplate


def _collect():
    from . import atan, exp, hyperbolic, log, special, trig

    table = {}
    for module in (exp, log, trig, atan, hyperbolic, special):
        for template in module.TEMPLATES:
            table[template.ufunc] = template
            for dtype in (np.float32, np.float64):
                name = template.function(dtype)
                function = getattr(module, name)
                if module is not exp:  # see the module docstring
                    function = inline_in_llvm(function.py_func)
                globals()[name] = function
    return table


TEMPLATES: dict[str, MathTemplate] = _collect()
