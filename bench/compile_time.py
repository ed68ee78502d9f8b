"""Compile time of the peer kernels (issue 12, item 7): cold, and in a new process, warm disk cache.

    python bench/compile_time.py          # 3 rounds, writes its section of bench/results.md
    python bench/compile_time.py --rounds 1 --kernels exp_sin softmax
    python bench/compile_time.py --baseline /tmp/old-checkout   # before/after, interleaved

Each measurement is a new Python process (one at a time), in three states: ``first`` with an
empty ``GCOMPILE_CACHE_DIR`` and an empty ``NUMBA_CACHE_DIR`` (nothing compiled before on the
machine: gcompile's helpers too), ``cold`` with a new, empty ``GCOMPILE_CACHE_DIR`` (the
helpers in Numba's cache, as after any earlier use), ``warm`` with that directory again. The
bytecode of the Python sources is cached (``PYTHONPYCACHEPREFIX``), as for an installed
package. The process times
``import numba`` and then ``import gcompile`` (reported apart from the call), builds the inputs,
and times the first call of ``gcompile.compile(kernel, fullgraph=True)``; the phases are the ones
``explain()`` shows (``CacheEntry.timings`` and the host program's ``timings``), and the time
inside Numba is split with Numba's compiler events (``numba.core.event``: ``numba:run_pass``
and ``numba:llvm_lock``) into typing, IR inlining, parfor passes, lowering and LLVM, each
counted exclusive of the events nested in it (a callee compiled while typing its caller is
the callee's). ``target init`` is Numba's set-up of its typing and target contexts
(``refresh``; the first one in a process imports ``numba.np.arraymath``, whose BLAS check
imports ``scipy.linalg``); it is paid by the first compile or cache load in any process that
uses Numba. Medians over the rounds are reported, wall-clock and CPU time (``process_time``,
which a loaded machine stretches much less).

With ``--baseline DIR`` the same processes also run against another checkout (its ``gcompile``,
``bench`` and ``examples`` on ``PYTHONPATH``), alternating with this one round by round.
The report replaces the section between ``<!-- compile:start -->`` and ``<!-- compile:end -->``
of bench/results.md (bench/run.py's ``write_section``).
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))  # (the root goes on in ``_child``/``main``)

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402  (before the timed imports: the user's program has it already)

ROOT = Path(_HERE).parent


# -- the kernels: (module, function) of the source, and the inputs ---------------------------------


def stencil_in_place(u):
    """The 5-point stencil written into the interior of ``u``."""
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def relu_linear(x, w, b):
    """A dense layer with ReLU."""
    return np.maximum(x @ w + b, 0.0)


def _rows(rng, dtype):
    return rng.standard_normal((1024, 1024)).astype(dtype)


KERNELS = {
    # name: (module, function, inputs from a Generator)
    "exp_sin f64": ("bench.vector_math", "exp_sin", lambda r: (r.uniform(-10, 10, 10**6),)),
    "black_scholes f64": (
        "examples.black_scholes",
        "black_scholes",
        lambda r: sys.modules["examples.black_scholes"].example_inputs(10**6),
    ),
    "softmax f32 rows": ("bench.run", "softmax", lambda r: (_rows(r, np.float32),)),
    "layernorm f32 rows": (
        "bench.run",
        "layernorm",
        lambda r: (_rows(r, np.float32), *(r.random((2, 1024), dtype=np.float32))),
    ),
    "logsumexp f64 rows": ("bench.vector_math", "logsumexp", lambda r: (_rows(r, np.float64),)),
    "haversine f64": (
        "examples.haversine",
        "haversine",
        lambda r: sys.modules["examples.haversine"].example_inputs(10**6),
    ),
    "gelu_tanh f32": (
        "bench.vector_math",
        "gelu_tanh",
        lambda r: (r.uniform(-6, 6, 10**6).astype(np.float32),),
    ),
    "sum(a*b+c) f64": ("bench.run", "sum_axpy", lambda r: tuple(r.random((3, 10**6)))),
    "stencil in place f64": (
        "bench.compile_time",
        "stencil_in_place",
        lambda r: (r.random((1000, 1000)),),
    ),
    "relu(x@W+b) f32": (
        "bench.compile_time",
        "relu_linear",
        lambda r: (
            r.random((256, 512), dtype=np.float32),
            r.random((512, 1024), dtype=np.float32),
            r.random(1024, dtype=np.float32),
        ),
    ),
}

# -- the child process: one first call, timed ------------------------------------------------------


class _Events:
    """Numba's compiler events and Numba's target set-up as (time, START/END, label), in order."""

    def __init__(self):
        self.buffer: list = []

    def listener(self, label_of):
        from numba.core import event

        events = self

        class Recorder(event.Listener):
            def on_start(self, ev):
                events.buffer.append((time.perf_counter(), True, label_of(ev)))

            def on_end(self, ev):
                events.buffer.append((time.perf_counter(), False, label_of(ev)))

        return Recorder()

    def install(self) -> None:
        from numba.core import base, event
        from numba.core.typing import context

        event.register("numba:run_pass", self.listener(lambda ev: ev.data["name"]))
        event.register("numba:llvm_lock", self.listener(lambda ev: "llvm"))
        for owner in (base.BaseContext, context.BaseContext):  # the target's and typing's
            owner.refresh = self.timed(owner.refresh, "target init")

    def timed(self, method, label: str):
        """``method`` recording its start and end as ``label``."""

        def run(*args, **kwargs):
            self.buffer.append((time.perf_counter(), True, label))
            try:
                return method(*args, **kwargs)
            finally:
                self.buffer.append((time.perf_counter(), False, label))

        return run

    def exclusive(self) -> dict:
        """Seconds per label, each event's time less the time of the events nested inside it."""
        totals: dict = {}
        stack: list = []  # [label, start, nested seconds]
        for moment, starting, label in self.buffer:
            if starting:
                stack.append([label, moment, 0.0])
                continue
            if not stack or stack[-1][0] != label:
                continue  # an END without its START (cannot happen with Numba's pairing)
            _, start, nested = stack.pop()
            totals[label] = totals.get(label, 0.0) + (moment - start) - nested
            if stack:
                stack[-1][2] += moment - start
        return totals


def _numba_category(label: str) -> str:
    """The report's column for a Numba event ("nopython_type_inference [kernel]" -> "typing")."""
    name = label.split(" [")[0]
    if name in ("llvm", "target init"):
        return name
    for part, category in (
        ("type_inference", "typing"),
        ("nopython_rewrites", "typing"),
        ("inline", "IR inlining"),
        ("lowering", "lowering"),
        ("parfor", "parfors"),
    ):
        if part in name:
            return category
    return "other passes"


def _child(name: str) -> dict:
    started = time.perf_counter()
    import numba  # noqa: F401

    numba_done = time.perf_counter()
    import gcompile

    gcompile_done = time.perf_counter()
    events = _Events()
    events.install()
    import importlib
    import warnings

    warnings.simplefilter("ignore")
    module, function, make = KERNELS[name]
    fn = gcompile.compile(getattr(importlib.import_module(module), function), fullgraph=True)
    args = make(np.random.default_rng(0))
    start, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    first, first_cpu = time.perf_counter() - start, time.process_time() - cpu
    start = time.perf_counter()
    fn(*args)
    second = time.perf_counter() - start
    entry = fn.entries[-1]
    phases = dict(entry.timings)
    program = entry.run.program
    phases.update(program.timings)
    numba_split: dict = {}
    for label, seconds in events.exclusive().items():
        category = _numba_category(label)
        numba_split[category] = numba_split.get(category, 0.0) + seconds
    return {
        "gcompile": gcompile.__file__,
        "import numba": numba_done - started,
        "import gcompile": gcompile_done - numba_done,
        "first call": first,
        "first call cpu": first_cpu,
        "second call": second,
        "phases": phases,
        "numba": numba_split,
        "kernel compiles": program.kernel_compiles,
        "disk hits": program.disk_cache_hits,
        "kernels": len(program.kernels),
    }


# -- the parent: processes one at a time, medians, the report -------------------------------------


# Bytecode is cached as for an installed package (the sandbox may set PYTHONDONTWRITEBYTECODE,
# which would count compiling gcompile's sources into ``import gcompile``), outside the sources.
_PYCACHE = Path(tempfile.gettempdir()) / f"gcompile-bench-pycache-{os.getuid()}"


def run_once(name: str, cache: str, root: Path, numba_cache: str | None = None) -> dict:
    """One fresh process measuring ``name`` with the kernel cache ``cache`` and ``root``'s code.

    ``numba_cache``: a ``NUMBA_CACHE_DIR`` for everything Numba caches (gcompile's helpers too);
    by default Numba keeps a helper's machine code beside its module, as for a user.
    """
    env = {**os.environ, "GCOMPILE_CACHE_DIR": cache, "PYTHONPATH": str(root)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("NUMBA_CACHE_DIR", None)
    env["PYTHONPYCACHEPREFIX"] = str(_PYCACHE)
    if numba_cache is not None:
        env["NUMBA_CACHE_DIR"] = numba_cache
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, "--root", str(root)],
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{name} ({root}): {out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["gcompile"].startswith(str(root)):
        raise RuntimeError(f"{name}: imported {result['gcompile']}, not the code under {root}")
    return result


def summarise(runs: list[dict]) -> dict:
    """Median of every figure over the runs (phases grouped as in the report)."""

    def median(values):
        return statistics.median(values) if values else 0.0

    grouped = []
    for run in runs:
        phases = run["phases"]
        passes = sum(s for k, s in phases.items() if k.startswith("pass "))
        numba_time = sum(s for k, s in phases.items() if k.startswith("numba "))
        codegen = sum(s for k, s in phases.items() if k.startswith("codegen "))
        traced = phases.get("trace", 0.0) + passes + phases.get("backend", 0.0)
        grouped.append(
            {
                "import numba": run["import numba"],
                "import gcompile": run["import gcompile"],
                "first call": run["first call"],
                "first call cpu": run["first call cpu"],
                "second call": run["second call"],
                "trace": phases.get("trace", 0.0),
                "passes": passes,
                "codegen": codegen,
                "numba": numba_time,
                "host": phases.get("backend", 0.0) - codegen - numba_time,
                "guards, call": run["first call"] - traced,
                **{f"numba: {k}": v for k, v in run["numba"].items()},
                "kernels": run["kernels"],
                "kernel compiles": run["kernel compiles"],
                "disk hits": run["disk hits"],
            }
        )
    keys = {k for g in grouped for k in g}
    return {k: median([g.get(k, 0.0) for g in grouped]) for k in keys}


STATES = ("first", "cold", "warm")


def measure(names: list[str], rounds: int, roots: dict[str, Path]) -> dict:
    """``{(label, kernel, state): summary}``; each case a new process, one at a time.

    ``first``: empty kernel cache and empty Numba cache (the first kernel ever on a machine);
    ``cold``: empty kernel cache, gcompile's helpers in Numba's cache (every later new kernel);
    ``warm``: a new process with the kernel cache ``cold`` filled.
    """
    for root in roots.values():  # unmeasured: bytecode written, each kernel's helpers cached
        for name in names:
            with tempfile.TemporaryDirectory(prefix="gc-compile-time-") as cache:
                run_once(name, cache, root)
    raw: dict = {}
    for round_ in range(rounds):
        for name in names:
            for label, root in list(roots.items())[:: 1 if round_ % 2 == 0 else -1]:
                with tempfile.TemporaryDirectory(prefix="gc-compile-time-") as scratch:
                    caches = {
                        "first": (f"{scratch}/first", f"{scratch}/numba"),
                        "cold": (f"{scratch}/kernels", None),
                        "warm": (f"{scratch}/kernels", None),
                    }
                    for state in STATES:
                        kernels, numba_cache = caches[state]
                        result = run_once(name, kernels, root, numba_cache)
                        raw.setdefault((label, name, state), []).append(result)
                        print(
                            f"round {round_ + 1} {label:8} {name:22} {state}: first call "
                            f"{result['first call'] * 1e3:7.0f} ms, CPU "
                            f"{result['first call cpu'] * 1e3:5.0f} ms (compiles "
                            f"{result['kernel compiles']}, disk {result['disk hits']})",
                            flush=True,
                        )
    return {key: summarise(runs) for key, runs in raw.items()}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f}"


_NUMBA_COLUMNS = (
    "target init", "typing", "IR inlining", "parfors", "lowering", "llvm", "other passes"
)


def phase_table(summaries: dict, label: str, names: list[str]) -> list[str]:
    """One row per kernel and state: the first call and where its time went (ms)."""
    lines = [
        "| kernel | state | first call | (CPU) | trace | passes | codegen | Numba | "
        + " | ".join(f"of which {c}" for c in _NUMBA_COLUMNS)
        + " | host, guards, run | kernels (compiled, disk) |",
        "|---" * (10 + len(_NUMBA_COLUMNS)) + "|",
    ]
    for name in names:
        for state in STATES:
            s = summaries.get((label, name, state))
            if s is None:
                continue
            rest = s["first call"] - s["trace"] - s["passes"] - s["codegen"] - s["numba"]
            cells = [
                name,
                state,
                f"**{_ms(s['first call'])}**",
                _ms(s["first call cpu"]),
                _ms(s["trace"]),
                _ms(s["passes"]),
                _ms(s["codegen"]),
                _ms(s["numba"]),
                *(_ms(s.get(f"numba: {c}", 0.0)) for c in _NUMBA_COLUMNS),
                _ms(rest),
                f"{s['kernels']:.0f} ({s['kernel compiles']:.0f}, {s['disk hits']:.0f})",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def comparison_table(summaries: dict, names: list[str]) -> list[str]:
    """Before/after first calls per kernel (ms), when a baseline ran."""
    lines = [
        "| kernel | "
        + " | ".join(f"{state} {label}" for state in STATES for label in ("before", "after"))
        + " |",
        "|---" * (1 + 2 * len(STATES)) + "|",
    ]
    for name in names:
        cells = [name]
        for state in STATES:
            for label in ("before", "after"):
                s = summaries.get((label, name, state))
                cells.append(f"{_ms(s['first call'])} ({_ms(s['first call cpu'])})" if s else "n/a")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _cpu_pressure() -> str:
    from bench.vector_math import cpu_pressure

    return cpu_pressure()


def report(summaries: dict, names: list[str], rounds: int, baseline: bool) -> str:
    """The markdown section of bench/results.md."""
    after = [summaries[("after", n, s)] for n in names for s in STATES]
    imports = [(s["import numba"], s["import gcompile"]) for s in after]
    lines = [
        "## Compile time of the peer kernels (issue 12): `bench/compile_time.py`",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} cores; medians of {rounds} "
        "rounds, each measurement a new process run alone; CPU pressure (tasks waiting for a "
        f"core, last minute) at the end: {_cpu_pressure()}. `first`: empty `GCOMPILE_CACHE_DIR` "
        "and `NUMBA_CACHE_DIR` (the first kernel on a machine); `cold`: an empty "
        "`GCOMPILE_CACHE_DIR`, gcompile's helpers in Numba's cache (every later new kernel); "
        "`warm`: a new process with the `cold` directory. `first call` is the first call of "
        "`gcompile.compile(fn, fullgraph=True)` after `import gcompile` and after the inputs are "
        "built, so it includes running the kernel once (at these sizes, 10^6 elements or "
        "1024x1024, a few ms; the second call is in the raw output). Imports are apart: "
        f"`import numba` {_ms(statistics.median(i[0] for i in imports))} ms, then `import "
        f"gcompile` {_ms(statistics.median(i[1] for i in imports))} ms (medians over all "
        "processes). Targets: <= 1500 ms cold, <= 300 ms warm. Milliseconds, wall-clock "
        "(CPU in brackets).",
        "",
    ]
    if baseline:
        lines += ["### Before and after", "", *comparison_table(summaries, names), ""]
    lines += [
        "### Where the first call's time goes (after)",
        "",
        "`Numba` is the kernel loads/compiles (`cache.load`); its split comes from Numba's "
        "compiler events, each exclusive of the events nested in it: `target init` = Numba "
        "refreshing its typing and target contexts (the first time in a process it imports "
        "`numba.np.arraymath`, whose BLAS check imports `scipy.linalg`), `typing` = type inference, `IR inlining` = Numba-IR "
        "inlining passes, `lowering` = Numba IR to LLVM IR, `llvm` = time holding the LLVM lock "
        "(optimisation, machine code, cache load of object code). `host, guards, run` = the "
        "rest of the first call: the guard check, generating the host function and running it.",
        "",
        *phase_table(summaries, "after", names),
    ]
    if baseline:
        lines += ["", "### Before", "", *phase_table(summaries, "before", names)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="*", default=list(KERNELS), choices=list(KERNELS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="another checkout to measure alternately (before)")
    parser.add_argument("--output", default=str(ROOT / "bench" / "results.md"))
    parser.add_argument("--json", help="also write the medians here")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    roots = {"after": ROOT}
    if args.baseline:
        roots = {"before": Path(args.baseline).resolve(), "after": ROOT}
    summaries = measure(args.kernels, args.rounds, roots)
    if args.json:
        Path(args.json).write_text(
            json.dumps({" / ".join(k): v for k, v in summaries.items()}, indent=1)
        )
    text = report(summaries, args.kernels, args.rounds, args.baseline is not None)
    from bench.run import write_section

    write_section(Path(args.output), "compile", text)
    print(text)


if __name__ == "__main__" and "--child" in sys.argv:
    sys.path.insert(0, sys.argv[sys.argv.index("--root") + 1])
    # the kernels defined here are found as bench.compile_time, also under a baseline checkout
    sys.modules.setdefault("bench.compile_time", sys.modules["__main__"])
    print(json.dumps(_child(sys.argv[sys.argv.index("--child") + 1])))
elif __name__ == "__main__":
    main()
