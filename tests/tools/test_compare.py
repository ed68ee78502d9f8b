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
    from gcompile.backends.numba import codegen, templates

    original = templates.ufunc_expression

    def divide_multiplies(name, args, loop, **options):
        if name == "divide":
            return f"({args[0]} * {args[1]})"
        return original(name, args, loop, **options)

    monkeypatch.setattr(codegen.tpl, "ufunc_expression", divide_multiplies)
    x = np.random.default_rng(4).random((8, 16))
    report = gcompile.compare(softmax, x, repeat=1)
    assert not report.ok
    assert report.first_difference.startswith("kernel %fused_1")
    assert "divide" in report.first_difference
    assert report.guilty_passes == ["fuse"]  # without fusion there is no kernel to miscompile
    text = str(report)
    assert (
        "first difference: kernel %fused_1" in text
        and "removal makes the results agree: fuse" in text
    )


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
