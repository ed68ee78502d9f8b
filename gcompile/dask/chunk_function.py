"""The per-chunk callable a dask task runs: picklable, small, compiled where it runs.

It holds the kernel's NumPy source (``source.py``), its entry name and the scalar arguments
bound at planning; the compiled function is made on first use in each process (traced from the
source, its kernels found in gcompile's disk cache after the first compile on the machine) and
shared by every chunk and every task of that process.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

_COMPILED: dict = {}  # (source, entry) -> CompiledFunction, one per process
_LOCK = threading.Lock()
_CHUNK_STRUCTURES = 64  # a chunk function's entries before the recompile warning


@dataclass(frozen=True)
class Widening:
    """A chunk of size 1 along an axis where the kernel is pointwise (an edge chunk of one row)
    is doubled along it before the call and the results cut back to their first row: the trace
    of larger chunks serves it, where size 1, a case of its own in every trace (it broadcasts),
    would trace and compile the kernel again.

    ``rank``: the kernel's space rank; ``arguments``: per chunk argument (right-aligned to the
    space), the space axes along which it is pointwise and its whole array longer than 1 (an
    axis of size 1 throughout broadcasts: it stays); ``outputs``: each output's space axes, in
    order. ``padded``: the axes along which an empty chunk (a stencil's last block cut to
    nothing) is padded to 2 with zeros and every output cut back to nothing: axes every
    output keeps and nothing reduces along, so no value of the padding is ever seen."""

    rank: int
    arguments: tuple
    outputs: tuple
    padded: tuple = ()

    def widen(self, chunks: tuple) -> tuple[tuple, tuple]:
        """The chunks to call with, and ``(space axis, size it had)`` of each axis made 2."""
        sizes: dict = {}
        for chunk, own in zip(chunks, self.arguments):
            for a in own:
                size = chunk.shape[a - self.rank + chunk.ndim]
                if size == 1 or (size == 0 and a in self.padded):
                    sizes[a] = size
        if not sizes:
            return chunks, ()
        wide = []
        for chunk, own in zip(chunks, self.arguments):
            for a, size in sizes.items():
                if a in own:
                    made = _doubled if size else _padded
                    chunk = made(chunk, a - self.rank + chunk.ndim)
            wide.append(chunk)
        return tuple(wide), tuple(sorted(sizes.items()))

    def cut(self, result, axes: tuple):
        """``result`` (one output, or a tuple) cut back along the ``axes`` made 2 to the size
        each had, each a copy laid out as the output was (a later kernel reading it meets the
        layout of its other chunks: the view of one column of a C array would be strided)."""
        values = result if isinstance(result, tuple) else (result,)
        sizes = dict(axes)
        cut = []
        for value, space in zip(values, self.outputs):
            part = value[tuple(slice(0, sizes[a]) if a in sizes else slice(None) for a in space)]
            cut.append(laid_out(part.copy(), value))
        return tuple(cut) if isinstance(result, tuple) else cut[0]


def _doubled(chunk: np.ndarray, axis: int) -> np.ndarray:
    """``chunk`` twice along ``axis``, laid out as its neighbours are (``laid_out``)."""
    return laid_out(np.concatenate((chunk, chunk), axis=axis), chunk)


def _padded(chunk: np.ndarray, axis: int) -> np.ndarray:
    """An empty ``chunk`` made 2 long along ``axis`` with zeros (C order: an empty block's
    strides say nothing of how its neighbours are laid out)."""
    padded = np.zeros(chunk.shape[:axis] + (2,) + chunk.shape[axis + 1 :], chunk.dtype)
    padded.flags.writeable = chunk.flags.writeable
    return padded


def laid_out(array: np.ndarray, chunk: np.ndarray) -> np.ndarray:
    """``array`` (new, C-contiguous: ``chunk`` made longer) laid out as a longer ``chunk`` would
    be, so that the layout guard of its neighbours' trace holds for it too: C-contiguous if the
    strides of ``chunk`` are a C array's (rows of a C array), F-contiguous if they are an F
    array's, else strided (a block of columns); read-only if ``chunk`` is."""
    if _dense(chunk.strides, chunk.shape, chunk.itemsize):
        laid = array
    elif _dense(chunk.strides[::-1], chunk.shape[::-1], chunk.itemsize):
        laid = np.asfortranarray(array)
    else:
        laid = strided(array)
    laid.flags.writeable = chunk.flags.writeable
    return laid


def _dense(strides: tuple, shape: tuple, itemsize: int) -> bool:
    """Whether each axis's stride is the size of the axes after it (a size-1 axis's too: it
    tells how the array the chunk came from is laid out)."""
    return all(s == itemsize * math.prod(shape[a + 1 :]) for a, s in enumerate(strides))


def strided(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` that is neither C- nor F-contiguous (layout "A"): rows padded."""
    padded = np.empty(array.shape[:-1] + (array.shape[-1] + 1,), array.dtype)
    padded[..., :-1] = array
    return padded[..., :-1]


class ChunkFunction:
    """``f(*chunks)``: the kernel ``entry`` of ``source`` on NumPy chunks.

    ``bound`` maps argument positions to values fixed at planning (scalars); the chunks fill
    the other positions in order. ``compiled=False`` runs the source as plain NumPy (dask's own
    NumPy path, for kernels dask cannot run chunk by chunk). ``options``: the compiled
    function's (``fastmath``, ``parallel``, ...), for the chunk function's compile.
    ``widening``: how chunks of size 1 are served by the trace of larger ones (``Widening``)."""

    def __init__(
        self,
        source: str,
        entry: str,
        bound: dict,
        arity: int,
        compiled: bool = True,
        options: dict | None = None,
        widening: Widening | None = None,
    ):
        self.source = source
        self.entry = entry
        self.bound = dict(bound)
        self.arity = arity
        self.compiled = compiled
        self.options = dict(options or {})
        self.widening = widening
        self._key = (source, entry, compiled, repr(sorted(self.options.items())))

    def __call__(self, *chunks):
        function = self.function()
        widened = ()
        if self.widening is not None and self.compiled:
            chunks, widened = self.widening.widen(chunks)
        it = iter(chunks)
        args = [self.bound[i] if i in self.bound else next(it) for i in range(self.arity)]
        result = function(*args)
        return self.widening.cut(result, widened) if widened else result

    def function(self):
        """The compiled (or plain) function of the source, made once per process."""
        key = self._key
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
        return (ChunkFunction, (*arguments, self.widening))

    def __repr__(self) -> str:
        return f"<gcompile chunk function {self.entry}>"


def _make(source: str, entry: str, compiled: bool, options: dict):
    namespace = {"np": np}
    exec(compile(source, f"<gcompile chunk {entry}>", "exec"), namespace)  # noqa: S102
    function = namespace[entry]
    if not compiled:
        return function
    from ..api import compile as gcompile  # the chunk function is a compiled function itself

    # (the argument structures it meets are the user's chunkings, each a key: no warning at 8)
    return gcompile(function, options={"cache_size_limit": _CHUNK_STRUCTURES, **options})
