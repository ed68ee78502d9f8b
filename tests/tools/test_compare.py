"""compare(): agreement of outputs and mutated arguments, and timings."""

from __future__ import annotations

import numpy as np
import pytest

import gcompile
from gcompile import backends
from gcompile.backends import interpreter
from gcompile.tools.compare import agreement, ulp_distance
from tests.realistic import softmax


def step(x, v, dt: float):
    v += dt * np.sin(x)
    return x + dt * v, dt


def test_report_agrees_and_times_both_runs():
    report = gcompile.compare(step, np.linspace(0, 1, 50), np.zeros(50), 0.1, repeat=3)
    assert report.ok
    assert [a.path for a in report.outputs] == ["out_0", "out_1"]
    assert [a.path for a in report.arguments] == ["x", "v"]
    assert (
        report.eager_median_s > 0
        and report.compiled_median_s > 0
        and report.first_call_s >= report.compile_s
    )
    text = str(report)
    assert (
        "result: AGREE" in text
        and "arguments after the call (mutations):" in text
        and "speed-up" in text
    )


def test_report_detects_a_wrong_backend():
    def off_by_one(graph, options):
        run = interpreter.compile_graph(graph, options)
        return lambda inputs: [out + 1 for out in run(inputs)]

    backends.register_backend("off_by_one", off_by_one)
    report = gcompile.compare(lambda x: x * 2, np.arange(4.0), backend="off_by_one", repeat=1)
    assert not report.ok
    assert report.outputs[0].max_abs == 1.0 and report.outputs[0].max_ulp > 1e10
    assert "DISAGREE" in str(report)


def test_agreement_flags_dtype_and_shape_changes():
    assert not agreement("y", np.ones(3, np.float32), np.ones(3), ulps=4).ok
    assert not agreement("y", np.ones(3), np.ones(4), ulps=4).ok
    assert agreement("y", np.ones(3, np.int8), np.ones(3, np.int8), ulps=0).ok


def test_ulp_distance():
    one = np.float32(1.0)
    assert ulp_distance(one, np.nextafter(one, np.float32(2))) == 1
    assert ulp_distance(np.array([np.nan, 0.0]), np.array([np.nan, -0.0])).tolist() == [0.0, 0.0]
    assert ulp_distance(np.array([1.0]), np.array([np.nan]))[0] == np.inf


def test_float32_results_are_judged_against_a_float64_reference():
    x = np.random.default_rng(2).random((64, 256)).astype(np.float32)
    report = gcompile.compare(softmax, x, repeat=2)
    (out,) = report.outputs
    assert out.closer.startswith("vs eager NumPy in float64: ")
    assert "max abs error eager" in str(report)


def test_compile_phases_and_break_even_are_reported():
    report = gcompile.compare(softmax, np.random.default_rng(3).random((256, 512)), repeat=3)
    assert {"trace", "pass fuse", "backend"} <= set(report.phases)
    if report.compiled_median_s < report.eager_median_s:
        expected = report.compile_s / (report.eager_median_s - report.compiled_median_s)
        assert report.break_even_calls == pytest.approx(expected)
        assert f"break-even after {report.break_even_calls:.0f} calls" in str(report)
    else:
        assert "break-even: never" in str(report)


def test_a_disagreement_is_located_in_a_kernel_and_a_pass(monkeypatch):
    from gcompile.backends.numba import rules
    from gcompile.ir import ops

    divide_multiplies = rules.Rule(lambda args, apply: f"({args[0]} * {args[1]})")
    monkeypatch.setitem(rules.RULES, ops.DIVIDE, divide_multiplies)
    x = np.random.default_rng(4).random((8, 16))
    report = gcompile.compare(softmax, x, repeat=1)
    assert not report.ok
    assert report.first_difference.startswith("%fused_1 : f64[8,16] = fused_1(%x) (fused: ")
    assert "divide" in report.first_difference
    assert report.guilty_passes == ["fuse"]  # without fusion there is no kernel to miscompile
    text = str(report)
    assert "first difference: %fused_1" in text and "removal makes the results agree: fuse" in text


def test_a_more_accurate_compiled_result_agrees():
    """NumPy sums float32 over leading axes one element at a time in float32; gcompile in float64."""

    def channel_mean(x):
        return x.mean(axis=(0, 1))

    x = np.random.default_rng(0).random((540, 960, 3), dtype=np.float32)
    (out,) = gcompile.compare(channel_mean, x, repeat=1).outputs
    assert out.max_ulp > 8  # beyond the tolerance of eager's own result ...
    assert (
        out.ok and "compiled is closer" in out.closer and "accepted" in out.closer
    )  # ... but closer
    assert out.verdict.startswith("closer to float64 NumPy than eager is; from eager ")
    assert out.verdict.endswith(" ulp (limit 8, per element and at the result's scale)")


def test_the_figure_that_decided_comes_first_and_a_tiny_value_is_explained():
    """A put price of ~0 left after terms of ~100 cancel: relative error 1, ulp inf, yet ok."""
    unit = np.spacing(100.0)
    eager, compiled = np.array([100.0, -2 * unit, 50.0]), np.array([100.0, 0.0, 50.0])
    out = agreement("put", eager, compiled, ulps=8)
    assert out.ok and out.max_rel == 1 and out.max_ulp > 1e15
    assert out.verdict == "2 ulp at the result's scale (limit 8)"
    line = out.line()
    assert line.index("2 ulp at the result's scale") < line.index("max rel 1") < line.index("\n")
    assert out.note.startswith(
        "max rel 1 is where the value is tiny beside the output's largest (100): put[1] is "
        "-2.84e-14 eager, 0 compiled."
    )
    assert "measured in ulp of 100: 2 there, 2 at most" in out.note and out.note in line


def test_verdicts_per_element_failing_and_integer():
    one = np.array([1.0, 2.0])
    close = agreement("y", one, np.nextafter(one, 3.0), ulps=8)
    assert close.ok and close.verdict == "max ulp 1 (limit 8)" and not close.note
    far = agreement("y", one, one + 1e-9, ulps=8)
    assert not far.ok
    assert far.line().split("y", 1)[1].split()[1:4] == ["2.25e+06", "ulp", "(limit"]
    assert agreement("y", one, one.copy(), ulps=8).verdict == "equal"
    ints = agreement("n", np.arange(3), np.arange(3) + [0, 0, 3], ulps=0)
    assert not ints.ok and ints.verdict == "max abs 3 (must be 0)"


def test_the_max_ulp_verdict_shows_the_largest_per_element_distance():
    """A tiny element 3 ulp off beside a large one: the verdict's figure is that 3, not the
    (smaller) distance at the result's scale."""
    eager = np.array([1000.0, 1e-3])
    compiled = eager.copy()
    compiled[1] = eager[1] + 3 * np.spacing(eager[1])
    out = agreement("y", eager, compiled, ulps=8)
    assert out.ok and out.max_ulp == 3 and out.verdict == "max ulp 3 (limit 8)"
