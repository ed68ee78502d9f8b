"""Loading an exported function against compiling it from source, each in a new process.

    python bench/export_load.py [--rounds 3] [--functions chain stencil loop]

For each function, new Python processes (one at a time) time, after the imports of NumPy,
Numba and gcompile (the same for every side, reported apart), either (a) the first call of
``gcompile.compile(fn)`` on the function's source, or (b) ``gcompile.load(archive)`` and the
first call of what it returns, or (c) the same with ``trust_machine_code=True`` (the archive's
machine code run, nothing compiled). Ratios are to (a) in an empty cache, the cold first call.
Two cache states: ``empty``, a new ``GCOMPILE_CACHE_DIR`` for
each process (gcompile's generated kernels and Numba's machine code for them are compiled
anew; Numba's cache of gcompile's own helpers stays, as after any earlier use), and ``warm``,
one directory that a run of the same side filled before. The archives are exported once, by a
process with a cache directory of its own. Medians over the rounds, in seconds.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402  (before the timed imports: the user's program has it already)

ROOT = Path(_HERE).parent


def chain(x, y):
    """An elementwise chain of transcendental steps."""
    a = np.exp(-x * x) * np.sin(y)
    b = np.log1p(np.abs(x * y)) + np.sqrt(x * x + y * y)
    return np.tanh(a - b) * 0.5 + np.cos(a * b)


def stencil(u, dt):
    """One explicit step of 2-D heat diffusion, edges held."""
    out = u.copy()
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
    out[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * lap
    return out


def loop(u, weight: float, passes: int):
    """``passes`` rounds of a three-point smoothing of ``u``'s interior (a loop program)."""
    out = u.copy()
    for _ in range(passes):
        out[1:-1] = (1.0 - 2.0 * weight) * out[1:-1] + weight * (out[:-2] + out[2:])
    return out


def inputs(name: str) -> tuple:
    """The arguments of function ``name``."""
    rng = np.random.default_rng(0)
    if name == "chain":
        return rng.standard_normal(100_000), rng.standard_normal(100_000)
    if name == "stencil":
        return rng.random((300, 300)), 0.1
    return rng.random(100_000), 0.25, 5


FUNCTIONS = {"chain": chain, "stencil": stencil, "loop": loop}
SIDES = ("source", "load", "trusted")


# -- the child processes ----------------------------------------------------------------------


def _child(side: str, name: str, archive: str) -> dict:
    """In a new process: the imports' time, then the first call's (``source``), or load and
    the first call's (``load``, ``trusted``), or the export's (``export``)."""
    start = time.perf_counter()
    import numba  # noqa: F401

    import gcompile

    imports = time.perf_counter() - start
    args = inputs(name)
    start = time.perf_counter()
    if side == "export":
        gcompile.export(FUNCTIONS[name], *args, path=archive)
    elif side == "source":
        gcompile.compile(FUNCTIONS[name])(*args)
    else:
        gcompile.load(archive, trust_machine_code=side == "trusted")(*args)
    return {"imports": imports, "first": time.perf_counter() - start}


def _spawn(side: str, name: str, archive: Path, cache: Path) -> dict:
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GCOMPILE_CACHE_DIR": str(cache),
        "PYTHONWARNINGS": "ignore",
    }
    command = [sys.executable, __file__, "--child", side, name, str(archive)]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


# -- the parent -------------------------------------------------------------------------------


def measure(name: str, archive: Path, folder: Path, rounds: int) -> dict:
    """Median seconds of both sides in both cache states, and of the imports."""
    times: dict = {}
    warm = {side: folder / f"warm-{name}-{side}" for side in SIDES}
    for side in SIDES:
        _spawn(side, name, archive, warm[side])  # (fills the warm directory)
    for round_ in range(rounds):
        for side in SIDES:
            empty = folder / f"empty-{name}-{side}-{round_}"
            for state, cache in (("empty", empty), ("warm", warm[side])):
                result = _spawn(side, name, archive, cache)
                times.setdefault((state, side), []).append(result["first"])
                times.setdefault("imports", []).append(result["imports"])
    return {key: statistics.median(values) for key, values in times.items()}


def _report(name: str, times: dict) -> None:
    cold = times[("empty", "source")]
    print(f"{name}: imports {times['imports']:.3f} s; ratios to the cold first call {cold:.3f} s")
    for state in ("warm", "empty"):
        source, load, trusted = (times[(state, side)] for side in SIDES)
        print(
            f"  {state:5} cache: compile + first call {source:.3f} s ({source / cold:.2f}), "
            f"load + first call {load:.3f} s ({load / cold:.2f}), "
            f"trusted load + first call {trusted:.3f} s ({trusted / cold:.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=FUNCTIONS)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gcompile-export-bench-") as folder:
        folder = Path(folder)
        for name in options.functions:
            archive = folder / f"{name}.gcx"
            _spawn("export", name, archive, folder / "export-cache")
            _report(name, measure(name, archive, folder, options.rounds))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(_child(*sys.argv[2:5])))
    else:
        main()
