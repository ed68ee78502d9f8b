"""Random loop programs (``tests/loop_fuzz.py``): compiled agrees with eager NumPy on results and
on the final state of every array argument, or falls back with a stated refusal.

Two quick, derandomized runs for CI (the same programs on every run): 100 programs on the
interpreter backend here and 25 on Numba in ``tests/test_loop_fuzz_numba.py`` (each a Numba
compile, cached on disk between runs; a file of its own, so that the two runs, among the
slowest of the suite, can go to different pytest-xdist workers). They do
not shrink (minutes per failure on these programs): a failure reports its whole program, which
the sweep below, or a hand edit, shrinks. The
larger sweep is marked ``fuzz`` and skipped unless ``GCOMPILE_FUZZ`` is set:

    GCOMPILE_FUZZ=1 python -m pytest tests/test_loop_fuzz.py tests/test_loop_fuzz_numba.py -m fuzz

(``GCOMPILE_FUZZ=<n>`` with a number sets its example count: 2000 by default on the interpreter,
a tenth of that on Numba; it draws new programs on each run unless the CI profile is loaded).
``bench/fuzz_loops.py`` runs thousands of programs outside pytest and tallies the outcomes.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, settings

from tests.loop_fuzz import EagerError, check_case, loop_cases

FUZZ = os.environ.get("GCOMPILE_FUZZ")
FUZZ_COUNT = int(FUZZ) if FUZZ and FUZZ.isdigit() and int(FUZZ) > 1 else 2000
QUICK = dict(
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the failure shows its whole program
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def run(case, backend):
    try:
        outcome = check_case(case, backend)
    except EagerError as error:
        assume(False)  # the program raises in NumPy itself: nothing to compare
        raise AssertionError("unreachable") from error
    if outcome.fallback:
        event(f"fallback: {outcome.fallback}")
    else:
        event("compiled")
    for message in outcome.warnings:
        event(f"interpreted: {message.split('runs in the interpreter: ')[-1]}")
    for note in outcome.loops:
        event(f"loop {re.sub(r'[0-9]+', 'N', note)}")


@settings(max_examples=40, **QUICK)
@given(loop_cases())
def test_random_loop_programs_interpreter(case):
    run(case, "interpreter")


fuzz = pytest.mark.skipif(FUZZ is None, reason="set GCOMPILE_FUZZ=1 (or a count) to run the sweep")


@pytest.mark.fuzz
@fuzz
@settings(max_examples=FUZZ_COUNT, deadline=None, suppress_health_check=list(HealthCheck))
@given(loop_cases())
def test_random_loop_programs_sweep_interpreter(case):
    run(case, "interpreter")
