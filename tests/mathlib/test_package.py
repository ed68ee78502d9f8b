"""The mathlib package as a whole: how its functions reach a kernel's loop, and what that costs."""

from __future__ import annotations

import re

import numpy as np
from numba.core import types
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

import gcompile
from gcompile.backends.numba import cache, mathlib
from gcompile.backends.numba.mathlib import atan, bits, exp, hyperbolic, log, special, trig
from tests.support import NUMBA_ULPS, assert_same_value


def _functions(option: str, modules=(atan, bits, exp, hyperbolic, log, special, trig)) -> list:
    """(name, dispatcher) of every function of ``modules`` compiled with the Numba ``option``."""
    found = []
    for module in modules:
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.targetoptions.get(option):
                found.append((f"{module.__name__}.{name}", value))
    return found


def test_functions_inlined_by_numba_set_up_no_disk_cache():
    # Never compiled alone: a disk cache would only probe the cache directory per function at
    # every import of the package.
    functions = _functions("inline")
    assert len(functions) > 50  # every family module's functions and horner
    cached = [name for name, fn in functions if not isinstance(fn._cache, NullCache)]
    assert cached == []


def test_functions_inlined_by_llvm_are_cached_compiled_once_and_leave_no_call():
    functions = dict(_functions("forceinline", modules=(mathlib,)))
    assert "gcompile.backends.numba.mathlib.sin_f64" in functions  # what kernels call
    uncached = [name for name, fn in functions.items() if isinstance(fn._cache, NullCache)]
    assert uncached == []

    def two_sines(a):
        return np.sin(a) * np.sin(a + 1.0)

    x = np.linspace(-3.0, 3.0, 300)
    fn = gcompile.compile(two_sines, fullgraph=True, options={"parallel": False})
    assert_same_value(two_sines(x), fn(x), NUMBA_ULPS, scale=np.float64)
    assert "_m.sin_f64(" in fn.code
    (code, _), *_ = fn.entries[-1].run.program.kernels
    text = cache.module_text(code.source, code.parallel, code.fastmath_flags)
    namespace: dict = {}
    exec(compile(text.replace("cache=True", "cache=False"), "<kernel>", "exec"), namespace)
    kernel = namespace["kernel"]
    kernel.compile(code.signature())
    # sin_f64 was compiled on its own (once, for both calls), then inlined by LLVM
    assert (types.float64,) in mathlib.sin_f64.signatures
    llvm = "\n".join(kernel.inspect_llvm().values())
    assert re.search(r"call [^\n]*sin_f64", llvm) is None
