"""compare(fn, *args): eager NumPy against the compiled function, on copies of the same inputs.

The report answers "is the compiled result right?" and "is it faster?": per
output (and per mutated argument) the dtype and shape agreement, the figure that
decided the verdict (first; with, in words, why a large relative error at a value
tiny beside the output's largest was accepted), the largest absolute and relative
error and the largest distance in ulp, and for float
results computed from narrower floats, which of the two is closer to eager NumPy
run in float64 (for float64 results that disagree, in long double); the first
call's time with each compile phase, the steady-state
medians of both, the speed-up and the number of calls after which the compile has
paid for itself. When the results disagree, it locates the difference: the first
node holding sub-graphs (a fused kernel; ``ir/subgraph.py``) whose outputs, compiled
alone, differ from the interpreter's on the same inputs, and the passes whose removal
makes the results agree.
"""

from __future__ import annotations

import statistics
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..api import CompiledFunction, compile, trace
from ..guards import ArgumentBinder
from ..ir import ops
from ..ir.graph import Graph, Node, map_arg
from ..ir.meta import TupleMeta
from ..ir.printer import format_node
from ..ir.pytree import flatten, map_leaves, unflatten
from ..ir.subgraph import subgraphs_of, walk


def copy_inputs(value: Any) -> Any:
    """A deep copy of arguments that keeps each array's layout (C, F, or strided with the same stride
    signs) and read-only flag, so two runs see equivalent inputs."""
    if isinstance(value, np.ndarray):
        if value.flags.c_contiguous or value.flags.f_contiguous:
            out = value.copy(order="K")
        else:
            base = np.zeros(tuple(s * 2 for s in value.shape), value.dtype)
            out = base[tuple(slice(None, None, -2 if st < 0 else 2) for st in value.strides)]
            out[...] = value
        out.flags.writeable = value.flags.writeable
        return out
    if isinstance(value, (tuple, list, dict)):
        return map_leaves(copy_inputs, value)
    return value


def ulp_distance(expected: Any, actual: Any) -> np.ndarray:
    """Elementwise distance in units in the last place of ``expected``'s float dtype.

    Equal values (including two NaNs, or +0 and -0) are 0 apart; a NaN against a number is inf.
    """
    e = np.asarray(expected)
    a = np.asarray(actual).astype(e.dtype)
    if e.dtype.kind == "c":
        return np.maximum(ulp_distance(e.real, a.real), ulp_distance(e.imag, a.imag))
    with np.errstate(all="ignore"):  # spacing(inf) is nan, as intended: inf differs from finite
        spacing = np.spacing(np.abs(e))
    spacing = np.where(spacing == 0, np.finfo(e.dtype).smallest_subnormal, spacing)
    with np.errstate(all="ignore"):
        dist = np.abs(a.astype(np.float64) - e.astype(np.float64)) / spacing.astype(np.float64)
    same = (e == a) | (np.isnan(e) & np.isnan(a))
    dist = np.where(same, 0.0, dist)
    return np.where(np.isnan(dist), np.inf, dist)


@dataclass
class Agreement:
    """How one output (or mutated argument) of the compiled run compares with eager's.

    ``verdict`` is the figure that decided ``ok`` (shown first in the report); ``note`` says
    in words why a large relative or ulp error was accepted, when one was.
    """

    path: str
    eager_dtype: str
    compiled_dtype: str
    eager_shape: tuple
    compiled_shape: tuple
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    max_scaled_ulp: float = 0.0  # the distance in ulp of the largest eager value
    ok: bool = True
    closer: str = ""  # for float results: which is closer to the wider reference
    verdict: str = ""
    decided_by: str = ""  # the figure in ``verdict``, not repeated after it
    note: str = ""

    def line(self) -> str:
        status = "ok  " if self.ok else "DIFF"
        kind = f"{self.eager_dtype}{list(self.eager_shape)}"
        if (self.eager_dtype, self.eager_shape) != (self.compiled_dtype, self.compiled_shape):
            kind += f" vs compiled {self.compiled_dtype}{list(self.compiled_shape)}"
        text = f"  {status} {self.path:<16} {kind:<24} {self.verdict}"
        if self.max_abs and self.eager_dtype[:1] in ("f", "c"):
            others = {
                "max abs": self.max_abs,
                "max rel": self.max_rel,
                "max ulp": self.max_ulp,
                "at the result's scale": self.max_scaled_ulp,
            }
            others.pop(self.decided_by, None)
            text += "; " + ", ".join(f"{name} {value:.3g}" for name, value in others.items())
        elif self.max_abs and self.ok:
            text += f"; max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}"
        return text + "".join(f"\n       {extra}" for extra in (self.note, self.closer) if extra)


@dataclass
class CompareReport:
    """Result of ``compare``; ``str(report)`` is the readable report."""

    name: str
    backend: str
    outputs: list = field(default_factory=list)
    arguments: list = field(default_factory=list)
    first_call_s: float = 0.0
    compile_s: float = 0.0
    eager_median_s: float = 0.0
    compiled_median_s: float = 0.0
    repeat: int = 0
    fallbacks: int = 0
    phases: dict = field(default_factory=dict)  # compile phase -> seconds
    first_difference: str = ""  # the first sub-graph op whose compiled outputs differ, if any
    guilty_passes: list = field(default_factory=list)  # passes whose removal makes results agree
    bisected: bool = False

    @property
    def break_even_calls(self) -> float:
        """Calls after which the compile has paid for itself (inf when compiled is not faster)."""
        saved = self.eager_median_s - self.compiled_median_s
        return self.compile_s / saved if saved > 0 else float("inf")

    @property
    def ok(self) -> bool:
        """True when every output and every argument agrees within tolerance."""
        return all(a.ok for a in self.outputs + self.arguments)

    @property
    def speedup(self) -> float:
        """Eager steady-state median over compiled steady-state median."""
        return (
            self.eager_median_s / self.compiled_median_s if self.compiled_median_s else float("nan")
        )

    def __str__(self) -> str:
        lines = [f"gcompile compare: {self.name} (backend {self.backend})", "agreement:"]
        lines += [a.line() for a in self.outputs] or ["  (no outputs)"]
        if self.arguments:
            lines.append("arguments after the call (mutations):")
            lines += [a.line() for a in self.arguments]
        lines += [
            "time:",
            f"  first compiled call {_ms(self.first_call_s)} (of which compile {_ms(self.compile_s)})",
            f"  steady state, median of {self.repeat}: eager {_ms(self.eager_median_s)}, "
            f"compiled {_ms(self.compiled_median_s)}, speed-up {self.speedup:.2f}x",
            f"  break-even after {self.break_even_calls:.0f} calls"
            if np.isfinite(self.break_even_calls)
            else "  break-even: never (the compiled code is not faster)",
        ]
        if self.phases:
            lines.append(
                "  compile phases: " + ", ".join(f"{k} {_ms(v)}" for k, v in self.phases.items())
            )
        if not self.ok and self.first_difference:
            lines.append(f"first difference: {self.first_difference}")
        if not self.ok and self.bisected:
            lines.append(
                "passes whose removal makes the results agree: "
                + (", ".join(self.guilty_passes) or "none (the difference is in the backend)")
            )
        if self.fallbacks:
            lines.append(f"  warning: {self.fallbacks} call(s) ran eagerly (see fn.refusals)")
        lines.append("result: " + ("AGREE" if self.ok else "DISAGREE"))
        return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def agreement(path: str, expected: Any, actual: Any, ulps: float) -> Agreement:
    """Compare one eager value with one compiled value."""
    e, a = np.asarray(expected), np.asarray(actual)
    report = Agreement(path, str(e.dtype), str(a.dtype), e.shape, a.shape)
    if e.dtype != a.dtype or e.shape != a.shape or type(expected) is not type(actual):
        report.ok = False
        what = "type" if (e.dtype, e.shape) == (a.dtype, a.shape) else "dtype or shape"
        report.verdict = f"{what} differs" + (
            f" ({type(expected).__name__} vs compiled {type(actual).__name__})"
            if what == "type"
            else ""
        )
        return report
    if e.size == 0 or e.dtype.kind not in "biufc":
        report.ok = bool(np.array_equal(e, a))
        report.verdict = "equal" if report.ok else "not equal"
        return report
    with np.errstate(all="ignore"):
        wide = np.complex128 if e.dtype.kind == "c" else np.float64
        diff = np.abs(e.astype(wide) - a.astype(wide))
        diff = np.where((e == a) | (np.isnan(diff) & (np.isnan(e) & np.isnan(a))), 0.0, diff)
        report.max_abs = float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
        scale = np.abs(e.astype(wide))
        rel = np.where(diff == 0, 0.0, diff / np.where(scale == 0, 1.0, scale))
        report.max_rel = float(np.max(rel))
    if e.dtype.kind in "fc":
        _judge_float(report, e, a, diff, ulps)
    else:
        report.ok = report.max_abs == 0
        report.verdict = "equal" if report.ok else f"max abs {report.max_abs:.3g} (must be 0)"
    return report


def _judge_float(report: Agreement, e: np.ndarray, a: np.ndarray, diff: np.ndarray, ulps: float):
    """A float agrees when each element is within ``ulps`` of eager's value, or within ``ulps``
    at the magnitude of the whole result: where a program cancels (a put price of 1e-13 from
    terms of 100), a last-bit difference in its inputs is many ulps of the tiny result."""
    distance = ulp_distance(e, a)
    finite = np.isfinite(e) & np.isfinite(a)
    magnitude = float(np.max(np.abs(e[finite]), initial=0.0))
    unit = float(np.spacing(np.finfo(e.dtype).dtype.type(magnitude)))
    with np.errstate(all="ignore"):
        scaled = np.where(finite, diff / unit, np.inf)
    report.max_ulp = float(np.max(distance))
    report.max_scaled_ulp = float(np.max(np.where(distance == 0, 0.0, scaled)))
    decisive = float(np.max(np.minimum(distance, scaled)))
    report.ok = decisive <= ulps
    if report.max_abs == 0:
        report.verdict = "equal"
    elif report.max_ulp <= ulps:
        report.verdict = f"max ulp {report.max_ulp:.3g} (limit {ulps:g})"
        report.decided_by = "max ulp"
    elif not report.ok:
        report.verdict = (
            f"{decisive:.3g} ulp (limit {ulps:g}, per element and at the result's scale)"
        )
    else:
        report.verdict = f"{decisive:.3g} ulp at the result's scale (limit {ulps:g})"
        report.decided_by = "at the result's scale"
        report.note = _tiny_value_note(e, a, diff, magnitude, unit, report)


def _tiny_value_note(e, a, diff, largest: float, unit: float, report: Agreement) -> str:
    """Why a large relative (and ulp) error was accepted: where it is, and the scale it was
    measured at (``unit``: one ulp of ``largest``, the output's largest finite magnitude)."""
    with np.errstate(all="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.where(e == 0, 1.0, np.abs(e)))
    where = np.unravel_index(int(np.nanargmax(rel)), e.shape)
    index = f"[{', '.join(map(str, where))}]" if e.ndim else ""
    return (
        f"max rel {report.max_rel:.3g} is where the value is tiny beside the output's largest "
        f"({largest:.3g}): {report.path}{index} is {e[where]:.3g} eager, {a[where]:.3g} compiled. "
        f"A value that small is what is left when terms of the output's size cancel, and it keeps "
        f"their rounding error, so the difference is measured in ulp of {largest:.3g}: "
        f"{diff[where] / unit:.2g} there, {report.max_scaled_ulp:.3g} at most (|diff| <= "
        f"{report.max_abs:.3g})"
    )


def _time_once(fn: Callable, args: tuple, kwargs: dict) -> float:
    """Seconds one call of ``fn`` takes on fresh copies of the arguments (copying not timed)."""
    run_args, run_kwargs = copy_inputs(args), copy_inputs(kwargs)
    start = time.perf_counter()
    fn(*run_args, **run_kwargs)
    return time.perf_counter() - start


def compare(
    fn: Callable,
    *args: Any,
    repeat: int = 20,
    ulps: float = 8,
    backend: str | None = None,
    **kwargs: Any,
) -> CompareReport:
    """Run ``fn`` eagerly and compiled on copies of the same inputs and report agreement and time.

    Args:
        fn: a plain function or a ``CompiledFunction`` (its options are reused, its cache is not).
        repeat: runs of each variant for the steady-state medians.
        ulps: largest distance in ulp accepted for float outputs, per element or at the
            magnitude of the whole output. The default allows each transcendental to differ
            by the last bit (Numba calls libm, NumPy its own SIMD loops) and a few operations
            to carry that difference on.
        backend: backend to compile with (default: the function's, else ``"numba"``).

    Example:
        >>> print(gcompile.compare(black_scholes, S, K, T, 0.05, 0.2))
    """
    settings: dict = {}
    if isinstance(fn, CompiledFunction):
        settings = {"static_argnames": fn.static_argnames, "options": fn.options}
        backend = backend or fn.backend
        fn = fn.eager
    backend = backend or "numba"
    compiled = compile(fn, backend=backend, **settings)
    name = getattr(fn, "__name__", "fn")
    report = CompareReport(name, backend, repeat=repeat)
    eager_call, expected, compiled_call, actual = _first_calls(report, fn, compiled, args, kwargs)
    _judge_outputs(report, fn, args, kwargs, expected, actual, ulps)
    binder = ArgumentBinder(fn, settings.get("static_argnames", ()))
    for (path, e), (_, a) in zip(
        binder.bind(*eager_call).leaves, binder.bind(*compiled_call).leaves
    ):
        if isinstance(e, np.ndarray):
            report.arguments.append(agreement(path, e, a, ulps))
    _time_steady_state(report, fn, compiled, args, kwargs)
    report.fallbacks = compiled.stats["fallbacks"]
    if not report.ok and report.fallbacks == 0:
        locate_difference(report, fn, args, kwargs, settings, backend, ulps)
    return report


def _first_calls(report: CompareReport, fn: Callable, compiled: Any, args: tuple, kwargs: dict):
    """Call ``fn`` and ``compiled`` once each, on copies of the arguments, timing the compiled
    call and its compile into ``report``: ``(eager arguments, eager result, compiled arguments,
    compiled result)``, the arguments as ``(args, kwargs)`` after the calls."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        eager_args, eager_kwargs = copy_inputs(args), copy_inputs(kwargs)
        expected = fn(*eager_args, **eager_kwargs)
        run_args, run_kwargs = copy_inputs(args), copy_inputs(kwargs)
        start = time.perf_counter()
        actual = compiled(*run_args, **run_kwargs)
        report.first_call_s = time.perf_counter() - start
    entry = compiled.entries[0] if compiled.entries else None
    report.compile_s = sum(entry.timings.values()) if entry else 0.0
    if entry is not None:
        report.phases = dict(entry.timings)
        program = getattr(entry.run, "program", None)
        if program is not None:
            report.phases.update(program.timings)
    return (eager_args, eager_kwargs), expected, (run_args, run_kwargs), actual


def _judge_outputs(
    report: CompareReport, fn: Callable, args: tuple, kwargs: dict, expected, actual, ulps: float
) -> None:
    """The agreement of each compiled output with the eager one, into ``report.outputs``;
    outputs that differ judged against a wider reference when there is one."""
    reference = _wider_reference(fn, args, kwargs, double=False)
    expected_leaves, _ = flatten(expected, "out")
    actual_leaves, _ = flatten(actual, "out")
    if len(expected_leaves) != len(actual_leaves):
        report.outputs.append(
            Agreement(
                "out",
                "structure",
                "structure",
                (len(expected_leaves),),
                (len(actual_leaves),),
                ok=False,
            )
        )
    pairs = list(zip(expected_leaves, actual_leaves))
    agreements = [agreement(path, e, a, ulps) for (path, e), (_, a) in pairs]
    if reference is None and not all(o.ok for o in agreements):
        # float64 results that differ: which one is closer to long double's answer?
        reference = _wider_reference(fn, args, kwargs, double=True)
    reference_leaves = flatten(reference, "out")[0] if reference is not None else []
    for i, (((_, e), (_, a)), outcome) in enumerate(zip(pairs, agreements)):
        report.outputs.append(outcome)
        if len(reference_leaves) == len(expected_leaves):
            _judge_by_reference(outcome, e, a, reference_leaves[i][1])


def _time_steady_state(
    report: CompareReport, fn: Callable, compiled: Any, args: tuple, kwargs: dict
) -> None:
    """The medians of ``report.repeat`` calls of each, interleaved, into ``report``."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        eager_times, compiled_times = [], []
        for _ in range(report.repeat):  # interleaved, so drift on a shared machine hits both alike
            eager_times.append(_time_once(fn, args, kwargs))
            compiled_times.append(_time_once(compiled, args, kwargs))
    report.eager_median_s = statistics.median(eager_times)
    report.compiled_median_s = statistics.median(compiled_times)


_LONG_DOUBLE_IS_WIDER = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant


def _widened(value: Any, double: bool) -> Any:
    """``value`` with float16/float32 (complex64) arrays and scalars made float64 (complex128),
    and with ``double`` float64 (complex128) ones made long double."""
    leaves, spec = flatten(value)
    return unflatten(spec, [_widened_leaf(leaf, double) for _, leaf in leaves])


def _widened_leaf(value: Any, double: bool) -> Any:
    if not isinstance(value, (np.ndarray, np.generic)) or value.dtype.kind not in "fc":
        return value
    complex_ = value.dtype.kind == "c"
    if value.dtype.itemsize < 8 * (1 + complex_):
        wide = np.complex128 if complex_ else np.float64
    elif double and value.dtype.itemsize == 8 * (1 + complex_):
        wide = np.clongdouble if complex_ else np.longdouble
    else:
        return value
    return value.astype(wide) if isinstance(value, np.ndarray) else wide(value)


def _wider_reference(fn: Callable, args: tuple, kwargs: dict, double: bool) -> Any:
    """Eager NumPy on copies of the float inputs one precision up (float16/float32 in float64;
    with ``double``, float64 in long double where the platform's is wider), or None when there
    is nothing to widen or the function refuses the wider types."""
    leaves = flatten((args, kwargs))[0]
    widened = [_widened_leaf(v, double) for _, v in leaves]
    if double and not _LONG_DOUBLE_IS_WIDER:
        return None
    if all(w is v for w, (_, v) in zip(widened, leaves)):
        return None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*_widened(copy_inputs(args), double), **_widened(copy_inputs(kwargs), double))
        except Exception:  # the function may insist on its dtypes; then there is no reference
            return None


def _judge_by_reference(report: Agreement, expected: Any, actual: Any, reference: Any) -> None:
    """Note which of eager and compiled is closer to the wider reference; a compiled float
    result at least as close as eager's agrees even when the two differ by more than ``ulps``
    (a float32 sum NumPy accumulates in float32 and gcompile in float64, say, or an
    ill-conditioned float64 formula where both are hundreds of ulp from the true value)."""
    e, a, r = np.asarray(expected), np.asarray(actual), np.asarray(reference)
    if e.dtype.kind not in "fc" or e.shape != r.shape or e.shape != a.shape or not e.size:
        return
    eager_error, compiled_error = _max_error(e, r), _max_error(a, r)
    verdict = (
        "compiled is closer"
        if compiled_error < eager_error
        else "eager is closer"
        if eager_error < compiled_error
        else "equally close"
    )
    report.closer = (
        f"vs eager NumPy in {r.dtype}: {verdict} (max abs error eager {eager_error:.3g}, "
        f"compiled {compiled_error:.3g})"
    )
    if not report.ok and (e.dtype, e.shape) == (a.dtype, a.shape) and compiled_error <= eager_error:
        report.ok = True
        report.closer += "; accepted: the compiled result is the more accurate one"
        report.verdict = f"closer to {r.dtype} NumPy than eager is; from eager {report.verdict}"


def _max_error(value: np.ndarray, reference: np.ndarray) -> float:
    """Largest |value - reference|; a NaN where the reference has none (or none where it has
    one) counts as infinitely wrong."""
    with np.errstate(all="ignore"):
        error = np.abs(value.astype(reference.dtype) - reference)
    nan_mismatch = np.isnan(value) != np.isnan(reference)
    error = np.where(nan_mismatch, np.inf, np.where(np.isnan(error), 0.0, error))
    return float(np.max(error))


def locate_difference(
    report: CompareReport,
    fn: Callable,
    args: tuple,
    kwargs: dict,
    settings: dict,
    backend: str,
    ulps: float,
) -> None:
    """Fill ``report.first_difference`` and ``report.guilty_passes`` (see the module doc)."""
    from ..passes.manager import PASS_NAMES, REQUIRED

    options = settings.get("options") or {}
    statics = settings.get("static_argnames", ())
    graph = trace(  # at these inputs' sizes: each kernel is rerun alone on them
        fn,
        *copy_inputs(args),
        stage="fused",
        static_argnames=statics,
        options={**options, "dynamic": False},
        **copy_inputs(kwargs),
    )
    inputs = ArgumentBinder(fn, statics).bind(copy_inputs(args), copy_inputs(kwargs)).inputs()
    report.first_difference = first_differing_op(graph, inputs, backend, options, ulps)
    report.guilty_passes = []
    for name in PASS_NAMES:
        if name in REQUIRED:
            continue
        trial = compile(
            fn,
            backend=backend,
            static_argnames=statics,
            options={**options, "disable": [*options.get("disable", ()), name]},
        )
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            eager_result = fn(*copy_inputs(args), **copy_inputs(kwargs))
            trial_result = trial(*copy_inputs(args), **copy_inputs(kwargs))
        pairs = zip(flatten(eager_result, "out")[0], flatten(trial_result, "out")[0])
        if all(agreement(p, e, a, ulps).ok for (p, e), (_, a) in pairs):
            report.guilty_passes.append(name)
    report.bisected = True


def first_differing_op(graph: Graph, inputs: list, backend: str, options: dict, ulps: float) -> str:
    """Run ``graph`` node by node with the interpreter on ``inputs``; compile each node holding
    sub-graphs (a fused kernel) alone with ``backend`` and run it on the interpreter's values;
    name the first whose outputs differ from the interpreter's."""
    from ..backends import interpreter

    env = dict(zip(graph.placeholders, inputs))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for node in graph.nodes:
            if node.op == "constant":
                env[node] = node.target
            if node.op != "call":
                continue
            lookup = env.__getitem__
            args, kwargs = map_arg(node.args, lookup), map_arg(node.kwargs, lookup)
            if not subgraphs_of(node):
                env[node] = interpreter.evaluate_node(node, args, kwargs)
                continue
            run_graph = interpreter.runner(node)
            reference = node.target.interpret(run_graph, copy_inputs(args), kwargs)
            expected = list(reference) if isinstance(node.meta, TupleMeta) else [reference]
            compiled = _run_alone(node, [env[v] for v in node.all_input_nodes], backend, options)
            for i, (e, a) in enumerate(zip(expected, compiled)):
                if not agreement(f"{node.name}[{i}]", e, a, ulps).ok:
                    return f"{_describe(node)} output {i}"
            env[node] = reference
    return (
        "no node holding sub-graphs (fused kernel) differs from the interpreter on the same "
        "inputs (the difference is outside them)"
    )


def _run_alone(node: Node, values: list, backend: str, options: dict) -> list:
    """The outputs of ``node`` run by ``backend`` in a graph of its own, on the ``values`` of
    its input nodes."""
    from ..backends import get

    alone = Graph(f"{node.name}_alone")
    inputs = {v: alone.placeholder(v.name, v.meta) for v in node.all_input_nodes}
    args, kwargs = map_arg(node.args, inputs.__getitem__), map_arg(node.kwargs, inputs.__getitem__)
    call = alone.call(node.target, args, kwargs, meta=node.meta)
    if isinstance(node.meta, TupleMeta):
        items = range(len(node.meta.items))
        alone.output(tuple(alone.call(ops.KERNEL_OUTPUT, (call,), {"item": i}) for i in items))
    else:
        alone.output((call,))
    return get(backend)(alone, options)(copy_inputs(values))


def _describe(node: Node) -> str:
    """``node``'s line, the ops in its graphs and the user's first line among them."""
    inner = [v.node for graph in subgraphs_of(node) for v in walk(graph) if v.node.op == "call"]
    text = f"{format_node(node)} ({node.kind}: {', '.join(n.target.name for n in inner)})"
    source = next((n.source for n in inner if n.source), None)
    return text + (f", from {source}" if source else "")
