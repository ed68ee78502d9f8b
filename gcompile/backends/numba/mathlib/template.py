"""The record each mathlib family module declares its expansions with."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MathTemplate:
    """One ufunc's vectorisable expansion, as ``<ufunc>_f32`` and ``<ufunc>_f64`` in its module.

    ``ulps``: the documented worst error (float32, float64) in ulp of the correctly rounded
    result, measured by ``tests/mathlib``. ``range_limit``: for functions whose fast path is
    accurate only for ``|x| <= limit`` (float32, float64) (sin, cos, tan); the generated loop
    flags larger arguments and recomputes their elements with libm.
    """

    ufunc: str
    arity: int
    ulps: tuple[float, float]
    range_limit: tuple[float, float] | None = None

    def function(self, dtype) -> str:
        """The name of the expansion for ``dtype`` (float32 or float64)."""
        return f"{self.ufunc}_f{np.dtype(dtype).itemsize * 8}"

    def limit(self, dtype) -> float | None:
        """``range_limit`` for ``dtype``, or None when the expansion covers every input."""
        if self.range_limit is None:
            return None
        return self.range_limit[np.dtype(dtype).itemsize == 8]
