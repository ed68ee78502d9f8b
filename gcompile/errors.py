"""Exceptions and warnings shared by every layer of gcompile.

This module imports nothing from gcompile, so the IR, the tracer, the passes and
the backends may all raise these.
"""

from __future__ import annotations

import linecache
import os
import sys
import types

import numpy

# where gcompile's and NumPy's own code lives: frames outside both are the user's
GCOMPILE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
NUMPY_DIR = os.path.dirname(os.path.abspath(numpy.__file__)) + os.sep
_CAPTURE_RUNTIME = os.path.join(GCOMPILE_DIR, "capture", "runtime.py")  # (see refusal_from)


class DeviceError(ValueError):
    """An array argument lives on a device that is not the CPU (its DLPack device): a
    compiled function runs on the CPU only, and copying would hide the cost."""


class ArchiveError(ValueError):
    """A file ``gcompile.load`` refuses: not an export, damaged, changed since it was written,
    of another format or made with other versions, or holding what an export never holds."""


class GuardError(TypeError):
    """A call of a loaded function (``gcompile.load``) with arguments its guards do not admit:
    it has no source to trace again, and runs no eager fallback."""


class ScalarsDecide(Exception):
    """A value Python needs (``range(int(T / dt))``, an op's parameter) computed from the
    scalar arguments at ``paths`` (and sizes): the call is bound again with those arguments
    static, guarded by their values, and traced again, as ``torch.compile`` specialises a float
    that decides a shape (``guards.ArgumentBinder.specialising``). Not a refusal."""

    def __init__(self, paths: tuple):
        super().__init__(f"the scalar arguments {', '.join(paths)} decide a Python value")
        self.paths = paths


class UnsupportedError(Exception):
    """The compiler refuses a construct; eager NumPy would have run it.

    Attributes:
        construct: short name of what was refused (``"bool() of a traced value"``).
        source: the user's ``file:line`` that made the refused call, or ``None``.
        hint: a suggested rewrite, or ``""``.
        lines: the lines of the traced function's own code running when it was refused (the
            call of a helper that refused, say), outermost first (the statement of a loop's
            body after the loop's), or empty: where a graph break goes.
    """

    def __init__(self, construct: str, source: str | None = None, hint: str = "", detail: str = ""):
        self.construct = construct
        self.source = source
        self.hint = hint
        self.detail = detail
        self.lines: tuple = ()
        super().__init__(self._message())

    def _message(self) -> str:
        text = f"gcompile does not support {self.construct}"
        if self.detail:
            text += f": {self.detail}"
        if self.source:
            text += f"\n  at {self.source}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    @property
    def reason(self) -> str:
        """One line naming the construct and where it was, used to warn once per reason."""
        return f"{self.construct} at {self.source}" if self.source else self.construct


class GcompileWarning(UserWarning):
    """Warnings issued by gcompile (fallbacks to eager mode, recompile storms)."""


def source_text(source: str | None) -> str:
    """The stripped text of the user's line at ``file:line``, or ``""`` (for messages)."""
    if not source:
        return ""
    path, _, line = source.rpartition(":")
    return linecache.getline(path, int(line)).strip() if line.isdigit() else ""


def user_source() -> str | None:
    """``file:line`` of the innermost frame outside gcompile and NumPy (the user's code)."""
    frame, _ = user_frame(sys._getframe(1))
    return None if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def user_frame(frame: types.FrameType | None) -> tuple:
    """From ``frame`` outward: the innermost frame outside gcompile and NumPy (the user's code),
    and the outermost NumPy frame inside it (the NumPy function written in Python it called);
    each None when there is none."""
    numpy = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(NUMPY_DIR):
            numpy = frame
        elif not (filename.startswith(GCOMPILE_DIR) or filename.startswith("<__array")):
            return frame, numpy
        frame = frame.f_back
    return None, numpy


def refusal_from(error: Exception) -> UnsupportedError | None:
    """The refusal for an exception raised while the user's code ran on traced values, when it
    was raised in the user's code or in NumPy called from it (a traced value reached code that
    needs a concrete one: ``out[k] = v`` into an array made outside the trace); None when it was
    raised inside gcompile (ours: not to be dressed up as a refusal)."""
    innermost = None
    frame = error.__traceback__
    while frame is not None:
        filename = frame.tb_frame.f_code.co_filename
        if not filename.startswith(NUMPY_DIR) and filename != _CAPTURE_RUNTIME:
            innermost = frame  # (the capture runtime runs the user's if/while as written)
        frame = frame.tb_next
    if innermost is None or innermost.tb_frame.f_code.co_filename.startswith(GCOMPILE_DIR):
        return None
    source = f"{innermost.tb_frame.f_code.co_filename}:{innermost.tb_lineno}"
    statement = source_text(source) or "a statement"
    return UnsupportedError(
        f"`{statement}` on traced values",
        source,
        hint="a traced value reached Python or NumPy code that needs a concrete value or an "
        "array of the trace (an array made outside the function, a list indexed by a loop "
        "index, a function imported from another module)",
        detail=f"it raised {type(error).__name__}: {error}",
    )
