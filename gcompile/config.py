"""Options and environment variables, read in one place.

| variable                | meaning                                              | default |
|-------------------------|------------------------------------------------------|---------|
| ``GCOMPILE_DISABLE``    | ``1`` runs every compiled function eagerly           | ``0``   |
| ``GCOMPILE_VERIFY``     | ``1`` verifies every graph the compiler builds (after tracing and each pass pipeline); ``each``: after every pass that changed it, its metas checked too | ``0``   |
| ``GCOMPILE_CACHE_LIMIT``| cache entries per function before a recompile warning| ``8``   |
| ``GCOMPILE_DEBUG_DIR``  | folder receiving the graph text after every pass     | unset   |
| ``GCOMPILE_CACHE_DIR``  | where generated kernels and Numba's machine code live | the user's cache directory |
| ``GCOMPILE_LOG``        | comma list of components to log: ``graph``, ``passes``, ``fusion``, ``code``, ``guards``, ``recompiles``, ``perf`` (or ``all``) | unset |
| ``GCOMPILE_PARALLEL_THRESHOLD`` | elements from which a kernel's outer loop runs in parallel (measured by ``bench/threshold.py``) | ``131072`` |
| ``GCOMPILE_BLAS_THREADS`` | threads of SciPy's OpenBLAS, set when a loop program first calls BLAS (``backends/numba/blas.threads``) | ``1`` |

The environment is read when a value is asked for, so tests can change it with
``monkeypatch.setenv``; ``config.set(name, value)`` overrides it in-process.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, Callable

# ``config.set``'s values; ``fast_entry`` reads it on every call (never write it elsewhere)
OVERRIDES: dict[str, Any] = {}
_WATCHERS: list = []  # called after each ``set``: ``watch``


# os.environ's own mapping (encoded keys and values, updated by os.environ[...] = ...): read
# directly, a flag costs 0.03 us instead of 0.6 us, and ``disable`` is read on every call
_RAW = getattr(os.environ, "_data", None)
_FLAGS = ("GCOMPILE_DISABLE", "GCOMPILE_VERIFY")
_ENCODED = {name: os.environ.encodekey(name) for name in _FLAGS} if _RAW is not None else {}


def _flag(env: str) -> bool:
    if _RAW is not None:
        raw = _RAW.get(_ENCODED[env])
        if raw is None:
            return False
        raw = os.environ.decodevalue(raw)
    else:
        raw = os.environ.get(env)
    return bool(raw) and raw.strip().lower() in ("1", "true", "yes", "on")


def _verify_mode() -> str | bool:
    """``GCOMPILE_VERIFY``: False, ``"stage"`` (a true flag) or ``"each"``."""
    raw = os.environ.get("GCOMPILE_VERIFY", "").strip().lower()
    return "each" if raw == "each" else "stage" if _flag("GCOMPILE_VERIFY") else False


def _int(env: str, default: int) -> int:
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{env} must be an integer, got {raw!r}") from None


LOG_COMPONENTS = ("graph", "passes", "fusion", "code", "guards", "recompiles", "perf")


def _log_components() -> frozenset:
    raw = os.environ.get("GCOMPILE_LOG", "")
    names = {part.strip() for part in raw.split(",") if part.strip()}
    if "all" in names:
        return frozenset(LOG_COMPONENTS)
    unknown = names - frozenset(LOG_COMPONENTS)
    if unknown:
        raise ValueError(
            f"GCOMPILE_LOG: unknown components {sorted(unknown)}; known: {', '.join(LOG_COMPONENTS)}, all"
        )
    return frozenset(names)


_READERS = {
    "disable": lambda: _flag("GCOMPILE_DISABLE"),
    "verify": _verify_mode,
    "cache_size_limit": lambda: _int("GCOMPILE_CACHE_LIMIT", 8),
    "debug_dir": lambda: os.environ.get("GCOMPILE_DEBUG_DIR") or None,
    "cache_dir": lambda: os.environ.get("GCOMPILE_CACHE_DIR") or _user_cache_dir(),
    "parallel_threshold": lambda: _int("GCOMPILE_PARALLEL_THRESHOLD", 131072),
    "blas_threads": lambda: _int("GCOMPILE_BLAS_THREADS", 1),
    "log": _log_components,
}


def logger(component: str) -> logging.Logger | None:
    """The ``gcompile.<component>`` logger when ``GCOMPILE_LOG`` enables the component, else None.

    Messages go through the standard ``logging`` module; if the application configured no
    handler for the ``gcompile`` logger, one writing to stderr is added the first time.
    """
    if component not in get("log"):
        return None
    root = logging.getLogger("gcompile")
    if not root.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
        root.addHandler(handler)
    if root.level == logging.NOTSET:  # a level the application chose stays
        root.setLevel(logging.INFO)
    return root.getChild(component)


def log(component: str, message: Callable[[], str]) -> None:
    """Log ``message()`` under ``gcompile.<component>``; the text is built only when enabled."""
    found = logger(component)
    if found is not None:
        found.info("%s", message())


def _user_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gcompile")


def get(name: str) -> Any:
    """Return the current value of option ``name`` (override, else environment, else default)."""
    if name in OVERRIDES:
        return OVERRIDES[name]
    try:
        return _READERS[name]()
    except KeyError:
        raise KeyError(f"unknown gcompile option {name!r}; known: {sorted(_READERS)}") from None


def set(name: str, value: Any) -> None:  # noqa: A001 - mirrors get()
    """Override option ``name`` for this process; ``None`` removes the override."""
    if name not in _READERS:
        raise KeyError(f"unknown gcompile option {name!r}; known: {sorted(_READERS)}")
    if value is None:
        OVERRIDES.pop(name, None)
    else:
        OVERRIDES[name] = value
    for watcher in list(_WATCHERS):
        watcher(name)


def watch(watcher: Callable[[str], None]) -> None:
    """Call ``watcher(name)`` after each ``set`` (code that caches what an option decides, such
    as the fast entries that skip the ``disable`` check, forgets it there)."""
    _WATCHERS.append(watcher)
