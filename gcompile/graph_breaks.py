"""The graph breaks of one compiled function: where a refusal names a top-level statement of
the function, the function runs as compiled regions around it and the statement in Python
(``capture/breaks.py`` makes the split).

A split is made once per refused line and kept; each region is a compiled function of its
own (with the options of the function it came from), so a region that refuses another
statement breaks again, up to ``MAX_DEPTH`` nested splits.
"""

from __future__ import annotations

import types
from typing import Any, Callable

from .capture import breaks
from .errors import UnsupportedError

MAX_DEPTH = 8  # regions of regions: each has fewer statements, so this bounds the work


class GraphBreaks:
    """The splits of one function by refused line; ``make_region(fn)`` compiles a region."""

    def __init__(self, fn: Callable, make_region: Callable[[Callable], Any], depth: int = 0):
        self.fn = fn
        self.make_region = make_region
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
        return lines
