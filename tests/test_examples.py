"""The example programs in ``examples/``: each function compiles whole and agrees with eager NumPy.

Each example file gives its inputs through ``example_inputs()`` or ``example_inputs_<fn>()``
with size parameters; the tests use sizes small enough to stay fast, some of them above the
parallel threshold so that the ``prange`` kernels run too.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gcompile
from gcompile import cli

EXAMPLES = Path(__file__).parent.parent / "examples"

# (file, function, size arguments of its example_inputs)
CASES = [
    ("black_scholes.py", "black_scholes", {"n": 50_000}),
    ("transformer_block.py", "softmax", {"batch": 8, "seq": 64, "width": 64}),
    ("transformer_block.py", "layernorm", {"batch": 4, "seq": 16, "width": 32}),
    ("transformer_block.py", "attention_probs", {"batch": 2, "seq": 16, "head_dim": 8}),
    ("heat_diffusion.py", "diffuse", {"n": 200, "steps": 3}),
    ("lu_factorization.py", "lu", {"n": 30}),
    ("haversine.py", "haversine", {"n": 50_000}),
    ("haversine.py", "bearing", {"n": 1_000}),
    ("image_pipeline.py", "normalize_frame", {"height": 120, "width": 160}),
    ("image_pipeline.py", "enhance_frame", {"height": 24, "width": 32}),
    ("mlp.py", "mlp_log_probs", {"batch": 8, "features": 16, "hidden": 32, "classes": 10}),
    ("mlp.py", "mlp_probs", {"batch": 8, "features": 16, "hidden": 32, "classes": 10}),
    ("adam.py", "adam_step", {"n": 50_000}),
    ("adam.py", "adamw_step", {"n": 1_000}),
    ("export_load.py", "smooth", {"n": 2_000}),
    ("torch_interop.py", "normalize", {"n": 2_000}),
    ("dask_pipeline.py", "pipeline", {"rows": 60, "cols": 40}),
]


def load_example(file: str):
    """Import ``examples/<file>`` as a module (the folder is not a package)."""
    path = EXAMPLES / file
    spec = importlib.util.spec_from_file_location(f"gcompile_example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_call(file: str, name: str, sizes: dict) -> tuple:
    """The example's function and its arguments at the given sizes, found as the CLI finds them."""
    module = load_example(file)
    maker = getattr(module, f"example_inputs_{name}", None) or module.example_inputs
    args = maker(**sizes)
    return getattr(module, name), args if isinstance(args, tuple) else (args,)


def test_every_example_function_is_tested():
    """Each file in examples/ appears in CASES, so a new example cannot go untested."""
    assert {path.name for path in EXAMPLES.glob("*.py")} == {file for file, _, _ in CASES}


@pytest.mark.parametrize(("file", "name", "sizes"), CASES, ids=[f"{f}:{n}" for f, n, _ in CASES])
def test_example_compiles_whole_and_agrees(file, name, sizes):
    fn, args = example_call(file, name, sizes)
    report = gcompile.compare(fn, *args, repeat=1)  # runs on copies: args stay as made
    assert report.fallbacks == 0, str(report)
    assert report.ok, str(report)
    gcompile.compile(fn, fullgraph=True)(*args)  # a refusal raises, naming the source line


@pytest.mark.optimized  # loads machine code from disk
@pytest.mark.parametrize("trusted", [False, True])
def test_an_exported_function_loads_and_runs_in_another_process(tmp_path, trusted):
    """``examples/export_load.py``: exported here, loaded and run by a fresh interpreter that
    has no source of the function, without setting up Numba's compiler: by default it compiles
    the stored source, whose machine code the export left in the disk cache; trusted, with an
    empty cache, it runs the archive's machine code."""
    loaded, eager, report = load_example("export_load.py").round_trip(tmp_path, trusted=trusted)
    np.testing.assert_allclose(loaded, eager, rtol=1e-12, atol=0)
    assert "compiler set up: False" in report, report
    counts = ast.literal_eval(report.split("kernels: ")[1].splitlines()[0])
    if trusted:  # (the loop program, and the kernels it calls by name: ``linking``)
        assert counts["source"] == 0 and counts["machine code"] >= 2, report
    else:
        assert counts == {"source": 1, "machine code": 0}, report


def test_torch_tensors_and_numpy_arrays_mix():
    """``examples/torch_interop.py``, where PyTorch is installed (a bench-only extra)."""
    torch = pytest.importorskip("torch")
    result, expected = load_example("torch_interop.py").mixed_call()
    assert isinstance(result, torch.Tensor)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


def test_cli_compare_on_an_example(capsys):
    path = EXAMPLES / "adam.py"
    assert cli.main(["compare", f"{path}:adam_step", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "adam_step" in out and "result: AGREE" in out


def test_the_dask_example_runs_small():
    """The dask pipeline over dask arrays (synchronous scheduler: no cluster), compiled and not."""
    dask = pytest.importorskip("dask")
    module = load_example("dask_pipeline.py")
    with dask.config.set(scheduler="synchronous"):
        plain, compiled = module.run(rows=90, cols=40, chunk_rows=25)
    assert abs(compiled - plain) <= 1e-13 * abs(plain)
