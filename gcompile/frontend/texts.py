"""Strings formatted from traced values (``f"step {k}: r={r:.3e}"``, ``"{}".format(x)``) for
``print``: formatting a traced value while tracing gives a marker in the string, which a
``print`` turns into a ``callbacks.Text`` formatted with each call's values.

A marker is ``\\x00gc<n>\\x00`` (no text holds one by chance); anywhere but a ``print`` (a
returned string, an exception's message, a log line) it would stand for the value, so those
uses refuse, and so does a trace that made a marker no ``print`` took (at its line).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from ..errors import user_source
from ..ir.callbacks import Field, Text

_MARKER = re.compile("\x00gc([0-9]+)\x00")


class TracedTexts:
    """The tracer's formatted traced values, by marker number."""

    def __init__(self) -> None:
        self.fields: list[tuple[Any, str, str]] = []  # (traced value, format spec, conversion)
        self.made: dict[int, str] = {}  # marker number -> the user's line that made it
        self.printed: set[int] = set()  # the markers a print took

    def marker(self, value: Any, spec: str, conversion: str = "") -> str:
        """The marker standing for ``format(value, spec)`` (``conversion`` "r": for
        ``repr(value)``) in a string made while tracing."""
        self.fields.append((value, spec, conversion))
        self.made[len(self.fields) - 1] = user_source()
        return f"\x00gc{len(self.fields) - 1}\x00"

    def forget_since(self, count: int) -> None:
        """Forget the strings made since ``count`` fields (an exception's message that the
        eager call makes: it needs no ``print``)."""
        self.made = {number: line for number, line in self.made.items() if number < count}

    def unprinted(self) -> str | None:
        """The line of a string formatted from a traced value that no ``print`` took (logged,
        warned, written: its text would be made once, while tracing), or None."""
        lost = sorted(set(self.made) - self.printed)
        return self.made[lost[0]] if lost else None


def holds_marker(text: Any) -> bool:
    """Whether ``text`` is a string formatted from a traced value."""
    return isinstance(text, str) and _MARKER.search(text) is not None


def as_text(texts: TracedTexts, text: str, operand: Callable[[Any], Any]) -> Text:
    """``text`` as a ``Text``, each marker a ``Field`` of the operand ``operand(value)`` gives."""
    pieces: list = []
    at = 0
    for match in _MARKER.finditer(text):
        if match.start() > at:
            pieces.append(text[at : match.start()])
        number = int(match.group(1))
        texts.printed.add(number)
        value, spec, conversion = texts.fields[number]
        meta = getattr(value, "meta", None)
        scalar = meta.dtype if meta is not None and meta.scalar else None
        pieces.append(Field(operand(value), spec, scalar, conversion))
        at = match.end()
    if at < len(text):
        pieces.append(text[at:])
    return Text(tuple(pieces))
