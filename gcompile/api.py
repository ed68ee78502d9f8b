"""CompiledFunction: the object ``@gcompile.compile`` returns.

On a call it binds and flattens the arguments, looks the guard key up in its
cache (each entry also checks the sizes it assumed, ``guards.size_check``), and on
a miss traces the function, runs the pass pipeline and hands the graph to the
backend. A refusal (``UnsupportedError``) runs the function
eagerly and warns once per reason, or raises with ``fullgraph=True``; the
refusal is cached with the key, so later calls with the same guards go straight
to eager mode.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import backends, config, fast_entry, floating_errors, frontend
from .capture.breaks import Split
from .dask import DaskCalls, has_dask
from .entries import MAX_GRAPH_NODES, UNBUILT, CacheEntry, build, graph_name, overlapping_write
from .errors import GcompileWarning, ScalarsDecide, UnsupportedError
from .exact_calls import ExactCalls
from .fallbacks import Fallbacks
from .graph_breaks import GraphBreaks, Trips
from .guards import (
    ArgumentBinder,
    BoundCall,
    changed_ints,
    guard_changes,
)
from .interop import results as interop_results
from .ir.graph import Graph
from .ir.ops import RerunEagerly
from .ir.pytree import flatten, unflatten
from .passes import manager


@dataclass
class Recompile:
    """A call that missed the cache: the closest existing entry and the guards that differ."""

    function: str
    changes: list
    closest: int  # index into ``fn.entries`` of the entry whose guards differ least
    where: str  # the function's file:line
    hint: str = ""
    int_paths: set = field(default_factory=set)  # int arguments only their value changed

    def __str__(self) -> str:
        text = f"recompiling {self.function} ({self.where}): " + "; ".join(self.changes)
        text += f" (closest: entry {self.closest})"
        return text + (f"\n  hint: {self.hint}" if self.hint else "")


class CompiledFunction:
    """A NumPy function that runs compiled code for the argument structures it has seen.

    Attributes:
        eager: the original function.
        stats: counters (``calls``, ``traces``, ``cache_hits``, ``fallbacks``, ``cache_entries``).
        refusals: every ``UnsupportedError`` that made a call run eagerly.
    """

    def __init__(
        self,
        fn: Callable,
        *,
        backend: str = "numba",
        fullgraph: bool = False,
        static_argnames: tuple | list | str = (),
        options: dict | None = None,
        depth: int = 0,
        seat: Any = None,
        every_trip: bool = True,
    ):
        if not callable(fn):
            raise TypeError(f"gcompile.compile expects a function, got {type(fn).__name__}")
        backends.get(backend)  # unknown backend names fail here, not on the first call
        self.eager = fn
        self.backend = backend
        self.fullgraph = fullgraph
        self._binder = ArgumentBinder(fn, static_argnames)
        self.static_argnames = tuple(sorted(self._binder.static_argnames))
        self.options = dict(options or {})
        self._cache: dict[tuple, list[CacheEntry]] = {}  # guard key -> entries, oldest first
        self._exact = ExactCalls(
            len(self._binder.signature.parameters)
            if self._binder.simple_positional and not self.static_argnames
            else -1,
            self._binder,
        )
        self._lock = threading.Lock()
        self._stats = {"calls": 0, "traces": 0, "cache_hits": 0, "fallbacks": 0, "graph_breaks": 0}
        self._fast: fast_entry.FastEntry | None = None  # the fast entry calls go to first
        self.refusals: list[UnsupportedError] = []
        self.dask = DaskCalls(self)  # the plans of calls with dask arrays
        self.recompiles: list[Recompile] = []  # one record per cache miss after the first compile
        # A region of a graph break: judged where the driver calls it (``graph_breaks.Trips``)
        self.trips = Trips(seat, fn, every_trip) if seat is not None else None
        self.breaks = GraphBreaks(fn, self._region, depth)
        self.fallbacks = Fallbacks(
            graph_name(fn), fn, fullgraph, self.breaks, self._stats, self.refusals
        )
        functools.update_wrapper(self, fn)

    def _region(
        self,
        function: Callable,
        seat: Any,
        per_trip: bool,
        through: bool = False,
        indices: frozenset = frozenset(),
    ) -> "CompiledFunction":
        """A compiled region of a graph break, judged in its ``seat`` (``graph_breaks.Trips``:
        on its trial call when it runs on every trip, a loop body's or any of a region that
        does, else on its first); one that only passes its arguments on (``through``) is
        Python's from the start. The ints it takes that change on every trip (the ``indices``
        of the loops Python runs around it, this function's included) are traced as values:
        one trace serves every trip, where sizes specialise 0 and 1."""
        every_trip = per_trip or (self.trips is not None and self.trips.every_trip)
        region = CompiledFunction(
            function,
            backend=self.backend,
            options=self.options,
            depth=self.breaks.depth + 1,
            seat=seat,
            every_trip=every_trip,
        )
        if through and region.trips is not None:  # (its seat holds its Python code)
            region.trips.demoted = "it only returns the values it is given"
        names = set(region._binder.signature.parameters)
        region._binder.trace_as_values((indices | self._binder.value_ints) & names)
        return region

    # -- calling ----------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The general path (a call the fast entry, ``fast_entry``, did not take)."""
        self._stats["calls"] += 1
        found = self._exact.find(args, kwargs)
        if found is not None and not config.get("disable") and frontend.current_tracer() is None:
            entry, inputs = found
            self._stats["cache_hits"] += 1
            self._use_fast_entry(entry)
            return self._run(entry, inputs, args, kwargs)
        if config.get("disable") or frontend.current_tracer() is not None:
            # Disabled, or called from a function being traced: run the Python code, so an
            # enclosing trace records these operations inline.
            return self.eager(*args, **kwargs)
        if has_dask(args, kwargs):
            return self.dask.call(args, kwargs)
        try:
            bound = self._binder.bind(args, kwargs)
        except TypeError:
            # A wrong arity: let the eager function raise exactly its own TypeError.
            return self.eager(*args, **kwargs)
        except UnsupportedError as error:
            return self._refused(error, args, kwargs)
        entry = self._find(bound)
        if entry is None:
            entry, bound = self._compile(bound)
        else:
            self._stats["cache_hits"] += 1
        if entry.fast is UNBUILT:
            general = functools.partial(CompiledFunction.__call__, self)
            entry.fast = fast_entry.build(entry, bound, self._binder, general, self.eager)
        self._use_fast_entry(entry)
        self._exact.remember(args, kwargs, entry, bound.is_input)
        if not bound.foreign:
            return self._run(entry, bound.inputs(), args, kwargs)
        # Other libraries' arrays: a call that runs eagerly sees the NumPy arrays over their
        # memory, as the compiled one does; array results go back as the caller's kind.
        args, kwargs = bound.rebuild([value for _, value in bound.leaves])
        leaves, spec = flatten(self._run(entry, bound.inputs(), args, kwargs))
        return unflatten(spec, [v for _, v in leaves], entry.results or (lambda value: value))

    def _use_fast_entry(self, entry: CacheEntry) -> None:
        """Make ``entry``'s fast entry (if it has one) what calling this object calls first.

        ``obj(...)`` looks ``__call__`` up on the type, never on the instance, so the object
        gets a class of its own (once) whose ``__call__`` is the fast entry's function: the
        Python call of a method forwarding to it would cost 0.05 us of the 0.6 us a call takes.
        """
        fast = entry.fast
        if fast is None or fast is UNBUILT or fast is self._fast:
            return
        if self.trips is not None and self.trips.demoted is None:
            return  # (a region run on every trip: counted on the general path until judged)
        if type(self) is CompiledFunction:
            self.__class__ = type(CompiledFunction.__name__, (CompiledFunction,), {"__slots__": ()})
        type(self).__call__ = staticmethod(fast.function)
        self._fast = fast
        _WITH_FAST_ENTRIES.add(self)

    def _drop_fast_entry(self) -> None:
        """Send calls to the general path again (until a call there installs one anew)."""
        if self._fast is not None:
            type(self).__call__ = CompiledFunction.__call__
            self._fast = None

    def _run(self, entry: CacheEntry, inputs: list, args: tuple, kwargs: dict) -> Any:
        acting = floating_errors.acting_errors()
        if acting is not None:
            return self.fallbacks.floating_errors(acting, args, kwargs)
        if self.trips is not None:
            self.trips.count(entry, inputs)
        if entry.failure is not None:
            if self.trips is not None and self.trips.demoted is None:
                self.trips.demote(f"its compile failed: {type(entry.failure).__name__}", now=True)
            return self.fallbacks.failed(entry.failure, args, kwargs)
        if entry.refusal is not None:
            return self._refused(entry.refusal, args, kwargs)
        if entry.python is not None:
            return self.eager(*args, **kwargs)
        if entry.written:
            overlap = overlapping_write(entry, inputs)
            if overlap is not None:
                return self.fallbacks.refused(overlap, args, kwargs)
        try:
            outputs = entry.run(inputs)
        except UnsupportedError as refusal:  # found while running, before any write-back
            return self.fallbacks.refused(refusal, args, kwargs)
        except RerunEagerly:  # (the user's raise of an exception made from the data)
            return self.eager(*args, **kwargs)
        except entry.graph.reruns_on:  # (caught by a ``try`` whose handlers raise)
            return self.eager(*args, **kwargs)
        spec = entry.graph.out_spec
        return outputs[0] if spec.kind == "leaf" else unflatten(spec, outputs)

    def _refused(self, error: UnsupportedError, args: tuple, kwargs: dict) -> Any:
        """A refused call, run by the fallbacks; a region run on every trip puts in its seat
        what runs it then, the driver around its own graph break or its Python function (its
        arguments refused, an object; a statement that is all of it): later trips pay no
        binding and no refusal."""
        if self.trips is not None and self.trips.demoted is None:
            split = self.breaks.split(error)
            if isinstance(split, Split):
                reason = f"its break at line {split.statement[0]}: the driver calls its regions"
                self.trips.demote(reason, split.driver, now=True)
            else:
                self.trips.demote(f"it is refused: {error.construct}", now=True)
        return self.fallbacks.refused(error, args, kwargs)

    def prepare(self, *args: Any, **kwargs: Any) -> tuple[CacheEntry, BoundCall]:
        """The cache entry a call with these arguments would run (traced and compiled now if
        there is none), and the bound call, without running it. Raises ``UnsupportedError``
        for arguments the compiler does not take."""
        bound = self._binder.bind(args, kwargs)
        entry = self._find(bound)
        if entry is None:
            entry, bound = self._compile(bound)
        return entry, bound

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """Decorating a method: bind ``self`` like a plain function would."""
        if instance is None:
            return self
        return functools.partial(self, instance)

    def _find(self, bound: BoundCall) -> CacheEntry | None:
        """The first entry of the call's guard key whose size check the call passes."""
        inputs = bound.inputs()
        for entry in self._cache.get(bound.key, ()):
            if entry.holds(inputs):
                return entry
        return None

    def _compile(self, bound: BoundCall) -> tuple[CacheEntry, BoundCall]:
        """The entry for ``bound``, traced and compiled unless another thread just made it,
        and the call bound again when its int arguments became size symbols, or scalar
        arguments static (a trace found them deciding a Python value: ``ScalarsDecide``)."""
        (entry, bound), _ = self._binder.specialising(bound, self._compile_once)
        return entry, bound

    def _compile_once(self, bound: BoundCall) -> tuple[CacheEntry, BoundCall]:
        with self._lock:
            entry = self._find(bound)
            if entry is not None:
                return entry, bound
            past = self._past_the_limit(bound)
            if past is not None:
                return past, bound
            recompile = _recompile(self, bound) if self._cache else None
            if recompile is not None and self._make_ints_symbolic(recompile, bound):
                bound = self._binder.bind(*bound.call())
                entry = self._find(bound)
                if entry is not None:
                    return entry, bound
            entry = CacheEntry(
                bound.key,
                fast=UNBUILT,
                paths=[path for path, _ in bound.leaves],
                order=len(self.entries),
                results=interop_results.converter(bound.array_type),
            )
            dump = _dump_folder(self)
            try:
                region = self.breaks.depth > 0
                build(
                    entry, bound, self.eager, self.backend, self.options, self._stats, dump, region
                )
            except ScalarsDecide:
                raise
            except Exception as error:
                if self._binder.value_ints:  # (maybe refused for them: traced as ints, again)
                    raise ScalarsDecide(tuple(self._binder.value_ints)) from error
                if self.fullgraph:
                    raise
                if isinstance(error, UnsupportedError):
                    entry.refusal = error
                else:
                    entry.failure = error
            finally:
                if dump is not None:
                    _write_dump(self, dump, entry, bound)
            self._cache.setdefault(bound.key, []).append(entry)
            config.log("guards", lambda: "\n".join(entry.guards()))
            if recompile is not None:
                self.recompiles.append(recompile)
                config.log("recompiles", lambda: str(recompile))
            return entry, bound

    def _past_the_limit(self, bound: BoundCall) -> CacheEntry | None:
        """Once ``cache_size_limit`` argument structures were traced (compiled or refused: a
        refused trace costs its time too), the one entry running calls of new structures
        eagerly, without a trace, warned once; None before. Else a storm of new structures
        (a list argument that changes every call) would trace on every call."""
        entries = self.entries
        past = [e for e in entries if isinstance(e.refusal, _PastTheLimit)]
        if past:
            return past[0]
        limit = self.options.get("cache_size_limit")
        limit = config.get("cache_size_limit") if limit is None else limit
        if len(entries) < limit:
            return None
        entry = CacheEntry(bound.key, fast=UNBUILT, order=len(entries))
        entry.refusal = _PastTheLimit(limit)
        self._cache.setdefault(bound.key, []).append(entry)
        if self.trips is not None:  # (a region run on every trip: Python's from now on)
            self.trips.demote(f"its arguments took more than {limit} structures")
        return entry

    def _make_ints_symbolic(self, recompile: "Recompile", bound: BoundCall) -> bool:
        """On a miss that only a new value of Python int arguments causes (not in
        ``static_argnames``; sizes symbolic), trace those ints as size symbols from now on
        (``guards.dynamic_ints``), as ``torch.compile`` marks a changing size dynamic; in a
        region run on every trip of a loop, as values (a counter a ``while`` loop carries)."""
        if not self.options.get("dynamic", True) or not recompile.int_paths:
            return False
        binder, named = self._binder, ", ".join(sorted(recompile.int_paths))
        if self.trips is not None:  # (a region run on every trip: an int new on each is a value)
            binder.trace_as_values(binder.value_ints | recompile.int_paths)
            recompile.hint = f"{named}: traced as a value from now on"
            return True
        binder.trace_as_sizes(binder.dynamic_ints | recompile.int_paths)
        recompile.hint = f"{named}: traced as a size from now on"
        return True

    # -- inspection ---------------------------------------------------------------------------------
    @property
    def stats(self) -> dict:
        """A snapshot of the counters.

        ``fallbacks`` counts calls run eagerly, whole; ``graph_breaks`` calls run as compiled
        regions around a statement run in Python (each region's own counters in
        ``breaks.splits``); ``kernel_compiles`` counts the Numba compiles this function caused (kernels found in
        memory, compiled for another function or an earlier size, cost none); ``disk_cache_hits``
        counts kernels whose machine code was loaded from the disk cache instead.
        """
        programs = [p for p in (getattr(e.run, "program", None) for e in self.entries) if p]
        fast = sum(e.fast.calls for e in self.entries if isinstance(e.fast, fast_entry.FastEntry))
        return {
            **self._stats,
            "calls": self._stats["calls"] + fast,
            "cache_hits": self._stats["cache_hits"] + fast,
            "cache_entries": len(self.entries),
            "kernel_compiles": sum(p.kernel_compiles for p in programs),
            "disk_cache_hits": sum(p.disk_cache_hits for p in programs),
        }

    @property
    def code(self) -> str:
        """The generated code of the most recent compiled entry (host function and kernels)."""
        for entry in reversed(self.entries):
            program = getattr(entry.run, "program", None)
            if program is not None:
                return program.code
            if entry.refusal is not None:
                return f"# runs eagerly: {entry.refusal}"
        return "# not compiled yet (call the function first)"

    @property
    def entries(self) -> list[CacheEntry]:
        """The cache entries, oldest first."""
        return sorted(
            (entry for group in self._cache.values() for entry in group), key=lambda e: e.order
        )

    def __repr__(self) -> str:
        return f"<gcompile.CompiledFunction {graph_name(self.eager)} backend={self.backend}>"


_WITH_FAST_ENTRIES: weakref.WeakSet = weakref.WeakSet()  # compiled functions calls reach straight


def _drop_fast_entries(option: str) -> None:
    """A changed option (``disable`` above all) reaches calls through the general path: the
    fast entries do not look at options."""
    for compiled in list(_WITH_FAST_ENTRIES):
        compiled._drop_fast_entry()
    _WITH_FAST_ENTRIES.clear()


config.watch(_drop_fast_entries)


def _recompile(fn: "CompiledFunction", bound: BoundCall) -> Recompile:
    """Why ``bound`` missed the cache: the closest entry and the guards that differ."""
    entries = fn.entries
    diffs = [guard_changes(e.key, bound) for e in entries]
    closest = min(range(len(entries)), key=lambda i: len(diffs[i]))
    changes = diffs[closest]
    if not changes and entries[closest].sizes is not None:  # same key: a size check failed
        failed = entries[closest].sizes.failures(bound.inputs())
        texts = [f"sizes: {text} does not hold" for text in failed]
        return Recompile(graph_name(fn.eager), texts, closest, _definition(fn.eager))
    texts = [c.text for c in changes]
    ints = changed_ints(entries[closest].key, bound) - fn._binder.dynamic_ints
    ints -= fn._binder.value_ints
    hint = _static_hint(fn, {c.path for c in changes if c.static})
    where = _definition(fn.eager)
    return Recompile(graph_name(fn.eager), texts, closest, where, hint, ints)


def _static_hint(fn: "CompiledFunction", names: set) -> str:
    """Why a new value of the static arguments ``names`` compiles again."""
    if not names:
        return ""
    text = f"{', '.join(sorted(names))} {'is' if len(names) == 1 else 'are'} "
    if names <= fn._binder.dynamic_ints:
        return (
            text + "a size symbol for values of 2 or more; 0, 1 and negative values are specialised"
        )
    if names & set(fn.static_argnames):
        return text + "static (named in static_argnames): each value compiles its own graph"
    return text + (
        "static (a bool or other non-array value is baked into the graph; an int becomes a "
        "size symbol when its value alone changes): each value compiles its own graph; "
        "pass a NumPy scalar or a float to make it an input"
    )


def _dump_folder(fn: "CompiledFunction") -> Path | None:
    """``<GCOMPILE_DEBUG_DIR>/<function>_<n>`` for the n-th compile, or None."""
    root = config.get("debug_dir")
    if not root:
        return None
    folder = Path(root) / f"{graph_name(fn.eager)}_{fn.stats['traces'] + 1}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _write_dump(fn: "CompiledFunction", folder: Path, entry: CacheEntry, bound: BoundCall) -> None:
    """The GCOMPILE_DEBUG_DIR folder of one compile; a failure to write it only warns."""
    from .tools.debug import write_compile_dump  # tools sit above api; imported when asked

    try:
        write_compile_dump(folder, fn, entry, bound)
    except Exception as error:  # a debugging aid must never break the user's call
        warnings.warn(
            f"gcompile could not write the debug folder {folder}: {type(error).__name__}: {error}",
            GcompileWarning,
            stacklevel=5,
        )


def _definition(fn: Callable) -> str:
    """``file:line`` of a function's definition (or its name when the source is unknown)."""
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return getattr(fn, "__qualname__", repr(fn))


def compile(
    fn: Callable | None = None,
    *,
    backend: str = "numba",
    fullgraph: bool = False,  # noqa: A001
    static_argnames: tuple | list | str = (),
    options: dict | None = None,
) -> Any:
    """Compile a NumPy function; usable as ``@compile`` and ``@compile(...)``.

    Args:
        fn: the function to compile.
        backend: ``"numba"`` (default: generated loop nests compiled by Numba) or
            ``"interpreter"`` (the NumPy reference, op by op).
        fullgraph: raise ``UnsupportedError`` instead of running eagerly when a construct is refused.
        static_argnames: parameters whose value is fixed at compile time (guarded; a new value recompiles).
        options: backend and pass options (``fastmath``, ``parallel``, ``parallel_threshold``,
            ``max_kernel_ops``, passes to skip, ``max_graph_nodes``: the compile budget, see
            ``entries.MAX_GRAPH_NODES``; ``max_loop_statements``: the budget of one loop nest's
            function; ``loops``: default True, capture ``for`` loops as loops), and ``dynamic`` (default True: array sizes of
            2 or more are symbolic, so one trace serves every size; False fixes every size),
            ``cache_size_limit`` (the entries before the recompile warning; default
            ``GCOMPILE_CACHE_LIMIT``).

    Returns:
        A ``CompiledFunction`` (or a decorator producing one when ``fn`` is omitted).

    Example:
        >>> @gcompile.compile
        ... def scale(x, a: float):
        ...     return np.exp(x) * a
    """

    def wrap(f: Callable) -> CompiledFunction:
        return CompiledFunction(
            f,
            backend=backend,
            fullgraph=fullgraph,
            static_argnames=static_argnames,
            options=options,
        )

    return wrap if fn is None else wrap(fn)


def trace(
    fn: Callable,
    *args: Any,
    static_argnames: tuple | list | str = (),
    stage: str = "traced",
    options: dict | None = None,
    **kwargs: Any,
) -> Graph:
    """Trace ``fn(*args, **kwargs)`` and return its graph at ``stage`` (``print(graph)`` shows it).

    Args:
        fn: a plain function or a ``CompiledFunction`` (its static_argnames and options are used).
        stage: ``"traced"`` (as recorded), ``"optimized"`` (functionalized and cleaned up) or
            ``"fused"`` (with FusedKernel nodes and ``graph.notes.fusion``).
        static_argnames, options: as for ``compile``; these keywords are taken by ``trace`` itself.

    Refusals raise ``UnsupportedError``.
    """
    if isinstance(fn, CompiledFunction):
        static_argnames = static_argnames or fn.static_argnames
        options = options if options is not None else fn.options
        fn = fn.eager
    binder = ArgumentBinder(fn, static_argnames)

    def traced(bound: BoundCall) -> Graph:
        return frontend.trace(
            fn,
            graph_name(fn),
            bound.leaves,
            bound.is_input,
            bound.rebuild,
            dynamic=(options or {}).get("dynamic", True),
            budget=(options or {}).get("max_graph_nodes", MAX_GRAPH_NODES),  # (as compile's)
            loops=(options or {}).get("loops", True),
        )

    graph, _ = binder.specialising(binder.bind(args, kwargs), traced)
    manager.run_pipeline(graph, stage, options)
    return graph


class _PastTheLimit(UnsupportedError):
    """The refusal of calls of new argument structures past the cache size limit: tracing
    and compiling every call would make the function slower than eager (``torch.compile``'s
    ``cache_size_limit`` likewise)."""

    def __init__(self, limit: int):
        super().__init__(
            f"another argument structure: compiled for {limit} already (the cache size limit), "
            "calls of new ones run eagerly",
            hint="a changing shape, dtype or static value recompiles every call; raise "
            "GCOMPILE_CACHE_LIMIT (or the option cache_size_limit) if this is expected",
        )
