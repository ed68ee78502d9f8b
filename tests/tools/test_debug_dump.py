"""GCOMPILE_DEBUG_DIR: one folder per compile, with every stage, the code, a drawing and repro.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gcompile

ROOT = Path(__file__).resolve().parents[2]


def scaled_softmax(x, scale: float, axis: int):
    e = np.exp((x - x.max(axis=axis, keepdims=True)) * scale)
    return e / e.sum(axis=axis, keepdims=True)


def test_each_compile_writes_its_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("GCOMPILE_DEBUG_DIR", str(tmp_path))
    fn = gcompile.compile(scaled_softmax)
    x = np.random.default_rng(0).random((4, 8)).astype(np.float32)
    fn(x, 0.5, -1)
    fn(np.asfortranarray(x), 0.5, 0)  # a second compile: a second folder
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert folders == ["scaled_softmax_1", "scaled_softmax_2"]
    files = {p.name for p in (tmp_path / "scaled_softmax_1").iterdir()}
    assert {
        "graph.txt",
        "fusion_report.txt",
        "guards.txt",
        "code.py",
        "graph.dot",
        "repro.py",
    } <= files
    assert any(name.endswith("_fuse.txt") for name in files)
    assert any(name.endswith("_functionalize.txt") for name in files)
    if shutil.which("dot"):
        assert "graph.svg" in files
    folder = tmp_path / "scaled_softmax_2"
    assert "x: array float32[*,*] layout F writeable" in (folder / "guards.txt").read_text()
    assert "def kernel(" in (folder / "code.py").read_text()


def test_repro_runs_on_its_own(monkeypatch, tmp_path):
    monkeypatch.setenv("GCOMPILE_DEBUG_DIR", str(tmp_path / "dumps"))
    fn = gcompile.compile(scaled_softmax)
    fn(np.asfortranarray(np.ones((3, 5), np.float32)), 2.0, 1)
    repro = tmp_path / "dumps" / "scaled_softmax_1" / "repro.py"
    text = repro.read_text()
    assert "array((3, 5), np.float32, 'F')" in text and "2.0" in text
    env = {k: v for k, v in os.environ.items() if k != "GCOMPILE_DEBUG_DIR"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [sys.executable, str(repro)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "gcompile compare: scaled_softmax" in result.stdout and "result: AGREE" in result.stdout


def test_a_refused_compile_writes_why(monkeypatch, tmp_path):
    monkeypatch.setenv("GCOMPILE_DEBUG_DIR", str(tmp_path))

    def branchy(x):
        return x if bool(x.sum() > 0) else -x

    fn = gcompile.compile(branchy)
    with pytest.warns(gcompile.GcompileWarning):
        fn(np.ones(2))
    (folder,) = tmp_path.iterdir()
    assert "bool() of a traced value" in (folder / "refusal.txt").read_text()
    assert "def branchy(x):" in (folder / "repro.py").read_text()  # a local function: its source


def test_a_partial_or_callable_object_still_compiles(monkeypatch, tmp_path):
    import functools

    monkeypatch.setenv("GCOMPILE_DEBUG_DIR", str(tmp_path))
    fn = gcompile.compile(functools.partial(scaled_softmax, axis=-1))
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(fn(x, 1.0), scaled_softmax(x, 1.0, -1), rtol=1e-6)
    (folder,) = tmp_path.iterdir()
    assert (folder / "repro.py").exists()
