"""A fused kernel's compiled variants, and the host lines that call them.

A kernel is generated twice when a loop of it can run in parallel: a serial variant and a
parallel one (``prange``, or fixed chunks for a reduction over all axes). Which one a call runs
is decided at run time by the size of its iteration space against ``parallel_threshold``, since
the sizes are symbolic: the host writes ::

    _out0_fused_1 = _empty((s0 - 2, s1 - 2), _float64, 'C')
    if (s0 - 2) * (s1 - 2) >= 131072:
        _parallel_fused_1(_out0_fused_1, v_u, n0=s0 - 2, n1=s1 - 2, o0=s1 + 1, st0=s1)
    else:
        _serial_fused_1(_out0_fused_1, v_u, n0=s0 - 2, n1=s1 - 2, o0=s1 + 1, st0=s1)

The variant the traced call needs is compiled with the graph; the other one on its first call
(``LazyKernel``), so a program that only ever runs small arrays never pays the parallel
compile. Arrays (outputs, inputs) are passed positionally, integers by name.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from ...errors import UnsupportedError
from ...ir.kernel import FusedKernel
from ...ir.shape_env import hint, source_of, using
from . import cache, codegen


@dataclass
class Variant:
    """One generated variant; ``loaded`` once Numba has it (None until its first call)."""

    role: str  # "serial" or "parallel"
    code: codegen.KernelCode
    loaded: cache.Loaded | None = None
    called_as: str = ""  # the global a loop program calls it by (``_fused_1 in loop kernel``)


def variants(kernel: FusedKernel, options: dict) -> list[Variant]:
    """The kernel's variants: serial, then parallel when the options allow it and a loop of
    the kernel can run in parallel. Raises ``codegen.NoTemplate``."""
    found = [Variant("serial", codegen.generate(kernel, options, False))]
    if options.get("parallel", True) and kernel.style != "epilogue":  # (see host.py)
        parallel = codegen.generate(kernel, options, True)
        if parallel.parallel:
            found.append(Variant("parallel", parallel))
    return found


def load(kernel: FusedKernel, variant: Variant, program: Any) -> object:
    """Compile (or find) ``variant``; its time and cache event go into ``program``."""
    code = variant.code
    start = time.perf_counter()
    try:
        loaded = cache.load(code.source, code.signature(), code.parallel, code.fastmath_flags)
    except Exception as error:  # Numba's own errors have no common base class
        raise UnsupportedError(
            f"a kernel Numba cannot compile ({kernel.name}: {', '.join(kernel.members)})",
            detail=f"{type(error).__name__}: {numba_message(error)}",
            hint="the function runs eagerly; report this with the code from fn.code",
        ) from error
    program.timings[f"numba {kernel.name} {variant.role} ({loaded.event})"] = (
        time.perf_counter() - start
    )
    program.kernel_compiles += loaded.event == "compiled"
    program.disk_cache_hits += loaded.event == "disk"
    variant.loaded = loaded
    return loaded.function


class LazyKernel:
    """Stands for a variant in the host's globals until its first call, which compiles it
    and puts the compiled kernel in its place (later calls go to it directly)."""

    def __init__(self, name: str, compile_variant: Callable[[], object]):
        self.name = name
        self.compile_variant = compile_variant
        self.namespace: dict | None = None  # the host function's globals, set once it exists
        self.lock = threading.Lock()

    def __call__(self, *args, **kwargs):
        with self.lock:
            function = self.namespace[self.name]
            if function is self:
                function = self.compile_variant()
                self.namespace[self.name] = function
        return function(*args, **kwargs)


def call_lines(
    node_name: str, found: list, arguments: list, size: Any, threshold: int, names: dict
) -> list:
    """The host's call of a kernel: one variant, or the size test choosing between two."""
    calls = [f"_{v.role}_{node_name}({', '.join(arguments)})" for v in found]
    if len(found) == 1:
        return [f"    {calls[0]}"]
    return [
        f"    if {source_of(size, names)} >= {int(threshold)}:",
        f"        {calls[1]}",
        "    else:",
        f"        {calls[0]}",
    ]


def first_needed(found: list, size: Any, threshold: int, env) -> Variant:
    """The variant the traced call runs (compiled with the graph)."""
    if len(found) == 1:
        return found[0]
    with using(env):
        return found[1] if hint(size) >= threshold else found[0]


_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def numba_message(error: Exception) -> str:
    """The informative lines of a Numba error (not its pipeline-stage headers), without the
    terminal colour codes Numba puts in them."""
    lines = [_COLOURS.sub("", line).strip() for line in str(error).splitlines()]
    useful = [
        line
        for line in lines
        if line and not line.startswith(("Failed in ", "During:", "File ", "^", "raised from"))
    ]
    return " / ".join(useful[:3]) or type(error).__name__
