"""gcompile's column of bench/loop_bench.py: each program in a subprocess of its own.

    python -m bench.loop_gcompile NAME SIZE [--rounds N]    # prints one JSON line

The subprocess imports gcompile from this checkout (not whatever the venv's editable install
points at), uses an empty kernel cache (``GCOMPILE_CACHE_DIR``) and is killed after the
parent's timeout, so a compile that hangs or unrolls without end is reported as "timeout".
Inside it: a warm-up compile of another function (gcompile's and Numba's start-up), the
timed first call of ``gcompile.compile(fn)`` on fresh inputs, its agreement with NumPy eager
(returned arrays and in-place updates), then NumPy and gcompile in interleaved rounds (fewer
when gcompile's calls would take over ``ROUNDS_BUDGET`` seconds). Address space is capped at
``MEMORY`` bytes, so a trace that grows without bound fails instead of swapping.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from bench.data_programs import PROGRAMS as DATA_PROGRAMS
from bench.loop_measure import QUICK, SEED, first_line, first_run, reference, timed_rounds
from bench.loop_programs import PROGRAMS as LOOP_PROGRAMS
from bench.loop_programs import Program

PROGRAMS = LOOP_PROGRAMS + DATA_PROGRAMS

ROOT = Path(__file__).resolve().parent.parent  # the checkout whose gcompile is measured
MEMORY = 8 << 30  # bytes of address space a subprocess may take
ROUNDS_BUDGET = 10.0  # seconds of compiled calls at most in the timed rounds


def _start_up(x):
    return np.exp(x) * 2.0 + 1.0


def measure(program: Program, args: tuple, rounds: int) -> dict:
    """gcompile's first call (after a warm-up compile), its agreement, and NumPy's and
    gcompile's medians from interleaved rounds."""
    import gcompile

    gcompile.compile(_start_up)(np.ones(1000))
    compiled = gcompile.compile(program.function)
    expected, _ = reference(program.function, args)
    first, error = first_run(compiled, args, expected)
    steady = first_run(compiled, args, expected)[0]  # a second call: no compile expected
    rounds = min(rounds, max(QUICK.floor, int(ROUNDS_BUDGET / max(steady, 1e-6))))
    times = timed_rounds({"numpy": program.function, "gcompile": compiled}, args, rounds)
    result = {"first_call": first, "error": error, "rounds": rounds, **times}
    return {**result, **eager_fallback(compiled)}


def eager_fallback(compiled) -> dict:
    """``{"eager": reason}`` when gcompile ran the program eagerly (a refusal or an internal
    error while compiling: ``gcompile.compile`` without ``fullgraph`` falls back), else {}.
    A refusal that broke the graph (compiled regions around the statement) is not eager."""
    from gcompile.capture.breaks import Split

    for entry in compiled.entries:
        reason = entry.refusal or entry.failure
        if reason is not None and (
            entry.failure or not isinstance(compiled.breaks.split(reason), Split)
        ):
            return {"eager": first_line(reason)}
    return {}


def child(name: str, size: str, rounds: int) -> dict:
    """One program at one size, or the failure: "refused" for gcompile's ``UnsupportedError``,
    "fails" for any other exception."""
    import resource

    from gcompile.errors import UnsupportedError

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    warnings.simplefilter("ignore")
    program = next(p for p in PROGRAMS if p.name == name)
    args = program.make_inputs(size, np.random.default_rng(SEED))
    try:
        return measure(program, args, rounds)
    except UnsupportedError as exc:
        return {"failure": f"refused: {first_line(str(exc))}"}
    except Exception as exc:
        return {"failure": f"fails: {first_line(exc)}"}


def in_subprocess(program: Program, size: str, rounds: int, timeout: float) -> dict:
    """This module's ``child`` in a new process with an empty kernel cache: its JSON result,
    or the failure ("timeout", a crash)."""
    command = [sys.executable, "-m", "bench.loop_gcompile", program.name, size]
    command += ["--rounds", str(rounds)]
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    with tempfile.TemporaryDirectory(prefix="loop-bench-gcompile-") as cache:
        env = {**os.environ, "GCOMPILE_CACHE_DIR": cache, "PYTHONPATH": path}
        try:
            done = subprocess.run(
                command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return {"failure": f"timeout (> {timeout:.0f} s)"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"failure": f"crashed: {last[:140]}"}
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="gcompile on one loop program (JSON line)")
    parser.add_argument("name", choices=[p.name for p in PROGRAMS])
    parser.add_argument("size", choices=["tiny", "small", "medium"])
    parser.add_argument("--rounds", type=int, default=QUICK.floor)
    args = parser.parse_args()
    result = child(args.name, args.size, args.rounds)
    import gcompile

    result["gcompile_module"] = gcompile.__file__
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
