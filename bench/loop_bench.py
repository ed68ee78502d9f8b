"""Loop programs (bench/loop_programs.py): NumPy eager against numba.njit, Pythran and gcompile.

    python bench/loop_bench.py                                  # every program, size small
    python bench/loop_bench.py --programs lu,adi --size small,medium --timeout 60
    python bench/loop_bench.py --no-gcompile --quick --json out.json
    python bench/loop_bench.py --results --note "..."           # also write bench/results.md

Flags: ``--suite loops|data`` (bench/loop_programs.py, or bench/data_programs.py: control
flow on the data; default loops), ``--programs a,b`` (default the suite's), ``--size`` tiny|small|medium or a comma list
(default small), ``--timeout S`` per gcompile subprocess (default 60), ``--pythran-timeout S``
per Pythran build (default 300), ``--no-numba``/``--no-pythran``/``--no-gcompile``,
``--quick`` (fewer rounds), ``--json PATH`` (raw figures), ``--results [PATH]`` (replace the
``<!-- loops:start -->``..``<!-- loops:end -->`` section of bench/results.md or PATH; without
it the table is only printed), ``--note TEXT`` (a paragraph for that section). On a shared
machine run it alone and with ``nice``.

Every program is one plain NumPy source, and each variant runs that very function:

- NumPy eager: the function itself; its results are the reference.
- numba: ``numba.njit(cache=False)`` of the function object (serial). First call = compile +
  run, after a warm-up compile of another function has paid for Numba's start-up.
- Pythran: the same source built ahead of time (bench/pythran_build.py, cached by source
  hash under ``~/.cache/gcompile-bench/pythran``). First call = build time (measured when it
  was built) + import + first run. Skipped, with the reason, when Pythran is not importable
  or the build fails.
- gcompile: ``gcompile.compile(fn)`` of this checkout in a subprocess with an empty kernel
  cache, killed after ``--timeout`` seconds (bench/loop_gcompile.py); its speed-up is NumPy's
  median over gcompile's from interleaved rounds in that subprocess. A call gcompile ran
  eagerly (its fallback on a refusal) is reported as such, not as a speed-up.

Agreement: every variant runs on fresh copies of the inputs; its returned arrays AND all array
arguments afterwards (in-place updates) are compared with NumPy eager's: largest absolute
difference over the largest magnitude, above 1e-6 (all programs are float64) wrong.

Timing (bench/loop_measure.py): each variant's first call is its warm-up; then medians over
interleaved rounds (the order rotating), as many as ``--quick``/default budget of NumPy time
per program asks (the minimum total time, within a floor and a ceiling of rounds), every call
on a copy of the inputs made before the timed region.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # for bench.*

import argparse  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

from bench import data_programs, loop_gcompile, loop_programs, pythran_build  # noqa: E402
from bench.loop_measure import (  # noqa: E402
    FULL,
    QUICK,
    SEED,
    TOLERANCE,
    Rounds,
    first_line,
    first_run,
    reference,
    timed_rounds,
)
from bench.loop_programs import SIZES, Program  # noqa: E402

# the suites: classic loop programs, and programs whose control flow depends on the data
SUITES = {"loops": loop_programs.PROGRAMS, "data": data_programs.PROGRAMS}
PROGRAMS = [p for programs in SUITES.values() for p in programs]
from bench.run import write_section  # noqa: E402
from bench.vector_math import cpu_pressure  # noqa: E402

ROOT = Path(__file__).resolve().parent
VARIANTS = ("numba", "pythran", "gcompile")
HEADINGS = {"numba": "numba", "pythran": "Pythran", "gcompile": "gcompile"}


@dataclass
class Outcome:
    """One variant on one program: steady-state median, first call, error against NumPy; or
    why there are no numbers (``failure``)."""

    seconds: float | None = None
    first_call: float | None = None
    error: float | None = None
    failure: str = ""
    numpy_seconds: float | None = None  # NumPy's median in the same rounds (gcompile's own)

    @property
    def correct(self) -> bool:
        return not self.failure and self.error is not None and self.error <= TOLERANCE


@dataclass
class Row:
    """One program at one size: NumPy eager's median and every variant's outcome."""

    program: str
    size: str
    inputs: str
    numpy_seconds: float
    outcomes: dict = field(default_factory=dict)

    def speedup(self, variant: str) -> float | None:
        """NumPy eager's median over the variant's, from the same rounds; None without numbers."""
        outcome = self.outcomes[variant]
        if outcome.seconds is None:
            return None
        return (outcome.numpy_seconds or self.numpy_seconds) / outcome.seconds


@dataclass
class Options:
    """What to run: the variants besides NumPy, the rounds, the timeouts."""

    variants: tuple
    rounds: Rounds
    timeout: float
    pythran_timeout: float


# -- the in-process variants ----------------------------------------------------------------------


def warm_up_numba() -> None:
    """Pay for Numba's start-up (LLVM, the typing machinery, its BLAS bindings for ``@``)
    before the first timed compile."""
    numba.njit(cache=False)(lambda x: np.exp(x) * 2.0 + x @ x)(np.ones(4))


def numba_variant(program: Program, args: tuple, expected: list) -> tuple[Outcome, Callable]:
    """``numba.njit(cache=False)`` of the program: its first call and agreement."""
    jitted = numba.njit(cache=False)(program.function)
    try:
        first, error = first_run(jitted, args, expected)
    except Exception as exc:  # Numba's typing and lowering errors
        return Outcome(failure=f"fails: {numba_reason(exc)}"), None
    return Outcome(first_call=first, error=error), jitted


def numba_reason(error: Exception) -> str:
    """Numba's messages open with the pipeline stage that failed; the cause comes later."""
    lines = [s.strip() for s in str(error).splitlines() if s.strip()]
    telling = [s for s in lines if not s.startswith("Failed in")]
    return f"{type(error).__name__}: {(telling or [''])[0][:120]}"


def pythran_variant(
    program: Program, args: tuple, expected: list, timeout: float
) -> tuple[Outcome, Callable]:
    """The Pythran build of the program: build + import + first call, and agreement."""
    try:
        built = pythran_build.compiled(program, timeout)
        first, error = first_run(built.function, args, expected)
    except pythran_build.BuildFailed as exc:
        return Outcome(failure=f"skipped: {exc}"), None
    except Exception as exc:  # an argument-conversion or run-time error
        return Outcome(failure=f"fails: {first_line(exc)}"), None
    total = built.build_seconds + built.import_seconds + first
    return Outcome(first_call=total, error=error), built.function


def gcompile_variant(program: Program, size: str, rounds: int, timeout: float) -> Outcome:
    """gcompile in its subprocess (bench/loop_gcompile.py)."""
    result = loop_gcompile.in_subprocess(program, size, rounds, timeout)
    if "failure" in result:
        return Outcome(failure=result["failure"])
    outcome = Outcome(result["gcompile"], result["first_call"], result["error"])
    outcome.numpy_seconds = result["numpy"]
    if "eager" in result:
        outcome.seconds, outcome.failure = None, f"ran eagerly: {result['eager']}"
    return outcome


# -- one program at one size ------------------------------------------------------------------------


def measure(program: Program, size: str, options: Options) -> Row:
    """First calls and agreement of every variant, then interleaved rounds of NumPy and the
    in-process variants that ran; gcompile in its subprocess."""
    args = program.make_inputs(size, np.random.default_rng(SEED))
    expected, numpy_first = reference(program.function, args)
    rounds = options.rounds.for_time(numpy_first)
    calls, outcomes = {"numpy": program.function}, {}
    if "numba" in options.variants:
        outcomes["numba"], calls["numba"] = numba_variant(program, args, expected)
    if "pythran" in options.variants:
        outcomes["pythran"], calls["pythran"] = pythran_variant(
            program, args, expected, options.pythran_timeout
        )
    times = timed_rounds({k: c for k, c in calls.items() if c is not None}, args, rounds)
    for name, outcome in outcomes.items():
        outcome.seconds = times.get(name)
    if "gcompile" in options.variants:
        outcomes["gcompile"] = gcompile_variant(program, size, rounds, options.timeout)
    return Row(program.name, size, describe_inputs(program, args), times["numpy"], outcomes)


def describe_inputs(program: Program, args: tuple) -> str:
    """The arguments by name: arrays by shape, scalars by value."""
    names = inspect.signature(program.function).parameters
    parts = []
    for name, value in zip(names, args):
        if isinstance(value, np.ndarray):
            parts.append(f"{name} {'x'.join(map(str, value.shape))}")
        else:
            parts.append(f"{name}={value}")
    return ", ".join(parts)


# -- the report -------------------------------------------------------------------------------------


def speedup_cell(row: Row, variant: str, notes: dict[str, list[str]]) -> str:
    """``1.23x`` (``**wrong**`` when it disagrees with NumPy), or the failure's kind with a
    numbered note below the table (one note per distinct failure, naming its programs)."""
    outcome = row.outcomes[variant]
    ratio = row.speedup(variant)
    if ratio is not None and not outcome.failure:
        return f"{ratio:.2f}x" + ("" if outcome.correct else " **wrong**")
    programs = notes.setdefault(f"{HEADINGS[variant]}: {outcome.failure}", [])
    programs.append(f"{row.program} ({row.size})")
    kind = outcome.failure.split(":")[0].split(" (")[0]
    return f"{kind} [{list(notes).index(f'{HEADINGS[variant]}: {outcome.failure}') + 1}]"


def first_calls_cell(row: Row, variants: tuple) -> str:
    values = [row.outcomes[v].first_call for v in variants]
    return " / ".join(f"{s:.2f}" if s is not None else "-" for s in values)


def correct_cell(row: Row, variants: tuple) -> str:
    """``yes`` when every variant that ran agreed with NumPy eager, else the ones that did not
    and their relative differences."""
    ran = [v for v in variants if row.outcomes[v].error is not None]
    wrong = [v for v in ran if not row.outcomes[v].error <= TOLERANCE]
    if not ran:
        return "-"
    if not wrong:
        return "yes"
    return "no: " + ", ".join(f"{HEADINGS[v]} {row.outcomes[v].error:.0e}" for v in wrong)


def geomean(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{math.exp(sum(math.log(v) for v in values) / len(values)):.2f}x"


def geomean_lines(rows: list[Row], variants: tuple) -> list[str]:
    """Two rows: each variant over the programs where it ran and agreed, then every variant
    over the programs where all of them did."""
    blanks = ["", ""]
    each = []
    for v in variants:
        good = [r.speedup(v) for r in rows if r.outcomes[v].correct]
        each.append(f"{geomean(good)} ({len(good)}/{len(rows)})")
    all_good = [r for r in rows if all(r.outcomes[v].correct for v in variants)]
    every = [geomean([r.speedup(v) for r in all_good]) for v in variants]
    first = ["**geomean**, each where it compiled and agreed", "", "", *each, *blanks]
    second = [f"**geomean**, the {len(all_good)} where all did", "", "", *every, *blanks]
    return ["| " + " | ".join(cells) + " |" for cells in (first, second)]


def table(rows: list[Row], variants: tuple) -> list[str]:
    """The markdown table, its geomeans, then the notes its failure cells point to."""
    names = [HEADINGS[v] for v in variants]
    header = ["program", "size", "NumPy ms", *(f"{n} x" for n in names)]
    header += [f"first call s ({' / '.join(names)})", "correct?"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    notes: dict[str, list[str]] = {}
    for row in rows:
        cells = [row.program, row.size, f"{row.numpy_seconds * 1e3:.3g}"]
        cells += [speedup_cell(row, v, notes) for v in variants]
        cells += [first_calls_cell(row, variants), correct_cell(row, variants)]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += geomean_lines(rows, variants) if variants else []
    footnotes = [f"[{i}] {n}: {', '.join(p)}  " for i, (n, p) in enumerate(notes.items(), 1)]
    return lines + [""] + footnotes


def versions(variants: tuple) -> str:
    parts = [f"numpy {np.__version__}", f"numba {numba.__version__}"]
    if "pythran" in variants:
        parts.append(f"pythran {pythran_build.version()} (compiler.blas={pythran_build.blas()})")
    if "gcompile" in variants:
        parts.append(f"gcompile at {git_commit()}")
    return ", ".join(parts)


def git_commit() -> str:
    """This checkout's commit (``+`` when it has uncommitted changes), for the report."""

    def git(*words: str) -> str:
        done = subprocess.run(["git", *words], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain") else "")


DESCRIPTIONS = {
    "numba": lambda o: "`numba.njit` (serial; first call = compile + run)",
    "pythran": lambda o: (
        f"Pythran built ahead of time (`{' '.join(pythran_build.FLAGS)}`; "
        "first call = build + import + first run, the build timed when it was built and cached)"
    ),
    "gcompile": lambda o: (
        "`gcompile.compile(fn)` in a subprocess with an empty kernel cache, "
        f"killed after {o.timeout:.0f} s"
    ),
}


def report(rows: list[Row], options: Options, command: str, notes: list[str]) -> str:
    """The markdown section of bench/results.md."""
    lines = [
        "## Loop programs: `bench/loop_bench.py`",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} cores, "
        f"{versions(options.variants)}, with `{command}`; CPU pressure (share of the last "
        f"minute some task waited for a core) at the end: {cpu_pressure()}.",
        "",
        "Each program (bench/loop_programs.py) is one NumPy source with Python loops, run by "
        "every variant: "
        + ", ".join(DESCRIPTIONS[v](options) for v in options.variants)
        + ". `x` = NumPy eager median / variant median from the same interleaved rounds, each "
        "call on its own copy of the inputs. `correct?`: returned arrays and in-place updates "
        f"within {TOLERANCE:g} (relative to the largest magnitude) of NumPy eager's.",
        *notes,
        "",
        *table(rows, options.variants),
    ]
    return "\n".join(lines).rstrip() + "\n"


def raw_figures(rows: list[Row], options: Options, command: str) -> dict:
    """Everything measured, for ``--json``."""
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "command": command,
        "versions": versions(options.variants),
        "rows": [
            {
                **{k: v for k, v in asdict(row).items() if k != "outcomes"},
                "variants": {
                    name: {**asdict(o), "speedup": row.speedup(name), "correct": o.correct}
                    for name, o in row.outcomes.items()
                },
            }
            for row in rows
        ],
    }


# -- main ----------------------------------------------------------------------------------------------


def comma_list(choices: tuple) -> Callable[[str], list[str]]:
    """An argparse type: a comma-separated list of ``choices``."""

    def parse(text: str) -> list[str]:
        values = [v.strip() for v in text.split(",") if v.strip()]
        unknown = [v for v in values if v not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown: {', '.join(unknown)}")
        return values

    return parse


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = tuple(p.name for p in PROGRAMS)
    parser.add_argument("--suite", choices=tuple(SUITES), default="loops")
    parser.add_argument("--programs", type=comma_list(names), help="default: the suite's")
    parser.add_argument("--size", type=comma_list(SIZES), default=["small"])
    parser.add_argument("--timeout", type=float, default=60.0, help="s per gcompile run")
    parser.add_argument("--pythran-timeout", type=float, default=300.0, help="s per build")
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    for variant in VARIANTS:
        parser.add_argument(f"--no-{variant}", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="write the raw figures here")
    parser.add_argument(
        "--results", nargs="?", const=str(ROOT / "results.md"), metavar="PATH",
        help="replace the loops section of bench/results.md (or PATH)",
    )  # fmt: skip
    parser.add_argument("--note", action="append", default=[], help="a paragraph for --results")
    return parser.parse_args(argv)


def chosen_variants(args: argparse.Namespace, notes: list[str]) -> tuple:
    """The variants to run besides NumPy; a note when Pythran is missing."""
    variants = tuple(v for v in VARIANTS if not getattr(args, f"no_{v}"))
    if "pythran" in variants and pythran_build.version() is None:
        notes.append("\nPythran is not importable (`pip install -e .[bench]`): no Pythran column.")
        variants = tuple(v for v in variants if v != "pythran")
    return variants


def command_line(argv: list[str]) -> str:
    """The command as the report shows it: ``--note`` texts (printed below it) elided."""
    shown = ["..." if i and argv[i - 1] == "--note" else a for i, a in enumerate(argv)]
    return "python " + shlex.join(["bench/loop_bench.py", *shown])


def progress_line(row: Row) -> str:
    cells = [f"{v} {row.outcomes[v].failure or speedup_cell(row, v, {})}" for v in row.outcomes]
    return f"{row.size} {row.program}: numpy {row.numpy_seconds * 1e3:.3g} ms, " + ", ".join(cells)


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(argv)
    warnings.simplefilter("ignore")  # NumbaPerformanceWarning on non-contiguous `@`
    notes = [f"\n{n}" for n in args.note]
    variants = chosen_variants(args, notes)
    rounds = QUICK if args.quick else FULL
    options = Options(variants, rounds, args.timeout, args.pythran_timeout)
    command = command_line(sys.argv[1:] if argv is None else argv)
    if "numba" in variants:
        warm_up_numba()
    chosen = args.programs or [p.name for p in SUITES[args.suite]]
    programs = [p for p in PROGRAMS if p.name in chosen]
    rows = []
    for size in args.size:
        for program in programs:
            rows.append(measure(program, size, options))
            print(progress_line(rows[-1]), file=sys.stderr, flush=True)
    text = report(rows, options, command, notes)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(raw_figures(rows, options, command), indent=1))
    if args.results:
        write_section(Path(args.results), args.suite, text)


if __name__ == "__main__":
    main()
