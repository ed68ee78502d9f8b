"""The tolerance of ``check`` where a program cancels: derived from the terms, not fixed ulps."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest

from tests.error_bounds import bounds
from tests.support import NUMBA_ULPS, assert_same_value


def cancelling_terms(seed: int = 5) -> np.ndarray:
    """2000 terms of size about 1 whose sum is about 1e-13: each order of summation rounds
    differently, by many ulps of the sum."""
    r = np.random.default_rng(seed)
    half = r.standard_normal(1000)
    terms = np.concatenate([half, -half * (1 + 1e-13)])
    r.shuffle(terms)
    return terms


def orders_of_summation(terms: np.ndarray) -> dict:
    values = terms.tolist()
    return {
        "forward": sum(values),
        "backward": sum(reversed(values)),
        "by magnitude": sum(sorted(values, key=abs)),
        "largest first": sum(sorted(values, key=abs, reverse=True)),
        "correctly rounded": math.fsum(values),
    }


def total(x):
    return np.sum(x)


def test_a_cancelling_sum_accepts_every_order_of_summation():
    terms = cancelling_terms()
    expected = np.sum(terms)
    bound, _, _ = bounds(total, (terms,), {})
    sums = orders_of_summation(terms)
    allowed = NUMBA_ULPS * np.spacing(abs(expected))
    far = [name for name, value in sums.items() if abs(value - expected) > allowed]
    assert far  # the fixed ulp rule alone rejects these valid answers...
    for name, value in sums.items():
        with pytest.raises(AssertionError) if name in far else contextlib.nullcontext():
            assert_same_value(expected, np.float64(value), NUMBA_ULPS, name)
        # ...the bound accepts them all
        assert_same_value(expected, np.float64(value), NUMBA_ULPS, name, bound=bound)


def test_the_bound_still_rejects_a_wrong_sum():
    terms = cancelling_terms()
    bound, _, _ = bounds(total, (terms,), {})
    for wrong in (np.sum(terms[1:]), np.sum(terms) + 1e-8):
        with pytest.raises(AssertionError, match="ulp apart"):
            assert_same_value(np.sum(terms), np.float64(wrong), NUMBA_ULPS, bound=bound)


def test_without_cancellation_the_fixed_rule_stays():
    x = np.linspace(1.0, 2.0, 50)
    result, (after,), _ = bounds(lambda a: np.sum(np.exp(a) * 2.0 + a), (x,), {})
    assert np.isnan(result) and np.isnan(after).all()


def test_the_bound_follows_a_cancellation_through_functions_into_mutated_arguments():
    def step(params, x):
        centred = x - np.mean(x)  # cancels: the values are close to their mean
        params["b"] -= 0.5 * np.sum(np.exp(centred) - 1.0)  # cancels again: exp(c) is near 1
        return np.tan(centred)  # no rule for tan of an inexact argument: no bound

    x = 1.0 + np.linspace(0.0, 1e-6, 40)
    result, (params, after_x), _ = bounds(step, ({"b": np.zeros(1)}, x), {})
    eager = {"b": np.zeros(1)}
    step(eager, x.copy())
    assert np.isnan(result).all()
    assert np.isnan(after_x).all()  # not written: compared exactly
    b = params["b"][0]
    assert b < 40 * 32 * np.spacing(1.0)  # a few ulps of each of the 40 terms of size 1...
    assert b > 1e3 * np.spacing(abs(eager["b"][0]))  # ...many ulps of the result


def test_a_value_computed_from_exact_inputs_by_an_op_without_a_rule_gets_a_few_ulps():
    x = np.array([0.5, -1.25, 3.0])
    result, _, _ = bounds(lambda a: np.sum(np.tan(a)) - np.tan(a[0]) - np.tan(a[1]), (x,), {})
    tan = np.abs(np.tan(x))
    assert np.isfinite(result) and result < 100 * np.spacing(tan.max())
