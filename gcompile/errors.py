"""Exceptions and warnings shared by every layer of gcompile.

This module imports nothing from gcompile, so the IR, the tracer, the passes and
the backends may all raise these.
"""

from __future__ import annotations

import linecache


class UnsupportedError(Exception):
    """The compiler refuses a construct; eager NumPy would have run it.

    Attributes:
        construct: short name of what was refused (``"bool() of a traced value"``).
        source: the user's ``file:line`` that made the refused call, or ``None``.
        hint: a suggested rewrite, or ``""``.
    """

    def __init__(self, construct: str, source: str | None = None, hint: str = "", detail: str = ""):
        self.construct = construct
        self.source = source
        self.hint = hint
        self.detail = detail
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
