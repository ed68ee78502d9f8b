"""Ship a compiled function: export it in this process, load and run it in another one.

``gcompile.export(fn, *example_args, path=...)`` writes one file holding the compiled graph,
the generated code, the guards and the kernels' machine code. The other process has neither
this file's source nor a tracer: ``gcompile.load(path)`` checks the archive, compiles its
kernels from the stored source (or loads their machine code from the disk cache), and calls
run them straight. ``gcompile.load(path, trust_machine_code=True)`` runs the archive's machine
code instead, with nothing to compile even on a machine with an empty cache (for files you
trust only: nothing can check what machine code does).

    python examples/export_load.py

prints what each loading process computed and whether it equals NumPy's result here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import gcompile

# The other process: only gcompile and the archive, no source of ``smooth``.
LOADER = """
import sys, time
import numpy as np
import gcompile

trust = sys.argv[4] == "trusted"
start = time.perf_counter()
smooth = gcompile.load(sys.argv[1], trust_machine_code=trust)
u = np.load(sys.argv[2])
result = smooth(u, 0.25, 3)
print(f"load ({sys.argv[4]}) and first call: {time.perf_counter() - start:.3f} s", file=sys.stderr)
np.save(sys.argv[3], result)
print("kernels:", smooth.kernels)
# Machine code (the archive's, or the disk cache's) needs no compiler: Numba's is set up only
# when compiling.
print("compiler set up:", "numba.np.arraymath" in sys.modules)
"""


def smooth(u, weight: float, passes: int):
    """``passes`` rounds of a three-point smoothing of ``u``'s interior, ends held."""
    out = u.copy()
    for _ in range(passes):
        out[1:-1] = (1.0 - 2.0 * weight) * out[1:-1] + weight * (out[:-2] + out[2:])
    return out


def example_inputs(n: int = 100_000):
    """A noisy ramp of ``n`` points; weight 0.25, three passes."""
    rng = np.random.default_rng(0)
    return np.linspace(0.0, 1.0, n) + 0.1 * rng.standard_normal(n), 0.25, 3


def round_trip(
    folder: Path, n: int = 1_000, trusted: bool = False
) -> tuple[np.ndarray, np.ndarray, str]:
    """Export ``smooth`` into ``folder``, run it in a fresh Python process on new data (of
    another size than the example's), and return (that result, NumPy's here, what the process
    printed). ``trusted``: the process loads the archive's machine code, with a cache of its
    own that is empty (as on another machine); else it compiles the stored sources, sharing
    this process's cache."""
    archive = folder / "smooth.gcx"
    if not archive.exists():
        gcompile.export(smooth, *example_inputs(64), path=archive)
    u = example_inputs(n)[0]
    np.save(folder / "u.npy", u)
    package = Path(gcompile.__file__).resolve().parents[1]
    environment = {**os.environ, "PYTHONPATH": str(package)}
    if trusted:
        environment["GCOMPILE_CACHE_DIR"] = tempfile.mkdtemp(dir=folder, prefix="empty-cache-")
    mode = "trusted" if trusted else "default"
    command = [sys.executable, "-c", LOADER, str(archive), str(folder / "u.npy")]
    done = subprocess.run(
        [*command, str(folder / "out.npy"), mode],
        check=True,
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
    )
    return np.load(folder / "out.npy"), smooth(u, 0.25, 3), done.stdout + done.stderr


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        for trusted in (False, True):
            start = time.perf_counter()
            loaded, eager, report = round_trip(Path(folder), n=1_000_000, trusted=trusted)
            took = time.perf_counter() - start
            print(f"exported, loaded and run in another process in {took:.2f} s")
            print(report, end="")
            print("equal to NumPy:", np.allclose(loaded, eager, rtol=1e-12, atol=0))
