"""The gcompile command on an example file: dump, compare, exit codes."""

from __future__ import annotations

import json
import shutil
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
    assert capsys.readouterr().out.startswith("graph f(x: f64[s0]):\n  %exp_1")
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
        (["dump", f"{EXAMPLE}:nope"], "has no function 'nope' (functions in it: norm_cdf, "),
        (["dump", EXAMPLE], "name the function: "),
        (
            ["compare", f"{EXAMPLE}:norm_cdf"],
            "black_scholes.py:norm_cdf(z) takes 1 argument, but example_inputs() gives 5 "
            "(for black_scholes?)",
        ),
    ],
)
def test_usage_errors_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


MISTAKES = (
    "CONST = 3\n"
    "def add(x, y):\n    return x + y\n\n"
    "def example_inputs_add():\n    return np.ones(3), np.ones(4)\n\n"
    "def scaled(x, *, scale):\n    return x * scale\n\n"
    "def example_inputs_scaled():\n    return (np.ones(3),)\n\n"
    "def broken(x):\n    return x\n\n"
    "def example_inputs_broken():\n    raise ValueError('no data')\n\n"
    "def listed(x, y):\n    return x + y\n\n"
    "def example_inputs_listed():\n    return [np.ones(3), np.ones(3)]\n\n"
    "def nothing(x):\n    return x\n\n"
    "def example_inputs_nothing():\n    pass\n"
)


@pytest.mark.parametrize(
    "command, function, message",
    [
        ("dump", "CONST", "module.py:CONST is not a function (its type is int)"),
        (
            "explain",
            "scaled",
            "module.py:scaled(x, *, scale) does not accept the 1 argument example_inputs_scaled() "
            "gives (missing a required argument: 'scale')",
        ),
        ("compare", "broken", "module.py: example_inputs_broken() raised ValueError: no data"),
        (
            "dump",
            "listed",
            "module.py: example_inputs_listed() returned a list, which is one argument: return a "
            "tuple for the 2 arguments of listed",
        ),
        ("dump", "nothing", "example_inputs_nothing() returned None: return the argument tuple"),
        (
            "explain",
            "add",
            "module.py:add raises ValueError: operands could not be broadcast together with "
            "shapes (3,) (4,) on its example inputs (at ",
        ),
        (
            "compare",
            "add",
            "module.py:add raises ValueError: operands could not be broadcast together with "
            "shapes (3,) (4,) on its example inputs (at ",
        ),
    ],
)
def test_mistakes_in_the_file_exit_2_naming_them(tmp_path, capsys, command, function, message):
    target = write_module(tmp_path, MISTAKES)
    assert cli.main([command, f"{target}:{function}"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_file_that_fails_to_import_exits_2(tmp_path, capsys):
    target = write_module(tmp_path, "raise RuntimeError('needs data.csv\\nsecond line')\n")
    assert cli.main(["explain", f"{target}:f"]) == 2
    err = capsys.readouterr().err
    assert err == f"gcompile: {target} failed to import: RuntimeError: needs data.csv\n"


def test_an_unwritable_output_exits_2(tmp_path, capsys):
    target = write_module(tmp_path, SOFTMAX)
    out = tmp_path / "module.py" / "graph.txt"  # a file is not a directory
    assert cli.main(["dump", f"{target}:softmax", "-o", str(out)]) == 2
    assert f"cannot write {out}" in capsys.readouterr().err


def test_repeat_must_be_positive(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["compare", f"{EXAMPLE}:black_scholes", "--repeat", "0"])
    assert exit_.value.code == 2 and "must be at least 1" in capsys.readouterr().err


def test_an_internal_error_is_called_a_bug(tmp_path, capsys, monkeypatch):
    target = write_module(
        tmp_path, "def f(x):\n    return x + 1\n\ndef example_inputs():\n    return (np.ones(3),)\n"
    )

    def failing_trace(*args, **kwargs):
        raise KeyError("lost node")

    monkeypatch.setattr(cli, "trace", failing_trace)
    assert cli.main(["dump", f"{target}:f"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and "internal error (KeyError: 'lost node'): this is a bug" in err


def test_the_console_script_prints_no_traceback_for_a_usage_error():
    result = subprocess.run(
        [sys.executable, "-m", "gcompile.cli", "compare", f"{EXAMPLE}:norm_cdf"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "takes 1 argument, but example_inputs() gives 5" in result.stderr


def test_help_of_the_command_and_each_subcommand(capsys):
    """(In this process: the console script's own run is the test above.)"""
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and "dump" in out and "compare" in out
    for command in ("dump", "explain", "compare"):
        with pytest.raises(SystemExit) as exit_:
            cli.main([command, "--help"])
        assert exit_.value.code == 0 and "path/to/file.py:function" in capsys.readouterr().out


SOFTMAX = (
    "def softmax(x):\n"
    "    e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
    "    return e / e.sum(axis=-1, keepdims=True)\n\n"
    "def example_inputs():\n    return (np.ones((4, 8), np.float32),)\n"
)


def test_dump_stages_as_json_and_dot(tmp_path, capsys):
    target = write_module(tmp_path, SOFTMAX)
    assert cli.main(["dump", f"{target}:softmax", "--stage", "fused", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (kernel,) = [n for n in data["nodes"] if n["op"] == "call"]
    assert kernel["kind"] == "fused" and kernel["params"] == {"style": "row", "space": ["s0", "s1"]}
    (body,) = kernel["subgraphs"]
    assert (body["role"], body["operands"]) == ("body", [0])
    assert [n["target"] for n in body["nodes"] if n["op"] == "call"] == [
        "amax",
        "subtract",
        "exp",
        "sum",
        "divide",
    ]
    assert cli.main(["dump", f"{target}:softmax", "--stage", "fused", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.lstrip().startswith("digraph") and "cluster_fused_1" in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_dump_svg_draws_kernels_as_clusters(tmp_path, capsys):
    target = write_module(tmp_path, SOFTMAX)
    out = tmp_path / "softmax.svg"
    argv = ["dump", f"{target}:softmax", "--stage", "fused", "--format", "svg", "-o", str(out)]
    assert cli.main(argv) == 0
    svg = out.read_text()
    assert "<svg" in svg and "cluster_fused_1" in svg


def test_explain_exit_codes(tmp_path, capsys):
    target = write_module(tmp_path, SOFTMAX)
    assert cli.main(["explain", f"{target}:softmax"]) == 0
    text = capsys.readouterr().out
    assert "== fused graph" in text and "== generated code" in text
    refused = write_module(
        tmp_path,
        "def f(x):\n    return x if bool(x.sum() > 0) else -x\n\n"
        "def example_inputs():\n    return (np.ones(3),)\n",
    )
    assert cli.main(["explain", f"{refused}:f"]) == 1
    assert "bool() of a traced value" in capsys.readouterr().out


def test_a_numpy_error_on_the_example_inputs_names_the_users_line(tmp_path, capsys):
    """NumPy functions written in Python raise from NumPy's own files: the message points at
    the line of the user's file that called them."""
    target = write_module(
        tmp_path,
        "def moved(x):\n    return np.moveaxis(x, 5, 0)\n\n"
        "def example_inputs_moved():\n    return (np.ones((2, 3)),)\n",
    )
    assert cli.main(["dump", f"{target}:moved"]) == 2
    err = capsys.readouterr().err
    assert f"(at {tmp_path / 'module.py'}:3)" in err and "Traceback" not in err  # moveaxis's line
