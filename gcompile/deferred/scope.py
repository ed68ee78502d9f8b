"""``gcompile.lazy``: a lazy value, or a block whose lazy values are computed when it ends."""

from __future__ import annotations

from typing import Any

from .array import LazyArray
from .record import SESSION


class LazyBlock:
    """``with gcompile.lazy() as lazy: y = lazy(x) * 2 ...``: ``lazy(x)`` makes lazy values,
    and every value still pending when the block ends is computed then."""

    def __call__(self, value: Any) -> LazyArray:
        """``value`` (an array) as a lazy value."""
        return lazy(value)

    def __enter__(self) -> "LazyBlock":
        return self

    def __exit__(self, *exc: Any) -> None:
        SESSION.flush(strict=exc[0] is None)


def lazy(value: Any = None) -> LazyArray | LazyBlock:
    """``value`` (an array; a lazy value is returned as it is) as a lazy value whose NumPy
    operations are recorded and compiled together when a result is needed; without a value,
    a ``with`` block computing its values when it ends. See ``gcompile.deferred.array``."""
    if value is None:
        return LazyBlock()
    if isinstance(value, LazyArray):
        return value
    return LazyArray(value)
