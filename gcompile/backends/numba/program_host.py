"""Compiling loop programs (``programs``) for the host: their kernels as cached modules of their
own, the program's module importing them, and a graph's whole host as one program.

A program's module (``cache``) starts with a preamble binding each kernel it calls to the
kernel's dispatcher by cache key, so kernels are cached separately (their modules written
first, compiled by the program's typing for the types it passes); the module text is the
program's key, and Numba keeps its machine code on disk.
"""

from __future__ import annotations

import time

from ...errors import UnsupportedError
from . import cache, kernels, programs

# Numba's ``parallel`` option for a program with a parallel loop: its ``prange`` loops only.
# With ``parallel=True`` Numba would also run array creation and region assignments elsewhere in
# the program as parallel loops, each start costing microseconds, in serial loops too.
PRANGE_ONLY = (
    "{'comprehension': False, 'reduction': False, 'inplace_binop': False, 'setitem': False, "
    "'numpy': False, 'stencil': False, 'fusion': False, 'prange': True}"
)


def load(program: programs.LoopProgram, name: str, options: dict, host) -> object:
    """Compile (or find) ``program``'s function; what it cost goes into ``host`` (the
    ``HostProgram``). Raises ``UnsupportedError`` when Numba cannot compile it."""
    fastmath = "True" if options.get("fastmath") else "False"
    preamble = _preamble(program, name, fastmath, host)
    signature = programs.signature(program)
    start = time.perf_counter()
    try:
        nogil = not program.objmode
        # (a program calling a parallel kernel is compiled parallel too: Numba loading a serial
        # function from its disk cache does not start the threads the kernel's loop runs on)
        calls_parallel = any(v.code.parallel for v in program.kernels.values())
        parallel = PRANGE_ONLY if program.parallel or calls_parallel else False
        loaded = cache.load(program.source, signature, parallel, fastmath, preamble, nogil)
    except Exception as error:  # Numba's own errors have no common base class
        raise UnsupportedError(
            f"a loop Numba cannot compile ({name})",
            detail=f"{type(error).__name__}: {kernels.numba_message(error)}",
        ) from error
    host.timings[f"numba loop {name} ({loaded.event})"] = time.perf_counter() - start
    host.kernel_compiles += loaded.event == "compiled"
    host.disk_cache_hits += loaded.event == "disk"
    host.loops.append((name, program.source))
    host.callbacks += program.callbacks
    return loaded.function


def _preamble(program: programs.LoopProgram, name: str, fastmath: str, host) -> str:
    """The module preamble binding the kernels ``program`` calls; their modules are written to
    the cache, and compiled when the program is, for the types it passes them."""
    keys = {}
    for global_name, variant in program.kernels.items():
        variant.called_as = f"{global_name} in loop {name}"
        code = variant.code
        keys[global_name] = cache.module_key(code.source, code.parallel, code.fastmath_flags)
        host.variants.append(variant)
    return programs.module_preamble(program, keys)
