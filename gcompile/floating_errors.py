"""NumPy's floating-point error state as the caller set it (``np.seterr``, ``np.errstate``).

Compiled code raises no ``FloatingPointError`` and calls no ``np.seterrcall`` handler: Numba's
arithmetic sets no flag NumPy reads. A call made while an error is set to ``"raise"``,
``"call"`` or ``"log"`` therefore runs eagerly (``api``), where NumPy raises as the caller
asked. The state is one object per ``np.errstate`` block or ``np.seterr`` call (NumPy 2: a
context variable); the states seen to raise nothing are remembered, so that a fast entry
tests membership only (``quiet_states``).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

_ACTING = ("raise", "call", "log")
_REMEMBERED = 64  # (a new state per ``with np.errstate(...)`` block: forget them all past this)


def _state_reader() -> Callable[[], Any]:
    try:
        from numpy._core._multiarray_umath import _extobj_contextvar
    except ImportError:  # (NumPy 1: the state read in full)
        return lambda: tuple(sorted(np.geterr().items()))
    return _extobj_contextvar.get


current_state = _state_reader()
quiet_states: set = set()


def acting_errors() -> str | None:
    """The errors NumPy would act on now (``"divide='raise'"``), or None when it only warns or
    ignores (compiled code then behaves as NumPy, but for the warnings)."""
    state = current_state()
    if state in quiet_states:
        return None
    acting = [f"{kind}={how!r}" for kind, how in sorted(np.geterr().items()) if how in _ACTING]
    if acting:
        return ", ".join(acting)
    if len(quiet_states) >= _REMEMBERED:
        quiet_states.clear()
    quiet_states.add(state)
    return None
