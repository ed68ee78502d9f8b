"""Export and load: one archive per compiled function, loaded without its source or a trace;
calls its guards do not admit raise; damaged, changed, foreign or other-version files are
refused before anything of them runs.

The archives are made once per module (``ARCHIVES``); each tampering test rewrites a copy.
A load in a fresh process is ``examples/export_load.py``'s, run by ``tests/test_examples.py``.
"""

import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import gcompile
from gcompile.archive import layout, sources
from gcompile.errors import ArchiveError, GuardError
from tests.producers import Tensor

RNG = np.random.default_rng(23)


def blend(x, y, w=0.25):
    mixed = w * x + (1.0 - w) * np.tanh(y)
    return mixed, {"total": mixed.sum(), "peak": np.abs(mixed).max(axis=0)}


def forward_substitution(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def shift_into(out, x, k):
    out[k:] = x[:-k] * 2.0 + out[k:]
    return out[k:].mean()


def _lower(n):
    return np.tril(RNG.random((n, n))) + n * np.eye(n)


EXAMPLES = {
    "blend": (blend, (RNG.random((6, 5)), RNG.random((6, 5)))),
    "forward_substitution": (forward_substitution, (_lower(12), RNG.random(12))),
    "shift_into": (shift_into, (RNG.random(20), RNG.random(20), 3)),
}


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    folder = tmp_path_factory.mktemp("archives")
    return {
        name: gcompile.export(fn, *args, path=folder / f"{name}.gcx")
        for name, (fn, args) in EXAMPLES.items()
    }


def _same(got, want):
    if isinstance(want, dict):
        assert set(got) == set(want)
        for key in want:
            _same(got[key], want[key])
    elif isinstance(want, tuple):
        assert type(got) is tuple and len(got) == len(want)
        for a, b in zip(got, want):
            _same(a, b)
    else:
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_loaded_functions_agree_with_numpy_on_other_sizes(archives):
    blended = gcompile.load(archives["blend"])
    for shape in ((6, 5), (40, 3), (2, 300)):
        x, y = RNG.random(shape), RNG.random(shape)
        _same(blended(x, y), blend(x, y))
        _same(blended(x, y=y, w=0.75), blend(x, y, 0.75))
    solve = gcompile.load(archives["forward_substitution"])
    for n in (12, 3, 70):
        L, b = _lower(n), RNG.random(n)
        _same(solve(L, b), forward_substitution(L, b))
    assert "graph" in blended.graph_text and "def host_blend" in blended.code
    assert blended.versions["numpy"] == np.__version__


def test_writes_into_arguments_land_as_eagers_do(archives):
    shift = gcompile.load(archives["shift_into"])
    for n in (20, 7, 500):
        out, x = RNG.random(n), RNG.random(n)
        want = out.copy()
        want_mean = shift_into(want, x, 3)
        assert np.isclose(shift(out, x, 3), want_mean)
        np.testing.assert_array_equal(out, want)
    out = RNG.random(10)
    with pytest.raises(GuardError, match="shares memory"):
        shift(out, out, 3)


@pytest.mark.parametrize(
    ("name", "args", "says"),
    [
        ("blend", (np.ones((4, 5), np.float32), np.ones((4, 5))), "x: array float32"),
        ("blend", (np.ones(5), np.ones(5)), r"x: array float64\[\*\]"),
        ("blend", (np.ones((4, 5)), np.ones((4, 6))), "y.shape"),
        ("blend", (np.ones((4, 5)), np.ones((4, 5)), 1), "w: static value 1"),
        ("shift_into", (np.ones(8), np.ones(8), 2), "k: static value 2"),
        ("forward_substitution", (np.ones((5, 5)), np.ones(6)), "L.shape"),
    ],
)
def test_calls_the_guards_do_not_admit_raise_with_the_guards(archives, name, args, says):
    loaded = gcompile.load(archives[name])
    with pytest.raises(GuardError, match=says):
        loaded(*args)


def test_a_function_with_a_python_step_is_not_exported(tmp_path):
    def solve(a, b):
        return np.linalg.solve(a, b) * 2.0

    with pytest.raises(gcompile.UnsupportedError, match="calls Python"):
        gcompile.export(solve, _lower(4), RNG.random(4), path=tmp_path / "solve.gcx")
    assert not (tmp_path / "solve.gcx").exists()
    with pytest.raises(gcompile.UnsupportedError, match="computes nothing"):
        gcompile.export(lambda a: [len(a)] * 3, np.ones(3), path=tmp_path / "sizes.gcx")


def _members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _rewrite(source, target, change, rehash=True):
    """A copy of archive ``source`` at ``target`` with ``change(members)`` applied; the
    manifest's hashes made to match again (``rehash``), as a forger would."""
    members = _members(source)
    change(members)
    if rehash:
        manifest = json.loads(members["manifest.json"])
        manifest["sha256"] = {
            name: hashlib.sha256(body).hexdigest()
            for name, body in members.items()
            if name != "manifest.json"
        }
        members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(target, "w") as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return target


def _stored_machine_code(path) -> int:
    """How many signatures ``path`` stores machine code of: its kernels' and those of the
    kernels its loop programs call (``links``)."""

    def count(described):
        own = sum(entry is not None for entry in described.get("machine", ()))
        return own + sum(count(link) for link in described.get("links", ()))

    host = json.loads(_members(path)["meta.json"])["host"]
    return sum(count(d) for d in host["globals"].values() if d["kind"] == "kernel")


def _meta_change(update):
    def change(members):
        meta = json.loads(members["meta.json"])
        update(meta)
        members["meta.json"] = json.dumps(meta).encode()

    return change


def _flip_a_byte(members):
    name = next(n for n in members if n.startswith("modules/"))
    body = bytearray(members[name])
    body[len(body) // 2] ^= 1
    members[name] = bytes(body)


def _pickle_array(members):
    buffer = io.BytesIO()
    np.save(buffer, np.array([object()], dtype=object), allow_pickle=True)
    members["arrays/_const_x.npy"] = buffer.getvalue()
    members["data.pkl"] = pickle.dumps([1, 2])


def _inject_import(members):
    name = next(n for n in members if n.startswith("modules/"))
    members[name] = b"import os\nos.system('echo owned')\n" + members[name]


def _newer_format(members):
    manifest = json.loads(members["manifest.json"])
    manifest["version"] = layout.VERSION + 1
    members["manifest.json"] = json.dumps(manifest).encode()


def _changed_guard(meta):
    meta["key"]["tuple"][1]["tuple"][0]["tuple"][1] = {"dtype": "<f4"}


def _flip_a_machine_code_byte(members):
    name = next(n for n in members if n.startswith("machine/") and n.endswith(".o"))
    body = bytearray(members[name])
    body[len(body) // 2] ^= 1
    members[name] = bytes(body)


TAMPERED = [
    ("a changed byte", _flip_a_byte, False, "does not match its SHA-256"),
    ("a changed machine code byte", _flip_a_machine_code_byte, False, "does not match"),
    ("a changed guard", _meta_change(_changed_guard), False, "meta.json does not match"),
    ("a pickle payload", _pickle_array, True, "members an export never has"),
    ("a pickled array", lambda m: _pickle_array(m) or m.pop("data.pkl"), True, "not a plain"),
    ("an import in a kernel", _inject_import, True, "never generates: line 1: import os"),
    ("a newer format", _newer_format, False, "newer than this gcompile reads"),
    (
        "other versions",
        _meta_change(lambda m: m["versions"].update(numba="0.1")),
        True,
        "made with numba 0.1",
    ),
    ("a host calling open", None, True, "the name open"),
]


@pytest.mark.parametrize(
    ("what", "change", "rehash", "says"), TAMPERED, ids=[t[0] for t in TAMPERED]
)
def test_a_changed_file_is_refused_before_anything_runs(
    archives, tmp_path, capfd, what, change, rehash, says
):
    if change is None:

        def change(members):
            members["host.py"] = members["host.py"].replace(
                b"    v_x, ", b"    open('x')\n    v_x, ", 1
            )

    target = _rewrite(archives["blend"], tmp_path / "changed.gcx", change, rehash)
    with pytest.raises(ArchiveError, match=says):
        gcompile.load(target)
    assert "owned" not in capfd.readouterr().out


def test_a_forged_guard_admits_no_call_the_code_was_not_compiled_for(archives, tmp_path):
    """A forger can rewrite the manifest too; the kernels still run only the types they
    were compiled for."""
    forged = _rewrite(archives["blend"], tmp_path / "forged.gcx", _meta_change(_changed_guard))
    loaded = gcompile.load(forged)
    with pytest.raises(GuardError, match="float32"):
        loaded(np.ones((4, 5), np.float32), np.ones((4, 5)))


def _garbage_machine_code(members):
    for name in members:
        if name.startswith("machine/"):
            members[name] = b"\xcc" * 64


def test_machine_code_runs_only_in_a_trusted_load_made_for_this_cpu(archives, tmp_path):
    """A default load compiles the stored sources and never touches the machine code (here
    garbage, its hashes forged); a trusted load of code made for another CPU compiles them
    too, and says so. (A trusted load of this CPU's code, in a fresh process with an empty
    cache, is ``examples/export_load.py``'s.)"""
    members = _members(archives["forward_substitution"])
    assert any(n.startswith("machine/") and n.endswith(".o") for n in members)
    assert any(n.startswith("machine/") and n.endswith(".bc") for n in members)
    garbage = _rewrite(archives["forward_substitution"], tmp_path / "g.gcx", _garbage_machine_code)
    L, b = _lower(9), RNG.random(9)
    loaded = gcompile.load(garbage)
    _same(loaded(L, b), forward_substitution(L, b))
    assert loaded.kernels["machine code"] == 0 and loaded.kernels["source"] >= 1

    def other_cpu(meta):
        meta["machine"][1] = "a-cpu-of-elsewhere"

    elsewhere = _rewrite(garbage, tmp_path / "e.gcx", _meta_change(other_cpu))
    with pytest.warns(gcompile.GcompileWarning, match="a-cpu-of-elsewhere"):
        loaded = gcompile.load(elsewhere, trust_machine_code=True)
    _same(loaded(L, b), forward_substitution(L, b))
    assert loaded.kernels["machine code"] == 0


# A fresh interpreter with an empty cache loads every archive trusted, from four threads at
# once (one installs, the others find it installed), calls it (damped on 300,000 elements: its
# parallel variant, which starts Numba's threads), then exports blend again (its dispatcher's
# overload is then the installed code).
TRUSTED_LOADER = """
import sys, threading
import numpy as np
import gcompile
from tests.test_export import blend

folder, names = sys.argv[1], sys.argv[2:]
inputs = np.load(folder + "/inputs.npz")
loaded, results = {}, {}

def load(name):
    loaded.setdefault(name, []).append(gcompile.load(f"{folder}/{name}.gcx", trust_machine_code=True))

for name in names:
    threads = [threading.Thread(target=load, args=(name,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    args = [inputs[f"{name}_{i}"] for i in range(len(inputs.files)) if f"{name}_{i}" in inputs]
    for k, function in enumerate(loaded[name]):
        result = function(*[a.item() if a.ndim == 0 else a.copy() for a in args])
        results[f"{name}_{k}"] = result if name != "blend" else result[0]
    print(name, sum(f.kernels["machine code"] for f in loaded[name]), loaded[name][0].kernels)
np.savez(folder + "/results.npz", **results)
print("compiler set up:", "numba.np.arraymath" in sys.modules)
x, y = inputs["blend_0"], inputs["blend_1"]
gcompile.export(blend, x, y, path=folder + "/again.gcx")
"""


def damped(x, y):
    return np.exp(-x * x) * np.sin(y) + np.sqrt(x * x + y * y)


def test_a_trusted_load_in_a_fresh_process_runs_the_archives_machine_code(archives, tmp_path):
    small, big = (RNG.random(40), RNG.random(40)), (RNG.random(300_000), RNG.random(300_000))
    gcompile.export(damped, *small, path=tmp_path / "damped.gcx")  # (a parallel variant)
    calls = {
        "damped": big,
        "blend": (RNG.random((6, 5)), RNG.random((6, 5))),
        "forward_substitution": (_lower(30), RNG.random(30)),
        "shift_into": (RNG.random(50), RNG.random(50), 3),
    }
    arrays = {
        f"{name}_{i}": np.asarray(a) for name, args in calls.items() for i, a in enumerate(args)
    }
    np.savez(tmp_path / "inputs.npz", **arrays)
    for name in EXAMPLES:
        (tmp_path / f"{name}.gcx").write_bytes(archives[name].read_bytes())
    root = str(Path(gcompile.__file__).resolve().parents[1])
    environment = {**os.environ, "PYTHONPATH": root, "GCOMPILE_CACHE_DIR": str(tmp_path / "c")}
    command = [sys.executable, "-c", TRUSTED_LOADER, str(tmp_path), *calls]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for name, line in zip(calls, lines):  # (each signature installed once: damped's two)
        stored = _stored_machine_code(tmp_path / f"{name}.gcx")
        assert line.split()[:2] == [name, str(stored)], line
    assert "compiler set up: False" in done.stdout, done.stdout
    results = np.load(tmp_path / "results.npz")
    for name, fn in {"damped": damped, **{n: f for n, (f, _) in EXAMPLES.items()}}.items():
        expected = fn(*[np.copy(a) for a in calls[name]])
        expected = expected[0] if name == "blend" else expected
        for k in range(4):
            _same(results[f"{name}_{k}"][()], expected)
    assert any(n.startswith("machine/") for n in _members(tmp_path / "again.gcx"))


def test_arrays_of_other_libraries_are_taken_and_given_back(archives):
    x, y = RNG.random((5, 4)), RNG.random((5, 4))
    mixed, parts = gcompile.load(archives["blend"])(Tensor(x), Tensor(y))
    assert type(mixed) is Tensor and type(parts["peak"]) is Tensor
    _same((np.from_dlpack(mixed), parts["total"]), (blend(x, y)[0], blend(x, y)[1]["total"]))


def test_a_truncated_or_foreign_file_is_refused(archives, tmp_path):
    body = archives["blend"].read_bytes()
    (tmp_path / "cut.gcx").write_bytes(body[: len(body) // 2])
    with pytest.raises(ArchiveError, match="not a complete zip"):
        gcompile.load(tmp_path / "cut.gcx")
    (tmp_path / "other.zip").write_bytes(b"")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("meta.json", "{}")
    with pytest.raises(ArchiveError, match="no manifest.json"):
        gcompile.load(tmp_path / "other.zip")


def test_the_gate_refuses_what_generators_never_write():
    good = "def host_f(inputs):\n    v_x, = inputs\n    return (_loop_f(v_x),)\n"
    sources.check_host_function(good, "host_f", {"_loop_f"})
    for bad in (
        good.replace("_loop_f(v_x)", "v_x.tofile('x')"),
        good.replace("_loop_f(v_x)", "v_x.__class__"),
        good.replace("_loop_f(v_x)", "[v for v in v_x]"),
        good.replace("_loop_f(v_x)", "np.load('x')"),
        good.replace("    v_x, = inputs\n", "    import os\n    v_x, = inputs\n"),
    ):
        with pytest.raises(sources.SourceRefused):
            sources.check_host_function(bad, "host_f", {"_loop_f", "np"})
    module = "@njit(cache=True)\ndef kernel(a0):\n    return a0\n"
    sources.check_kernel_module(module)
    for bad in (
        module.replace("@njit(cache=True)", "@njit(cache=print())"),
        module.replace("def kernel(a0)", "def kernel(a0=print())"),
        module + "x = 1\n",
        "from numba import objmode\n" + module,
        module.replace("return a0", "return a0.__class__"),
    ):
        with pytest.raises(sources.SourceRefused):
            sources.check_kernel_module(bad)
