"""Branch-free math that LLVM vectorises inside generated loops (issue 6).

Numba lowers ``math.exp``, ``math.tanh`` and the like to one libm call per element (``exp``
float64: 6.4 ns against NumPy's 0.89 ns SIMD loop; ``shared/notes/vector-math.md``), and a call
in a loop keeps the loop scalar. The functions here are straight-line code: selects instead of
branches, ``fma`` and bit casts through the intrinsics in ``bits``, constants typed to the
dtype (float32 stays float32), and nothing left to call once Numba has inlined them
(``inline="always"``), so a loop calling them vectorises. Being inlined, they are never
compiled on their own and carry no ``cache=True`` (which would cost a disk probe per function
when this package is imported). Each family module (``exp``, ``log``,
``trig``, ``atan``, ``hyperbolic``, ``special``) documents its methods and declares its functions in
``TEMPLATES``; this package exports every ``<ufunc>_f32`` / ``<ufunc>_f64``, which generated
kernels call as ``_m.<ufunc>_f64(x)``.
"""

from __future__ import annotations

import numpy as np

from .template import MathTemplate


def _collect():
    from . import atan, exp, hyperbolic, log, special, trig

    table = {}
    for module in (exp, log, trig, atan, hyperbolic, special):
        for template in module.TEMPLATES:
            table[template.ufunc] = template
            for dtype in (np.float32, np.float64):
                name = template.function(dtype)
                globals()[name] = getattr(module, name)
    return table


TEMPLATES: dict[str, MathTemplate] = _collect()
