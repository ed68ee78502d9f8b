"""Black–Scholes option pricing: call and put prices for a book of European options.

Run it to see gcompile's eager-vs-compiled report:

    python examples/black_scholes.py
"""

from __future__ import annotations

import numpy as np

import gcompile


def norm_cdf(z):
    """Standard normal CDF through an erf approximation (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7)."""
    x = z / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = (
        (((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t
    erf = np.sign(x) * (1.0 - poly * np.exp(-x * x))
    return 0.5 * (1.0 + erf)


def black_scholes(spot, strike, years, rate: float, vol: float):
    """Prices of European call and put options."""
    sqrt_t = np.sqrt(years)
    d1 = (np.log(spot / strike) + (rate + 0.5 * vol * vol) * years) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    discount = np.exp(-rate * years)
    call = spot * norm_cdf(d1) - strike * discount * norm_cdf(d2)
    put = call - spot + strike * discount  # put-call parity
    return call, put


def example_inputs(n: int = 1_000_000):
    """A book of ``n`` options with random spots, strikes and maturities."""
    rng = np.random.default_rng(42)
    spot = rng.uniform(50.0, 150.0, n)
    strike = rng.uniform(50.0, 150.0, n)
    years = rng.uniform(0.1, 3.0, n)
    return spot, strike, years, 0.03, 0.25


if __name__ == "__main__":
    print(gcompile.compare(black_scholes, *example_inputs(), repeat=10))
