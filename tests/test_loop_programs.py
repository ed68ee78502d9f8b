"""The loop programs of bench/loop_programs.py and bench/data_programs.py run eagerly, deterministically, on the argument
types their Pythran signatures document, and compute what their docstrings say. No gcompile
compilation here: the programs are plain NumPy."""

import re

import numpy as np
import pytest

from bench import data_programs, loop_programs
from bench.loop_programs import SIZES

PROGRAMS = loop_programs.PROGRAMS + data_programs.PROGRAMS

BY_NAME = {p.name: p for p in PROGRAMS}


def _fresh(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _run(program, args):
    """The program on copies of ``args``: its returned arrays, then its array arguments."""
    copies = _fresh(args)
    returned = program.function(*copies)
    values = returned if isinstance(returned, tuple) else (returned,)
    return [v for v in values if v is not None] + [a for a in copies if isinstance(a, np.ndarray)]


def _check_type(value, declared: str) -> None:
    """``value`` is what a Pythran signature entry promises (see ``Program``)."""
    if declared == "int":
        assert type(value) is int
    elif declared == "float":
        assert type(value) is float
    else:
        dtype = declared.split("[")[0]
        assert isinstance(value, np.ndarray) and value.dtype == np.dtype(dtype)
        assert value.ndim == declared.count(":") and value.flags.c_contiguous


def test_names_are_unique_and_every_program_has_every_size():
    assert len(BY_NAME) == len(PROGRAMS)
    assert all(set(p.sizes) == set(SIZES) for p in PROGRAMS)


@pytest.mark.parametrize("size", ["tiny", "small"])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_inputs_have_the_signature_types(program, size):
    args = program.make_inputs(size, np.random.default_rng(0))
    declared = re.findall(r"\w+\[[:,]*\]|int|float", program.pythran_signature)
    assert len(declared) == len(args)
    for value, entry in zip(args, declared):
        _check_type(value, entry)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_runs_eagerly_and_deterministically(program):
    args = program.make_inputs("small", np.random.default_rng(0))
    first, second = _run(program, args), _run(program, args)
    assert len(first) == len(second) > 0
    for a, b in zip(first, second):
        assert np.array_equal(a, b)
        assert np.all(np.isfinite(a))


def _small(name):
    return BY_NAME[name].make_inputs("small", np.random.default_rng(1))


def test_lu_and_cholesky_factor_their_input():
    (A,) = _small("lu")
    lu = _run(BY_NAME["lu"], (A,))[0]
    L = np.tril(lu, -1) + np.eye(len(A))
    np.testing.assert_allclose(L @ np.triu(lu), A, rtol=1e-12, atol=1e-12)
    (S,) = _small("cholesky")
    L = np.tril(_run(BY_NAME["cholesky"], (S,))[0])
    np.testing.assert_allclose(L @ L.T, S, rtol=1e-12, atol=1e-12)


def test_solves_solve():
    L, b = _small("forward_substitution")
    x = _run(BY_NAME["forward_substitution"], (L, b))[0]
    np.testing.assert_allclose(L @ x, b, atol=1e-12)
    U, b = _small("back_substitution")
    x = _run(BY_NAME["back_substitution"], (U, b))[1]  # written into b
    np.testing.assert_allclose(U @ x, b, atol=1e-12)
    r, b = _small("levinson_durbin")
    n = len(b)
    toeplitz = r[np.abs(np.subtract.outer(np.arange(n), np.arange(n)))]
    x = _run(BY_NAME["levinson_durbin"], (r, b))[0]
    np.testing.assert_allclose(toeplitz @ x, b, atol=1e-12)


def test_gram_schmidt_is_a_qr_factorisation():
    (A,) = _small("gram_schmidt")
    Q, R = _run(BY_NAME["gram_schmidt"], (A,))[:2]
    np.testing.assert_allclose(Q @ R, A, atol=1e-12)
    np.testing.assert_allclose(Q.T @ Q, np.eye(A.shape[1]), atol=1e-12)
    assert np.array_equal(R, np.triu(R))


def test_rank_updates_and_triangular_multiply():
    C, A, alpha, beta = _small("syrk")
    out = _run(BY_NAME["syrk"], (C, A, alpha, beta))[0]
    np.testing.assert_allclose(np.tril(out), np.tril(alpha * A @ A.T + beta * C), rtol=1e-12)
    assert np.array_equal(np.triu(out, 1), np.triu(C, 1))
    C, A, B, alpha, beta = _small("syr2k")
    out = _run(BY_NAME["syr2k"], (C, A, B, alpha, beta))[0]
    expected = alpha * (A @ B.T + B @ A.T) + beta * C
    np.testing.assert_allclose(np.tril(out), np.tril(expected), rtol=1e-12)
    L, B, alpha = _small("trmm")
    np.testing.assert_allclose(_run(BY_NAME["trmm"], (L, B, alpha))[1], alpha * L @ B, rtol=1e-12)


def test_floyd_warshall_and_conv2d():
    (D,) = _small("floyd_warshall")
    expected = D.copy()
    for k in range(len(D)):
        expected = np.minimum(expected, expected[:, k, None] + expected[None, k, :])
    np.testing.assert_allclose(_run(BY_NAME["floyd_warshall"], (D,))[0], expected, rtol=1e-14)
    image, weights = _small("conv2d")
    k = len(weights)
    h, w = image.shape[0] - k + 1, image.shape[1] - k + 1
    expected = sum(image[a : a + h, b : b + w] * weights[a, b] for a in range(k) for b in range(k))
    np.testing.assert_allclose(_run(BY_NAME["conv2d"], (image, weights))[0], expected, rtol=1e-12)


# -- the harness, bench/loop_bench.py: its helpers and a tiny run, no Pythran build, no gcompile --


def test_agreement_counts_in_place_updates_and_mismatches():
    from bench.loop_measure import observed, relative_error

    a, b = np.ones(3), np.zeros(2)
    produced = observed(None, (a, 2.0, b))
    assert [x.shape for x in produced] == [(3,), (2,)]  # the updated arguments, scalars left out
    assert relative_error(produced, [np.ones(3), np.zeros(2)]) == 0.0
    assert relative_error(produced, [np.ones(3), np.full(2, 0.5)]) == 0.5 / 0.5
    assert relative_error(produced, [np.ones(3)]) == np.inf
    assert relative_error([np.full(3, np.nan)], [np.ones(3)]) == np.inf


def test_every_timed_call_gets_fresh_inputs():
    from bench.loop_measure import timed_rounds

    def destructive(x):
        assert np.all(x == 1.0), "a timed call saw a previous call's update"
        x *= 2.0

    times = timed_rounds({"a": destructive, "b": destructive}, (np.ones(4),), rounds=5)
    assert set(times) == {"a", "b"} and all(t > 0 for t in times.values())


def test_pythran_module_source_and_cache_key():
    from bench import pythran_build

    lu = BY_NAME["lu"]
    source = pythran_build.module_source(lu)
    assert source.startswith("#pythran export lu(float64[:,:])\n")
    assert "def lu(A):" in source
    other = pythran_build.build_directory(BY_NAME["cholesky"])
    assert pythran_build.build_directory(lu) != other
    assert pythran_build.build_directory(lu).name.startswith("lu-")


def test_harness_tiny_run_writes_table_and_json(tmp_path):
    import json

    from bench import loop_bench

    out, results = tmp_path / "out.json", tmp_path / "results.md"
    argv = ["--size", "tiny", "--programs", "exponential_moving_average", "--quick"]
    argv += ["--no-pythran", "--no-gcompile", "--json", str(out), "--results", str(results)]
    loop_bench.main(argv)
    figures = json.loads(out.read_text())
    (row,) = figures["rows"]
    assert row["program"] == "exponential_moving_average" and row["size"] == "tiny"
    assert row["variants"]["numba"]["correct"] and row["variants"]["numba"]["speedup"] > 0
    text = results.read_text()
    assert text.startswith("<!-- loops:start -->") and "<!-- loops:end -->" in text
    assert "| exponential_moving_average | tiny |" in text and "| yes |" in text


def test_covariance_and_diagonal_tanh_compute_what_they_say():
    M, float_n, data = _small("covariance")
    cov = _run(BY_NAME["covariance"], (M, float_n, data))[0]
    np.testing.assert_allclose(cov, np.cov(data, rowvar=False), rtol=1e-10, atol=1e-12)
    (a,) = BY_NAME["diagonal_tanh"].make_inputs("tiny", np.random.default_rng(1))
    out = _run(BY_NAME["diagonal_tanh"], (a,))[0]
    np.testing.assert_allclose(out, a + np.sum(np.tanh(np.diag(a))), rtol=1e-14)
