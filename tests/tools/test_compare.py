"""compare(): agreement of outputs and mutated arguments, and timings."""

from __future__ import annotations

import numpy as np

import gcompile
from gcompile import backends
from gcompile.backends import interpreter
from gcompile.tools.compare import agreement, ulp_distance


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
