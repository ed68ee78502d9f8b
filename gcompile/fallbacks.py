"""What a compiled function does with a call it cannot run as compiled code: the regions
around a graph break (``graph_breaks``), or the eager function, warning once per reason."""

from __future__ import annotations

import warnings
from typing import Any, Callable

from .capture.breaks import Split
from .errors import GcompileWarning, UnsupportedError
from .graph_breaks import GraphBreaks


class Fallbacks:
    """The fallbacks of one compiled function ``name`` (its eager function ``eager``); the
    counters ``stats`` and the list ``refusals`` are the compiled function's own."""

    def __init__(self, name: str, eager: Callable, fullgraph: bool, breaks: GraphBreaks,
                 stats: dict, refusals: list):  # fmt: skip
        self.name, self.eager, self.fullgraph = name, eager, fullgraph
        self.breaks, self.stats, self.refusals = breaks, stats, refusals
        self.warned: set[str] = set()

    def refused(self, error: UnsupportedError, args: tuple, kwargs: dict) -> Any:
        """A refused call: around its graph break, else eagerly (``fullgraph``: raise)."""
        if self.fullgraph:
            raise error
        split = self.breaks.split(error)
        if isinstance(split, Split):  # compiled regions around the refused statement
            first, last = split.statement
            self._warn(
                f"break {error.reason}",
                error,
                f"gcompile breaks the graph of {self.name}: lines {first}-{last} run in Python, "
                f"the statements before and after them compiled: {error}",
            )
            self.stats["graph_breaks"] += 1
            return split.runner()(*args, **kwargs)
        self.stats["fallbacks"] += 1
        text = f"gcompile runs {self.name} eagerly: {error}"
        if split:
            text += f"\n  no graph break there: {split}"
        self._warn(error.reason, error, text)
        return self.eager(*args, **kwargs)

    def floating_errors(self, acting: str, args: tuple, kwargs: dict) -> Any:
        """A call made while NumPy acts on floating-point errors (``acting``: ``np.seterr`` or
        ``np.errstate`` around the call): eagerly, since the compiled code would not raise
        (``fullgraph``: refused)."""
        if self.fullgraph:
            raise UnsupportedError(f"a call while NumPy's error state is {acting}")
        self.stats["fallbacks"] += 1
        self._warn(
            f"errstate {acting}",
            None,
            f"gcompile runs {self.name} eagerly while NumPy's error state is {acting} "
            "(np.seterr or np.errstate around the call): the compiled code raises no "
            "floating-point errors",
            stacklevel=5,
        )
        return self.eager(*args, **kwargs)

    def failed(self, error: Exception, args: tuple, kwargs: dict) -> Any:
        """Compiling raised something other than a refusal: eager mode decides whose error it is.

        If the eager function raises too, the caller gets eager's own exception (the
        user's error, e.g. mismatched shapes). If it does not, the failure is ours:
        the caller gets eager's result and a warning naming the error (once per entry).
        """
        result = self.eager(*args, **kwargs)
        self.stats["fallbacks"] += 1
        self._warn(
            f"failure {id(error)}",
            None,
            f"gcompile failed to compile {self.name} and ran it eagerly (a gcompile bug, please "
            f"report it): {type(error).__name__}: {error}",
        )
        return result

    def _warn(self, key: str, error: UnsupportedError | None, text: str, stacklevel: int = 4):
        if key in self.warned:
            return
        self.warned.add(key)
        if error is not None:
            self.refusals.append(error)
        warnings.warn(text, GcompileWarning, stacklevel=stacklevel)
