"""Pythran builds of the loop programs for bench/loop_bench.py: ahead of time, cached by source.

A program's own source goes into a module of its own under a ``#pythran export
name(signature)`` line and is built by ``python -m pythran.run -O3 -march=native --config
compiler.blas=...`` into ``~/.cache/gcompile-bench/pythran/NAME-HASH/`` (``$XDG_CACHE_HOME``
honoured). The hash covers the module source, the flags and Pythran's version, so an edited
program is rebuilt and an unchanged one is not. ``build.json`` beside the ``.so`` records the
build time measured when it was built, or the build's error (a failed build is remembered too;
a build that timed out is not, it may pass next time).

BLAS: Pythran's ``np.dot``/``@`` include ``cblas.h``, which the OS does not provide here. The
``bench`` extra installs ``scipy-openblas64`` (OpenBLAS with its headers, the build NumPy's
wheel bundles), which Pythran 0.19 supports as ``compiler.blas=scipy-openblas``; no
``~/.pythranrc`` is needed. Without it the builds use ``compiler.blas=none`` and the programs
using ``@`` fail with Pythran's "configured without BLAS" error. Pythran 0.19 pins
``setuptools<60`` on Python < 3.12 (it builds through distutils).
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bench.loop_programs import Program

FLAGS = ("-O3", "-march=native")


class BuildFailed(Exception):
    """A Pythran build (or the import of its module) failed; the message says why."""


@dataclass(frozen=True)
class Built:
    """A program's compiled function and the seconds its build took (measured when built)."""

    function: Callable
    build_seconds: float
    import_seconds: float
    cached: bool


def version() -> str | None:
    """Pythran's version, or None when it is not importable."""
    try:
        import pythran
    except ImportError:
        return None
    return pythran.__version__


def blas() -> str:
    """Pythran's BLAS setting: SciPy's OpenBLAS wheel when installed (its headers included)."""
    return "scipy-openblas" if importlib.util.find_spec("scipy_openblas64") else "none"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "gcompile-bench" / "pythran"


def command() -> list[str]:
    """The build command, less its output and input files."""
    return [sys.executable, "-m", "pythran.run", *FLAGS, "--config", f"compiler.blas={blas()}"]


def module_source(program: Program) -> str:
    """The program's own source as a Pythran module exporting it."""
    return (
        f"#pythran export {program.name}({program.pythran_signature})\n"
        "import numpy as np\n\n\n" + inspect.getsource(program.function)
    )


def build_directory(program: Program) -> Path:
    """Where the program's build lives: its name and a hash of everything the build depends on
    (the interpreter path excluded, so the key survives a moved venv)."""
    key_text = "\n".join([module_source(program), *command()[3:], version() or ""])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:12]
    return cache_root() / f"{program.name}-{key}"


def build(program: Program, timeout: float) -> tuple[Path, dict, bool]:
    """The build directory, its ``build.json`` record (``seconds`` and ``module``, or
    ``error``) and whether it came from the cache; builds unless an identical build is cached."""
    directory = build_directory(program)
    record_path = directory / "build.json"
    if record_path.exists():
        return directory, json.loads(record_path.read_text()), True
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"{program.name}.py"
    source.write_text(module_source(program))
    output = directory / f"{directory.name.replace('-', '_')}.so"
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [*command(), "-o", str(output), str(source)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return directory, {"error": f"build timeout (> {timeout:.0f} s)"}, False
    record = {"seconds": time.perf_counter() - start, "module": output.name}
    if done.returncode != 0:
        record = {"error": failure_reason(done.stderr)}
    record_path.write_text(json.dumps(record, indent=1))
    return directory, record, False


def failure_reason(stderr: str) -> str:
    """The telling line of a failed build: the compiler's first error, else Pythran's."""
    lines = [s.strip() for s in stderr.splitlines() if s.strip()]
    errors = [s for s in lines if "error" in s.lower() and not s.startswith("WARNING")]
    return (errors or lines or ["unknown error"])[0][:140]


def load_module(path: Path):
    """Import an extension module from its file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compiled(program: Program, timeout: float) -> Built:
    """The program built by Pythran and imported; ``BuildFailed`` when Pythran is missing, the
    build fails or times out, or its module does not import."""
    if version() is None:
        raise BuildFailed("pythran is not importable (`pip install -e .[bench]`)")
    directory, record, cached = build(program, timeout)
    if "error" in record:
        raise BuildFailed(record["error"])
    start = time.perf_counter()
    try:
        function = getattr(load_module(directory / record["module"]), program.name)
    except Exception as exc:  # ImportError, a missing symbol
        raise BuildFailed(f"import: {type(exc).__name__}: {exc}"[:140]) from exc
    return Built(function, record["seconds"], time.perf_counter() - start, cached)
