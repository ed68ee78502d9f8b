"""Differential fuzzing of random loop programs, outside pytest: compiled against eager NumPy.

    python bench/fuzz_loops.py [--count 10000] [--backend interpreter|numba|both]
                               [--numba-sample 100] [--seed 0] [--out FILE] [--no-shrink]

Programs come from ``tests/loop_fuzz.py`` (``loop_cases``: loops over views of the arguments and
of locals, in-place updates through views and bases, reductions carried through loops); each is
checked by ``check_case``: results and the final state of every array argument, within the
tolerance that module's docstring derives, and a fallback must carry a stated refusal.

Cost: the interpreter backend checks a program in ~0.1 s (trace, passes, verification), but
the Numba backend
compiles every program (0.3-1 s each: a new program is new code, the disk cache only helps on a
rerun with the same seed). So ``--backend interpreter`` (the default) checks all ``--count``
programs with the interpreter; ``--backend both`` checks all of them with the interpreter and
an evenly spread sample of ``--numba-sample`` of them with Numba too; ``--backend numba`` checks
``--count`` programs with Numba alone (keep the count small). Measured on 2 busy cores: 2000
programs on the interpreter take ~4 minutes (10,000: ~20 minutes), 100 on Numba 1-2 minutes.

Prints progress, then the number of programs checked per backend, mismatches, internal errors
(a warning containing "a gcompile bug", or the compiled call raising what eager does not),
fallbacks by refused construct, programs skipped because eager NumPy raised, and the loops the
tracer unrolled instead of capturing. Sources of mismatches and internal errors go to ``--out``,
grouped by kind, the first of each kind shrunk by ``loop_fuzz.shrink`` (whole statements
dropped, loops cut to one trip; ``--no-shrink`` skips it).
Exits 1 if any program failed.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault(
    "GCOMPILE_VERIFY", "1"
)  # verify every graph after every pass, as the tests do
os.environ.setdefault(
    "GCOMPILE_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"gcompile-fuzz-{os.getuid()}")
)

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.loop_fuzz import (  # noqa: E402
    EagerError,
    ProgramFailure,
    check_case,
    loop_cases,
    shrink,
    signature,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=10000, help="programs to generate")
    parser.add_argument(
        "--backend", choices=("interpreter", "numba", "both"), default="interpreter"
    )
    parser.add_argument(
        "--numba-sample", type=int, default=100, help="with --backend both: programs run on Numba"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        default=os.path.join(tempfile.gettempdir(), "gcompile-fuzz-loops-failures.txt"),
        help="where the sources of failing programs go",
    )
    parser.add_argument(
        "--no-shrink", dest="shrink", action="store_false", help="write failing programs as found"
    )
    options = parser.parse_args(argv)

    backends = {
        "interpreter": ("interpreter",),
        "numba": ("numba",),
        "both": ("interpreter", "numba"),
    }
    chosen = backends[options.backend]
    every = max(1, options.count // max(1, options.numba_sample))
    checked = collections.Counter()
    seconds = collections.Counter()
    failures: list = []  # (backend, kind, detail, source)
    fallbacks = collections.Counter()
    unrolled = collections.Counter()
    interpreted = collections.Counter()  # kernels or loops left to the interpreter, by reason
    skipped = collections.Counter()
    scales: list = []  # the largest magnitude each eager run held
    index = [0]
    start = time.perf_counter()

    @seed(options.seed)
    @settings(
        max_examples=options.count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(loop_cases())
    def run(case):
        i = index[0]
        index[0] += 1
        for backend in chosen:
            if backend == "numba" and options.backend == "both" and i % every:
                continue
            began = time.perf_counter()
            try:
                outcome = check_case(case, backend)
            except EagerError as error:
                skipped[str(error).split(":")[0]] += 1
                break
            except ProgramFailure as failure:
                failures.append((backend, failure, case))
                continue
            finally:
                seconds[backend] += time.perf_counter() - began
            checked[backend] += 1
            scales.append(outcome.scale)
            if outcome.fallback:
                fallbacks[(backend, outcome.fallback)] += 1
            for message in outcome.warnings:
                reason = message.split("runs in the interpreter: ")[-1].split("\n")[0]
                interpreted[(backend, re.sub(r"\d+", "N", reason))] += 1
            for note in outcome.loops:
                if note != "rolled":
                    unrolled[re.sub(r"'\w+'", "'NAME'", re.sub(r"\d+", "N", note))] += 1
        if index[0] % 100 == 0:
            elapsed = time.perf_counter() - start
            print(
                f"{index[0]} programs, {dict(checked)} checked, {len(failures)} failing, "
                f"{sum(fallbacks.values())} fallbacks, {elapsed:.0f} s",
                flush=True,
            )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        run()
    elapsed = time.perf_counter() - start

    print(f"\n{index[0]} programs generated in {elapsed:.1f} s (seed {options.seed})")
    for backend in chosen:
        print(f"  {backend}: {checked[backend]} checked, {seconds[backend]:.1f} s")
    print(f"  skipped (eager NumPy raised): {sum(skipped.values())} {dict(skipped)}")
    if scales:
        print(
            f"  value scale of the programs: median {np.median(scales):.3g}, max {max(scales):.3g}"
            f" ({sum(s > 1e6 for s in scales)} above 1e6)"
        )
    kinds = collections.Counter((b, f.kind) for b, f, _ in failures)
    print(f"  failures: {len(failures)} {dict(kinds)}")
    print(f"  fallbacks: {sum(fallbacks.values())}")
    for (backend, reason), count in fallbacks.most_common():
        print(f"    {count:5d} {backend}: {reason}")
    print(f"  parts left to the interpreter (stated, not failures): {sum(interpreted.values())}")
    for (backend, reason), count in interpreted.most_common():
        print(f"    {count:5d} {backend}: {reason}")
    print(f"  loops unrolled by the tracer (not failures): {sum(unrolled.values())}")
    for reason, count in unrolled.most_common(10):
        print(f"    {count:5d} {reason}")
    if failures:
        distinct: dict = {}
        for backend, failure, case in failures:
            distinct.setdefault((backend, signature(failure)), []).append((failure, case))
        with open(options.out, "w") as out:
            for (backend, sig), found in distinct.items():
                print(f"    {len(found):5d} {backend} {sig}")
                failure, case = found[0]
                out.write(f"### {len(found)} x {backend} {sig}\n\n")
                if options.shrink:
                    began = time.perf_counter()
                    small = shrink(case, backend, failure)
                    out.write(f"shrunk ({time.perf_counter() - began:.0f} s):\n{small!r}\n\n")
                for failure, case in found:
                    out.write(f"{failure}\n{case!r}\n\n")
        print(
            f"  sources written to {options.out}"
            + (" (each kind shrunk first)" if options.shrink else "")
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
