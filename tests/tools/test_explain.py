"""explain(): stages, kernels, boundaries, refusals, guards, generated code, compile phases."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import gcompile
from tests.realistic import layernorm, softmax


def test_explain_reports_every_part_for_a_compiled_function():
    x = np.random.default_rng(0).random((8, 16)).astype(np.float32)
    report = gcompile.explain(softmax, x)
    assert report.compiled and report.refusals == []
    assert set(report.graphs) == {"traced", "optimized", "fused"}
    assert report.counts["traced"]["nodes"] == 5 and report.counts["fused"]["kernels"] == 1
    assert [k[1] for k in report.fusion.kernels] == ["row"]
    assert report.guards == ["x: array float32[*,*] layout C writeable"]  # no size assumed
    assert "def kernel(" in report.code and "_m.exp_f" in report.code
    assert {"trace", "pass fuse", "backend", "codegen fused_1"} <= set(report.timings)
    assert report.kernel_events and report.kernel_events[0][1] in ("compiled", "disk", "memory")
    text = str(report)
    for heading in (
        "== traced graph",
        "== fused graph",
        "== fusion",
        "== refusals",
        "== guards",
        "== compile time",
        "== generated code",
    ):
        assert heading in text, heading


def test_explain_gives_boundaries_their_reasons():
    def matmul_between(x, w):
        h = np.exp(x)
        return np.tanh(h @ w) + 1.0

    rng = np.random.default_rng(1)
    report = gcompile.explain(matmul_between, rng.random((4, 3)), rng.random((3, 2)))
    boundaries = [str(b) for b in report.fusion.boundaries]
    assert any("BLAS" in b for b in boundaries), boundaries
    assert "library call (BLAS)" in str(report)


def test_explain_shows_a_refusal_with_the_line_and_a_rewrite():
    def branchy(x):
        return x * 2 if bool(x.sum() > 0) else x

    report = gcompile.explain(branchy, np.ones(3))
    assert not report.compiled
    (refusal,) = report.refusals
    assert "bool() of a traced value" in refusal.construct
    assert refusal.source and "test_explain.py:" in refusal.source
    assert "rewrite: use np.where" in str(report)
    assert report.graphs == {}


def test_explain_shows_kernels_left_to_the_interpreter():
    report = gcompile.explain(lambda z: np.maximum(z, 1j) * 2, np.array([1 + 2j, 3 - 1j]))
    assert report.compiled
    assert any("no template for maximum" in note for note in report.notes)
    assert "== kernels left to the interpreter" in str(report)


def test_explain_takes_a_compiled_function_and_leaves_its_cache_alone():
    fn = gcompile.compile(layernorm, static_argnames="eps")
    x, g = np.ones((2, 4)), np.ones(4)
    report = gcompile.explain(fn, x, g, g, 1e-3)
    assert fn.stats["calls"] == 0
    assert "eps: static value 0.001" in report.guards


def test_logging_components(monkeypatch, caplog):
    monkeypatch.setenv("GCOMPILE_LOG", "graph,fusion,code,guards,perf,passes")
    fn = gcompile.compile(softmax)
    with caplog.at_level(logging.INFO, logger="gcompile"):
        fn(np.ones((2, 4)))
    by_component = {}
    for record in caplog.records:
        by_component.setdefault(record.name, []).append(record.getMessage())
    assert "graph softmax" in by_component["gcompile.graph"][0]
    assert "kernel fused_1 (row" in by_component["gcompile.fusion"][0]
    assert "def kernel(" in by_component["gcompile.code"][0]
    assert "x: array float64[*,*]" in by_component["gcompile.guards"][0]
    assert "pass fuse" in by_component["gcompile.perf"][0]
    assert any(m.startswith("fuse: changed") for m in by_component["gcompile.passes"])


def test_logging_is_off_by_default_and_rejects_unknown_components(monkeypatch, caplog):
    fn = gcompile.compile(softmax)
    with caplog.at_level(logging.INFO, logger="gcompile"):
        fn(np.ones((2, 3)))
    assert caplog.records == []
    monkeypatch.setenv("GCOMPILE_LOG", "graph,everything")
    with pytest.raises(ValueError, match="unknown components .'everything'.*recompiles"):
        gcompile.config.get("log")
