"""The mathlib package as a whole: what importing it sets up."""

from __future__ import annotations

from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

from gcompile.backends.numba.mathlib import atan, bits, exp, hyperbolic, log, special, trig


def _inlined_functions() -> list:
    found = []
    for module in (atan, bits, exp, hyperbolic, log, special, trig):
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.targetoptions.get("inline") == "always":
                found.append((f"{module.__name__}.{name}", value))
    return found


def test_functions_inlined_into_kernels_set_up_no_disk_cache():
    # Inlined at the Numba IR level, they are never compiled alone: a disk cache would only
    # cost a probe of the cache directory per function each time the package is imported.
    functions = _inlined_functions()
    assert len(functions) > 50  # every family module's expansions and helpers were found
    cached = [name for name, fn in functions if not isinstance(fn._cache, NullCache)]
    assert cached == []
