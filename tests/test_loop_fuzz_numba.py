"""Random loop programs (``tests/loop_fuzz.py``) on the Numba backend: the quick CI run and the
sweep of ``tests/test_loop_fuzz.py`` (its docstring tells what they check), in a file of their
own so that pytest-xdist (``--dist loadfile``) can run them beside the interpreter's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.loop_fuzz import loop_cases
from tests.test_loop_fuzz import FUZZ_COUNT, QUICK, fuzz, run


@settings(max_examples=9, **QUICK)
@given(loop_cases())
def test_random_loop_programs_numba(case):
    run(case, "numba")


@pytest.mark.fuzz
@fuzz
@settings(
    max_examples=max(1, FUZZ_COUNT // 10), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(loop_cases())
def test_random_loop_programs_sweep_numba(case):
    run(case, "numba")
