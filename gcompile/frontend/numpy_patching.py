"""NumPy functions that do not dispatch to traced arrays, routed to the active tracer.

Creation functions that take no array (``np.zeros``), conversions NumPy does not dispatch
(``np.asarray``) and random draws (refused: they would be baked into the graph; Python's
``random`` too) are replaced in the ``numpy`` namespace while a function is traced, and so are
the builtin ``print``, ``warnings.warn`` and ``logging.Logger``'s logging methods (``callback``
nodes, run on each call), and where the traced function names them
itself (``from numpy import zeros``: its globals and closure cells), for the tracing thread
only: elsewhere the replacements call NumPy's own.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib.util
import logging
import os
import random
import sys
import threading
import types
import warnings
from typing import Any, Callable

import numpy as np

from ..errors import GCOMPILE_DIR, NUMPY_DIR, UnsupportedError
from ..ir.call_sites import CallSite, log_at, warning_at
from .decompositions import DECOMPOSITIONS, Decomposition
from .list_rows import JOINS, join_rows
from .numpy_calls import CREATION_OPS
from .recorder import ACTIVE, Tracer, current_tracer, holds_traced, user_source
from .symint import SymInt
from .traced_array import TracedArray
from .vectorized import vectorized_call

_CAPTURE_DIR = os.path.join(GCOMPILE_DIR, "capture") + os.sep  # converted loops' runtime


def _library_dirs() -> tuple:
    """The folders of gcompile, NumPy and SciPy (whose library calls, probed while tracing,
    run on NumPy's own functions: ``externs.library_name``), as ``str.startswith`` takes them."""
    spec = importlib.util.find_spec("scipy")
    scipy_dir = os.path.dirname(spec.origin) + os.sep if spec and spec.origin else None
    return tuple(d for d in (GCOMPILE_DIR, NUMPY_DIR, scipy_dir) if d)


_LIBRARY_DIRS = _library_dirs()
_patch_lock = threading.Lock()
_patch_depth = 0

# Random draws at trace time would be baked into the graph as constants and replayed on every
# call, and a seed set once.
# Python's own draws (the module's functions and ``random.Random``'s methods): refused as well
_PYTHON_RANDOM = (
    "random",
    "uniform",
    "randint",
    "randrange",
    "choice",
    "choices",
    "shuffle",
    "sample",
    "gauss",
    "normalvariate",
    "lognormvariate",
    "expovariate",
    "triangular",
    "betavariate",
    "gammavariate",
    "getrandbits",
    "seed",
    "setstate",
)
# the ``logging.Logger`` methods that log (their module-level functions call them)
_LOGGING_METHODS = ("debug", "info", "warning", "error", "critical", "exception", "log")
_RANDOM_SOURCES = {"np.random": "NumPy's global random state", "random": "Python's random module"}
# every function of ``np.random``: NumPy's C code draws them, and would take traced values as
# numbers (``np.random.gamma(k / nu, nu)`` crashed the interpreter); its classes are left alone
_RANDOM_FUNCTIONS = tuple(
    name
    for name in np.random.__all__
    if callable(getattr(np.random, name)) and not isinstance(getattr(np.random, name), type)
)


def _patch_targets() -> list[tuple[Any, str, Callable, Callable]]:
    """(module, attribute, original, replacement) for NumPy functions that do not dispatch to us."""
    targets = []
    targets.append((builtins, "print", print, _effect_patch(print)))
    for func in CREATION_OPS:
        targets.append((np, func.__name__, func, _creation_patch(func)))
    for func, decomposition in DECOMPOSITIONS.items():
        if decomposition.patch:
            module = (
                np if getattr(np, func.__name__, None) is func else sys.modules[func.__module__]
            )
            targets.append((module, func.__name__, func, _conversion_patch(func, decomposition)))
    for name in JOINS:
        func = getattr(np, name)
        targets.append((np, name, func, _joining_patch(func)))
    for name in _RANDOM_FUNCTIONS:
        func = getattr(np.random, name)
        patch = _generator_patch(func) if name == "default_rng" else _random_patch(func)
        targets.append((np.random, name, func, patch))
    targets.append((np, "isscalar", np.isscalar, _isscalar_patch(np.isscalar)))
    targets.append((np, "errstate", np.errstate, _errstate_patch(np.errstate)))
    targets.append((warnings, "warn", warnings.warn, _warning_patch(warnings.warn)))
    for name in _LOGGING_METHODS:
        method = getattr(logging.Logger, name)
        targets.append((logging.Logger, name, method, _method_effect_patch(method)))
    for owner in (random, random.Random):
        for name in _PYTHON_RANDOM:
            func = getattr(owner, name)
            targets.append((owner, name, func, _random_patch(func, "random")))
    for name in ("mgrid", "ogrid"):
        grid = getattr(np, name)
        targets.append((np, name, grid, _TracedGrid(grid)))
    call = np.vectorize.__call__
    targets.append((np.vectorize, "__call__", call, _vectorize_patch(call)))
    for module, name, func, _ in targets:
        assert getattr(module, name) is func, (
            f"{module.__name__}.{name} is not the function we patch"
        )
    return targets


def _called_by_library() -> bool:
    """True when a patched function is called from NumPy, SciPy or gcompile itself, which need
    the original."""
    frame = sys._getframe(2)
    while frame.f_code.co_filename.startswith(_CAPTURE_DIR):  # a call routed for the user
        frame = frame.f_back
    return frame.f_code.co_filename.startswith(_LIBRARY_DIRS)


def _creation_patch(func: Callable) -> Callable:
    @functools.wraps(func)
    def patched(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or kwargs.get("like") is not None or _called_by_library():
            return func(*args, **kwargs)
        return tracer.numpy.creation(func, args, kwargs)

    return patched


def _vectorize_patch(call: Callable) -> Callable:
    """``np.vectorize(f)(*arrays)`` while tracing: a loop of ``f`` over the elements when given
    traced arrays (``vectorized``); else NumPy's."""

    @functools.wraps(call)
    def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            return call(self, *args, **kwargs)
        result = vectorized_call(tracer.loops, self, args, kwargs)
        return call(self, *args, **kwargs) if result is NotImplemented else result

    return patched


def _effect_patch(func: Callable) -> Callable:
    """``print`` while tracing: a ``callback`` node, so that each call prints its own values
    (run at trace time, it would print traced values, once)."""

    @functools.wraps(func)
    def patched(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            return func(*args, **kwargs)
        return tracer.callback(func, args, kwargs)

    return patched


def _warning_patch(warn: Callable) -> Callable:
    """``warnings.warn`` while tracing: a ``callback`` node warning at the user's line on each
    call (``call_sites``), whichever branch the data take; elsewhere ``warnings.warn`` itself,
    its ``stacklevel`` counted from its caller (this patch's frame is not the warning's place)."""

    @functools.wraps(warn)
    def patched(message: Any, category: Any = None, stacklevel: int = 1, *args: Any, **kw: Any):
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            return warn(message, category, stacklevel + 1, *args, **kw)
        call = (message, category, stacklevel, *args)
        return tracer.callback(warning_at(_call_site()), call, kw)

    return patched


def _method_effect_patch(method: Callable) -> Callable:
    """A ``logging.Logger`` method while tracing: a ``callback`` node logging at the user's
    line on each call (``call_sites``); elsewhere the method, its ``stacklevel`` counted from
    its caller."""

    @functools.wraps(method)
    def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            stacklevel = kwargs.pop("stacklevel", 1) + 1
            return method(self, *args, stacklevel=stacklevel, **kwargs)
        return tracer.callback(log_at(_call_site(), self, method.__name__), args, kwargs)

    return patched


def _call_site() -> CallSite:
    """The user's line that called the patched function (past gcompile's frames, which route
    the user's method calls, and logging's own: ``logging.info`` calls the root logger's), in
    the function the user wrote (not a converted loop body or branch)."""
    frame = sys._getframe(2)
    while frame.f_back is not None and (
        frame.f_code.co_filename == logging._srcfile
        or frame.f_code.co_filename.startswith(GCOMPILE_DIR)
    ):
        frame = frame.f_back
    named = frame
    while named is not None and (
        named.f_code.co_name.startswith(("__gc_", "_loop_body"))
        or named.f_code.co_filename.startswith(GCOMPILE_DIR)
    ):
        named = named.f_back
    function = (named or frame).f_code.co_name
    return CallSite(frame.f_code.co_filename, frame.f_lineno, function, frame.f_globals)


_ARRAY_MAKERS = (np.array, np.asarray)  # (NumPy's own: the names are patched while tracing)


def _conversion_patch(func: Callable, decomposition: Decomposition) -> Callable:
    @functools.wraps(func)
    def patched(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            return func(*args, **kwargs)
        first = args[0] if args else next(iter(kwargs.values()), None)
        sized = decomposition.size_first and isinstance(first, (int, np.integer, SymInt))
        if isinstance(first, TracedArray) or sized:
            return tracer.numpy.decompose(func, decomposition, args, kwargs)
        if isinstance(first, (list, tuple)) and holds_traced(first):
            array = tracer.sequence_as_array(first)
            if args:
                args = (array, *args[1:])
            else:
                kwargs = {**kwargs, next(iter(kwargs)): array}
            return tracer.numpy.decompose(func, decomposition, args, kwargs)
        made = func(*args, **kwargs)
        if func in _ARRAY_MAKERS and isinstance(first, (list, tuple)):
            return tracer.literal_array(made)
        return made

    return patched


def _joining_patch(func: Callable) -> Callable:
    """``np.stack`` and its kin given a list a rolled loop appended rows to (``list_rows``),
    which their dispatch would iterate; NumPy's own for anything else."""

    @functools.wraps(func)
    def patched(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        first = args[0] if args else kwargs.get("arrays", kwargs.get("tup"))
        if tracer is None or not getattr(first, "has_rows", False) or _called_by_library():
            return func(*args, **kwargs)
        kwargs = {k: v for k, v in kwargs.items() if k not in ("arrays", "tup")}
        return join_rows(func, first, tracer, args[1:], kwargs)

    return patched


def _random_patch(func: Callable, module: str = "np.random") -> Callable:
    """A draw from NumPy's global state (or Python's ``random``) while tracing: refused."""
    return _refusing_patch(
        func,
        f"{_RANDOM_SOURCES[module]} used inside the function ({module}.{func.__name__})",
        "draws (and seeding) would be frozen into the compiled graph: the statement runs in "
        "Python on every call (a graph break); or draw outside and pass the arrays in",
    )


def _generator_patch(default_rng: Callable) -> Callable:
    """``np.random.default_rng`` while tracing: a generator made inside the function, refused."""
    return _refusing_patch(
        default_rng,
        "a random number generator made inside the function (np.random.default_rng)",
        "its draws would be frozen into the compiled graph: the statement runs in Python on "
        "every call (a graph break), and so do the draws from it; or make it outside and pass "
        "it in",
    )


def _refusing_patch(func: Callable, construct: str, hint: str) -> Callable:
    """``func`` refused at the user's line while tracing (``construct``, ``hint``); itself for
    the libraries' own calls and outside a trace."""

    @functools.wraps(func)
    def patched(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            return func(*args, **kwargs)
        tracer.refuse(construct, hint=hint)

    return patched


def _errstate_patch(errstate: type) -> Callable:
    """``np.errstate`` while tracing: one that makes floating-point errors raise (or call a
    function) is refused at the user's line: the compiled code does not raise them, so a
    ``FloatingPointError`` eager mode raises (or a ``try`` catches) would be lost."""

    def patched(**kwargs: Any) -> Any:
        tracer = current_tracer()
        raising = any(kwargs.get(key) in ("raise", "call") for key in kwargs)
        if tracer is not None and raising and not _called_by_library():
            tracer.refuse(
                "np.errstate(...='raise') inside the function",
                hint="the compiled code does not raise floating-point errors: the statement "
                "runs in Python (a graph break); check the values instead (np.isfinite)",
            )
        return errstate(**kwargs)

    return patched


def _isscalar_patch(func: Callable) -> Callable:
    """``np.isscalar`` while tracing: a traced Python or NumPy scalar is one (a 0-d array is
    not), as eager mode answers for the value it stands for."""

    @functools.wraps(func)
    def patched(element: Any) -> bool:
        if isinstance(element, TracedArray):
            return element.meta.scalar
        return func(element)

    return patched


class _TracedGrid:
    """``np.mgrid``/``np.ogrid`` while tracing: the grid NumPy makes, as constants of the trace
    (arrays the function may index by its data or reshape, as any array it made)."""

    def __init__(self, grid: Any):
        self._grid = grid

    def __getitem__(self, key: Any) -> Any:
        made = self._grid[key]
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            return made
        if isinstance(made, (list, tuple)):  # (ogrid's arrays)
            return type(made)(tracer.made_constant(array) for array in made)
        return tracer.made_constant(made)


_PATCHES: list[tuple[Any, str, Callable, Callable]] | None = None
_REPLACEMENT_OF: dict[int, Callable] = {}  # id of a patched NumPy function -> its replacement


# (id of a globals dict or closure cell, name) -> [its holder, the original, how many patch it]
_NAMESPACE_PATCHES: dict[tuple[int, str], list] = {}


@contextlib.contextmanager
def tracing(tracer: Tracer, fn: Callable | None = None):
    """Make ``tracer`` active in this thread and route undispatched NumPy functions to it: in
    NumPy's namespace, and where ``fn`` (the traced function) names them itself, in its globals
    and closure cells (``from numpy import zeros``)."""
    global _patch_depth, _PATCHES
    if current_tracer() is not None:
        raise UnsupportedError(
            "tracing a compiled function while another is being traced (nested compile)",
            user_source(),
        )
    with _patch_lock:
        if _PATCHES is None:
            _PATCHES = _patch_targets()
            _REPLACEMENT_OF.update((id(old), new) for _, _, old, new in _PATCHES)
        if _patch_depth == 0:
            for module, name, _, replacement in _PATCHES:
                setattr(module, name, replacement)
        _patch_depth += 1
        keys = _patch_names(fn) if fn is not None else []
    ACTIVE.tracer = tracer
    try:
        yield tracer
    finally:
        ACTIVE.tracer = None
        with _patch_lock:
            _patch_depth -= 1
            if _patch_depth == 0:
                for module, name, original, _ in _PATCHES:
                    setattr(module, name, original)
            _unpatch_names(keys)


def _names_of(fn: Callable):
    """``(holder, name, value)`` for ``fn``'s globals and closure cells, and the attributes of
    the SciPy modules among its globals (``fftpack.fftfreq`` is NumPy's ``fftfreq``)."""
    namespace = getattr(fn, "__globals__", None) or {}
    for name, value in list(namespace.items()):
        yield namespace, name, value
    for module in list(namespace.values()):
        if isinstance(module, types.ModuleType) and module.__name__.startswith("scipy."):
            for name, value in list(vars(module).items()):
                yield module, name, value
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            yield cell, "cell_contents", cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _assign(holder: Any, name: str, value: Any) -> None:
    if isinstance(holder, dict):
        holder[name] = value
    else:
        setattr(holder, name, value)


def _patch_names(fn: Callable) -> list:
    """Bind the names of ``fn`` that hold a patched NumPy function to its replacement (counted,
    so that concurrent traces of one module restore it once); the keys patched."""
    keys = []
    for holder, name, value in _names_of(fn):
        key = (id(holder), name)
        if key in _NAMESPACE_PATCHES:
            _NAMESPACE_PATCHES[key][2] += 1
        elif id(value) in _REPLACEMENT_OF:
            _assign(holder, name, _REPLACEMENT_OF[id(value)])
            _NAMESPACE_PATCHES[key] = [holder, value, 1]
        else:
            continue
        keys.append(key)
    return keys


def _unpatch_names(keys: list) -> None:
    for key in keys:
        entry = _NAMESPACE_PATCHES[key]
        entry[2] -= 1
        if entry[2] == 0:
            _assign(entry[0], key[1], entry[1])
            del _NAMESPACE_PATCHES[key]
