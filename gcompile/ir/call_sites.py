"""Warnings and log records a compiled function makes on each call (``callback`` nodes) placed
where the user's call stood: at run time that line has no frame of its own (the compiled code
runs instead), so the warning's location, the log record's file, line and function are the
ones recorded while tracing (``CallSite``), as eager mode's would be.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable

_GCOMPILE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "exception": logging.ERROR,
}


@dataclass(frozen=True, eq=False)
class CallSite:
    """The user's line that called ``warnings.warn`` or a logger while tracing."""

    filename: str
    lineno: int
    function: str  # the user's function (not a loop body's or branch's generated one)
    module_globals: dict


def warning_at(site: CallSite) -> Callable:
    """``warnings.warn`` as called at ``site``; a ``stacklevel`` above 1 names the frames
    outside gcompile that called the compiled function, as eager's names its callers."""

    def warn(message: Any, category: Any = None, stacklevel: int = 1, source: Any = None) -> None:
        if isinstance(message, Warning):
            category = type(message)
        filename, lineno, module_globals = site.filename, site.lineno, site.module_globals
        if stacklevel > 1:
            frame = _caller(stacklevel - 1)
            if frame is not None:
                filename, lineno = frame.f_code.co_filename, frame.f_lineno
                module_globals = frame.f_globals
        registry = module_globals.setdefault("__warningregistry__", {})
        module = module_globals.get("__name__", "<string>")
        warnings.warn_explicit(
            message, category or UserWarning, filename, lineno, module, registry, module_globals,
            source,
        )  # fmt: skip

    return warn


def log_at(site: CallSite, logger: logging.Logger, method: str) -> Callable:
    """``logger.<method>(...)`` as called at ``site``: the record made by the logger itself,
    with the site's file, line and function."""

    def log(*args: Any, **kwargs: Any) -> None:
        level = args[0] if method == "log" else _LEVELS[method]
        message, *rest = args[1:] if method == "log" else args
        if not logger.isEnabledFor(level):
            return
        exc_info = kwargs.get("exc_info", True if method == "exception" else None)
        if isinstance(exc_info, BaseException):
            exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
        elif exc_info and not isinstance(exc_info, tuple):
            exc_info = sys.exc_info()
        record = logger.makeRecord(
            logger.name, level, site.filename, site.lineno, message, tuple(rest),
            exc_info or None, site.function, kwargs.get("extra"),
        )  # fmt: skip
        logger.handle(record)

    log.__name__ = method
    return log


def _caller(level: int):
    """The ``level``-th frame outward that is not gcompile's (1: the compiled function's
    caller), or None."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_GCOMPILE) or name.startswith("<gcompile")):
            level -= 1
            if level == 0:
                return frame
        frame = frame.f_back
    return None
