"""The graph breaks of one compiled function: where a refusal names a top-level statement of
the function, the function runs as compiled regions around it and the statement in Python
(``capture/breaks.py`` makes the split).

A split is made once per refused line and kept; each region is a compiled function of its
own (with the options of the function it came from), so a region that refuses another
statement breaks again, up to ``MAX_DEPTH`` nested splits.
"""

from __future__ import annotations

import math
import types
from typing import Any, Callable

from .capture import breaks
from .errors import UnsupportedError
from .ir import ops
from .ir.meta import TupleMeta
from .ir.shape_env import concrete
from .ir.subgraph import loop_of
from .ir.symbolic import INF

MAX_DEPTH = 8  # regions of regions: each has fewer statements, so this bounds the work
# A region that does little work a call (no loop, fewer steps than make its host one Numba
# function, small values; of scalars, fewer than SCALAR_STEPS) costs more per call than NumPy
# takes for that work: from its PER_TRIP_TRIAL-th call, when it runs on every trip of a Python
# loop, else from its second, the driver calls the Python code (its calls take the general
# path until then, counted). A trial of a few calls, not the first alone: the first trips'
# sizes need not be the later ones'; a region judged small then runs as eager runs it.
PER_TRIP_TRIAL = 16
SMALL_ELEMENTS = 4096
SCALAR_STEPS = 32  # ... of scalars only, fewer steps than this


class GraphBreaks:
    """The splits of one function by refused line; ``make_region(fn)`` compiles a region."""

    def __init__(self, fn: Callable, make_region: Callable[..., Any], depth: int = 0):
        self.fn = fn
        self.make_region = make_region  # (function, seat: the driver's cell, per trip or not)
        self.depth = depth
        # (source, inner lines) -> the split, why the statement cannot break, or None when
        # the refusal names no statement of the function
        self.splits: dict[tuple, breaks.Split | str | None] = {}

    def split(self, error: UnsupportedError) -> breaks.Split | str | None:
        """The split at the statement of the function that was running when ``error`` was
        raised (a call of a helper that refused, say), why that statement cannot break, or
        None when the refusal names no statement of the function."""
        key = self._key(error)
        if key not in self.splits:
            self.splits[key] = self._split(key[0], key[1:])
        return self.splits[key]

    def _key(self, error: UnsupportedError) -> tuple:
        """``(file:line of the function's statement, lines inside it...)`` of a refusal."""
        code = getattr(self.fn, "__code__", None)
        if error.lines and code is not None:
            return (f"{code.co_filename}:{error.lines[0]}", *error.lines[1:])
        return (error.source or "",)

    def _split(self, source: str, inner: tuple) -> breaks.Split | str | None:
        fn = self.fn
        path, _, line = source.rpartition(":")
        if type(fn) is not types.FunctionType or path != fn.__code__.co_filename:
            return None
        if self.depth >= MAX_DEPTH:
            return f"more than {MAX_DEPTH} breaks"
        return breaks.split_at(fn, (int(line), *inner), self.make_region)

    def regions(self) -> list:
        """The compiled regions of the splits made."""
        made = [split for split in self.splits.values() if isinstance(split, breaks.Split)]
        return [region for split in made for _, _, region in split.regions]

    def text(self) -> list[str]:
        """One line per break made: the statement run in Python and the regions around it."""
        lines = []
        for (source, *_), split in self.splits.items():
            if isinstance(split, breaks.Split):
                first, last = split.statement
                regions = ", ".join(f"{name} (lines {a}-{b})" for name, (a, b), _ in split.regions)
                lines.append(
                    f"break at {source}: lines {first}-{last} run in Python; compiled: {regions}"
                )
                lines += [
                    f"  {name} runs in Python from call {region.trips.demoted_at}: "
                    f"{region.trips.demoted}"
                    for name, _, region in split.regions
                    if region.trips and region.trips.demoted
                ]
        return lines


class Trips:
    """The calls of a region, which the driver makes through ``seat`` (a cell): a compiled
    region whose work pays for its call at its first call is kept (its fast entry used from
    then on), else it is judged on its trial call (``PER_TRIP_TRIAL`` when it runs on
    ``every_trip`` of a Python loop, else its first), and when its compiled call costs more
    than its work, ``eager`` takes its seat; a region that is refused or fails puts its Python
    code (or the driver around its own break) there at once (``CompiledFunction._refused``,
    ``_run``)."""

    def __init__(self, seat: Any, eager: Callable, every_trip: bool = True):
        self.seat, self.eager, self.every_trip = seat, eager, every_trip
        self.trial = PER_TRIP_TRIAL if every_trip else 1
        self.calls = 0
        self.demoted: str | None = None  # why Python runs it ("": judged, kept compiled)
        self.demoted_at = 0  # the call from which it does

    def count(self, entry: Any, inputs: list) -> None:
        """Count one call of ``entry`` with ``inputs``; judge the region: kept compiled at its
        first call when its work pays there, else on its trial call."""
        self.calls += 1
        if self.demoted is not None or self.calls not in (1, self.trial):
            return
        if entry.graph is None or entry.refusal is not None or entry.failure is not None:
            return  # (the fallback that follows takes the seat)
        reason = too_little_work(entry.graph, inputs)
        if not reason:
            self.demoted = ""
        elif self.calls == self.trial:
            self.demote(reason)

    @property
    def python(self) -> bool:
        """Whether the seat holds the region's Python code (not compiled code, nor a driver)."""
        return self.seat.cell_contents is self.eager

    def demote(self, reason: str, driver: Callable | None = None, now: bool = False) -> None:
        """The driver calls the region's Python code from now on (``reason``: why), or the
        ``driver`` around its own graph break; ``now``: the call being made runs so too."""
        self.seat.cell_contents = self.eager if driver is None else driver
        self.demoted = reason
        self.demoted_at = max(self.calls, 1) if now else self.calls + 1


def too_little_work(graph: Any, inputs: list) -> str | None:
    """Why a region run on every trip of a Python loop is better run by Python (see
    ``PER_TRIP_TRIAL``), at the sizes of ``inputs``; None when its compiled call pays."""
    # (graphs of that many steps have a host program and a fast entry: cheaper calls)
    from .backends.numba.host_programs import WHOLE_PROGRAM_STEPS

    steps = [n for n in graph.nodes if n.op == "call" and n.target is not ops.KERNEL_OUTPUT]
    if any(loop_of(n) is not None for n in steps):
        return None
    sizes = _sizes_at_most(graph.shape_env, inputs)
    # (a write's work is its value's: writes are whole arrays as values, a part of them written)
    computed = [n for n in steps if getattr(n.target, "kind", None) != "scatter"]
    metas = [
        m for n in computed for m in (n.meta.items if isinstance(n.meta, TupleMeta) else (n.meta,))
    ]
    try:
        largest = max((math.prod(concrete(m.shape, sizes)) for m in metas), default=0)
    except ValueError:  # (a length the data decide with no bound, known only as it runs)
        return None
    # (a NumPy op on small arrays takes about a microsecond, a whole program's call about as
    # much; one on scalars a tenth of that)
    enough = SCALAR_STEPS if largest <= 1 else WHOLE_PROGRAM_STEPS
    # (an element read is no work: ``list(x)`` reads each element, which Python does as fast)
    work = [n for n in steps if not (n.target is ops.GETITEM and n.meta.ndim == 0)]
    if largest >= SMALL_ELEMENTS or len(work) >= enough:
        return None
    return (
        f"{len(steps)} step{'s' * (len(steps) != 1)} on at most {largest} elements a call, "
        "which NumPy runs faster than a compiled call costs"
    )


def _sizes_at_most(shape_env: Any, inputs: list) -> dict:
    """Each size symbol's value at the sizes of ``inputs``; each length the data decide at the
    most it can be (``x[mask]``: the mask's length), when its bound is known."""
    sizes = {}
    for symbol, (position, axis) in shape_env.sources.items():
        value = inputs[position]
        sizes[symbol] = int(value) if axis is None else value.shape[axis]
    for symbol in shape_env.data_sizes:
        if symbol.hi != INF:
            try:
                sizes[symbol] = concrete(symbol.hi, sizes)
            except ValueError:  # (bounded by a loop index or another unknown)
                continue
    return sizes
