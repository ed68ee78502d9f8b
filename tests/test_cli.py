"""The gcompile command on an example file: dump, compare, exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gcompile import cli

EXAMPLE = str(Path(__file__).parent.parent / "examples" / "black_scholes.py")


def write_module(tmp_path, body: str) -> str:
    path = tmp_path / "module.py"
    path.write_text("import numpy as np\n" + body)
    return str(path)


def test_dump_text_and_table(tmp_path, capsys, monkeypatch):
    target = write_module(
        tmp_path,
        "def f(x):\n    return np.exp(x) + 1\n\ndef example_inputs():\n    return (np.ones(3),)\n",
    )
    assert cli.main(["dump", f"{target}:f"]) == 0
    assert capsys.readouterr().out.startswith("graph f(x: f64[3]):\n  %exp_1")
    out = tmp_path / "table.txt"
    assert cli.main(["dump", f"{target}:f", "--format", "table", "-o", str(out)]) == 0
    assert out.read_text().split()[:7] == [
        "opcode",
        "name",
        "target",
        "args",
        "kwargs",
        "meta",
        "source",
    ]


def test_compare_on_the_example_reports_agreement(capsys):
    assert cli.main(["compare", f"{EXAMPLE}:black_scholes", "--repeat", "2"]) == 0
    report = capsys.readouterr().out
    assert "black_scholes" in report and "result: AGREE" in report and "speed-up" in report


def test_compare_exit_code_1_on_disagreement(tmp_path, capsys):
    from gcompile.backends import get, register_backend

    original = get("numba")
    target = write_module(
        tmp_path,
        "import gcompile\n"
        "gcompile.register_backend('numba', lambda graph, options: (lambda inputs: [inputs[0] * 0]))\n"
        "def f(x):\n    return x + 1\n\ndef example_inputs():\n    return (np.ones(3),)\n",
    )
    try:
        assert cli.main(["compare", f"{target}:f", "--repeat", "1"]) == 1
        assert "DISAGREE" in capsys.readouterr().out
    finally:
        register_backend("numba", original)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["dump", "no_colon"], "expected FILE.py:FUNCTION"),
        (["dump", "missing.py:f"], "no such file"),
        (["dump", f"{EXAMPLE}:nope"], "has no function 'nope'"),
    ],
)
def test_usage_errors_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_missing_example_inputs_is_explained(tmp_path, capsys):
    target = write_module(tmp_path, "def f(x):\n    return x\n")
    assert cli.main(["dump", f"{target}:f"]) == 2
    assert "defines neither example_inputs_f() nor example_inputs()" in capsys.readouterr().err


def test_console_script_help():
    result = subprocess.run(
        [sys.executable, "-m", "gcompile.cli", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "dump" in result.stdout and "compare" in result.stdout
