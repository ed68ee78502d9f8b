"""The per-chunk callable a dask task runs: picklable, small, compiled where it runs.

It holds the kernel's NumPy source (``source.py``), its entry name and the scalar arguments
bound at planning; the compiled function is made on first use in each process (traced from the
source, its kernels found in gcompile's disk cache after the first compile on the machine) and
shared by every chunk and every task of that process.
"""

from __future__ import annotations

import threading

import numpy as np

_COMPILED: dict = {}  # (source, entry) -> CompiledFunction, one per process
_LOCK = threading.Lock()


class ChunkFunction:
    """``f(*chunks)``: the kernel ``entry`` of ``source`` on NumPy chunks.

    ``bound`` maps argument positions to values fixed at planning (scalars); the chunks fill
    the other positions in order. ``compiled=False`` runs the source as plain NumPy (dask's own
    NumPy path, for kernels dask cannot run chunk by chunk). ``options``: the compiled
    function's (``fastmath``, ``parallel``, ...), for the chunk function's compile."""

    def __init__(
        self,
        source: str,
        entry: str,
        bound: dict,
        arity: int,
        compiled: bool = True,
        options: dict | None = None,
    ):
        self.source = source
        self.entry = entry
        self.bound = dict(bound)
        self.arity = arity
        self.compiled = compiled
        self.options = dict(options or {})

    def __call__(self, *chunks):
        function = self.function()
        it = iter(chunks)
        args = [self.bound[i] if i in self.bound else next(it) for i in range(self.arity)]
        return function(*args)

    def function(self):
        """The compiled (or plain) function of the source, made once per process."""
        key = (self.source, self.entry, self.compiled, repr(sorted(self.options.items())))
        found = _COMPILED.get(key)
        if found is None:
            with _LOCK:
                found = _COMPILED.get(key)
                if found is None:
                    found = _make(self.source, self.entry, self.compiled, self.options)
                    _COMPILED[key] = found
        return found

    def __reduce__(self):
        arguments = (self.source, self.entry, self.bound, self.arity, self.compiled, self.options)
        return (ChunkFunction, arguments)

    def __repr__(self) -> str:
        return f"<gcompile chunk function {self.entry}>"


def _make(source: str, entry: str, compiled: bool, options: dict):
    namespace = {"np": np}
    exec(compile(source, f"<gcompile chunk {entry}>", "exec"), namespace)  # noqa: S102
    function = namespace[entry]
    if not compiled:
        return function
    from ..api import compile as gcompile  # the chunk function is a compiled function itself

    return gcompile(function, options=options)
