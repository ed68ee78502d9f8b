"""Byte-identity of the generated code across a change of the code generator.

    # in the old tree, then in the new one: record every kernel the test suite generates
    CI=1 GC_DUMP=/tmp/old python -m pytest -q -p bench.codegen_identity
    CI=1 GC_DUMP=/tmp/new python -m pytest -q -p bench.codegen_identity
    python -m bench.codegen_identity compare /tmp/old /tmp/new --old-root /work/old-tree/
    # or, in seconds: regenerate the kernels a run recorded with this tree's code generator
    python -m bench.codegen_identity replay /tmp/old

As a pytest plugin it wraps ``codegen.generate``: per kernel, a key (the kernel's name, style
and space, its sub-graph's text, its nodes' source lines, its inputs' metas, the options) and
the result (the canonical or readable source and every ``KernelCode`` field, or the
``NoTemplate`` message), written to ``$GC_DUMP/results-<pid>.pkl``; each kernel itself is
pickled to ``$GC_DUMP/corpus-<pid>.pkl`` for ``replay``. ``CI=1`` makes hypothesis draw the
same examples in both runs. ``compare`` drops the test files' line numbers and pytest's
temporary directories, which differ between trees. A kernel generated while a test replaced a
rule (``monkeypatch``) differs on ``replay``, which does not replace it.
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import pickle
import re

_RESULTS: dict = {}
_CORPUS: dict = {}
_LINE = re.compile(r"(\.py):\d+")
_TMP = re.compile(r"/pytest-\d+/")


def kernel_key(kernel, options: dict) -> tuple:
    graph = kernel.graph
    sources = tuple((n.name, n.source) for n in graph.nodes)
    metas = tuple(repr(p.meta) for p in graph.placeholders)
    settings = tuple(sorted((k, repr(v)) for k, v in options.items()))
    return (kernel.name, kernel.style, tuple(kernel.space), str(graph), sources, metas, settings)


def result_of(generate, kernel, options: dict) -> tuple:
    """What ``generate`` gives for ``kernel``: the code's fields, or the refusal."""
    try:
        return _fields(generate(kernel, options))
    except Exception as error:  # noqa: BLE001 (a refusal is a result too)
        return _refusal(error)


def _fields(code) -> tuple:
    from gcompile.ir.printer import format_node

    arguments = tuple(
        (*a[:2], tuple(format_node(v) for v in a[2])) if a[0] == "array" else tuple(a)
        for a in code.arguments
    )
    return (
        "code",
        (code.name, code.source, tuple(code.params), arguments)
        + (tuple(str(t) for t in code.types), code.parallel, code.fastmath, code.fastmath_flags)
        + (code.expansions, tuple(code.math.items()), tuple(map(repr, code.outputs)))
        + (tuple(code.orders),),
    )


def _refusal(error: Exception) -> tuple:
    from gcompile.backends.numba import codegen

    if isinstance(error, codegen.NoTemplate):
        return ("NoTemplate", str(error))
    return ("error", type(error).__name__, str(error))


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):  # ops are found again by name (their infer rules are closures)
        from gcompile.ir.ops import OpDef

        return ("op", obj.name) if isinstance(obj, OpDef) else None


def pytest_configure(config):
    from gcompile.backends.numba import codegen

    original = codegen.generate

    def recording(kernel, options):
        key = kernel_key(kernel, options)
        if key not in _CORPUS:
            _CORPUS[key] = _pickled(kernel, options)
        try:
            code = original(kernel, options)
        except Exception as error:
            _RESULTS.setdefault(key, set()).add(_refusal(error))
            raise
        _RESULTS.setdefault(key, set()).add(_fields(code))
        return code

    codegen.generate = recording


def _pickled(kernel, options: dict) -> bytes | None:
    buffer = io.BytesIO()
    try:
        _Pickler(buffer).dump((kernel, dict(options)))
    except Exception:  # noqa: BLE001 (a kernel holding an unpicklable literal is not replayed)
        return None
    return buffer.getvalue()


def pytest_unconfigure(config):
    folder = os.environ.get("GC_DUMP")
    if folder:
        os.makedirs(folder, exist_ok=True)
        for name, table in (("results", _RESULTS), ("corpus", _CORPUS)):
            with open(os.path.join(folder, f"{name}-{os.getpid()}.pkl"), "wb") as out:
                pickle.dump(table, out)


def load(folder: str, name: str, root: str | None = None) -> dict:
    """The merged ``name`` tables of a run; with ``root``, paths start at ``/`` instead of it and
    line numbers and pytest's temporary directory numbers are dropped."""
    merged: dict = {}
    for path in glob.glob(os.path.join(folder, f"{name}-*.pkl")):
        with open(path, "rb") as handle:
            for key, value in pickle.load(handle).items():
                if root is not None:
                    key, value = _normal(key, root), {_normal(v, root) for v in value}
                if name == "results":
                    merged.setdefault(key, set()).update(value)
                else:
                    merged.setdefault(key, value)
    return merged


def _normal(value, root: str):
    if isinstance(value, str):
        return _TMP.sub("/pytest-N/", _LINE.sub(r"\1:N", value.replace(root, "/")))
    if isinstance(value, tuple):
        return tuple(_normal(v, root) for v in value)
    return value


def compare(old_dir: str, new_dir: str, old_root: str, new_root: str) -> int:
    old, new = load(old_dir, "results", old_root), load(new_dir, "results", new_root)
    common = set(old) & set(new)
    different = [key for key in common if old[key] != new[key]]
    print(f"{len(old)} kernels before, {len(new)} after, {len(common)} in both")
    print(f"only before: {len(set(old) - set(new))}, only after: {len(set(new) - set(old))}")
    print(f"identical: {len(common) - len(different)}, different: {len(different)}")
    for key in different[:5]:
        print(f"--- different: {key[3]}")
    return int(bool(different) or set(old) != set(new))


def replay(folder: str) -> int:
    import scipy.special  # noqa: F401  (SciPy's ops, when the suite recorded them)

    from gcompile.backends.numba import codegen
    from gcompile.ir import ops

    ops.load_scipy_special()

    class Unpickler(pickle.Unpickler):
        def persistent_load(self, pid):
            return next(op for op in ops.OPS if op.name == pid[1])

    results, corpus = load(folder, "results"), load(folder, "corpus")
    same = different = 0
    for key, blob in corpus.items():
        if blob is None:
            continue
        kernel, options = Unpickler(io.BytesIO(blob)).load()
        if result_of(codegen.generate, kernel, options) in results[key]:
            same += 1
        else:
            different += 1
            print(f"--- different: {key[3]}  {key[6]}")
    print(
        f"{same} identical, {different} different ({len(results) - same - different} not replayed)"
    )
    return int(bool(different))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    both = commands.add_parser("compare", help="compare an old run with a new one")
    both.add_argument("old")
    both.add_argument("new")
    both.add_argument("--old-root", default=os.getcwd() + "/", help="the old tree's path")
    both.add_argument("--new-root", default=os.getcwd() + "/", help="the new tree's path")
    again = commands.add_parser("replay", help="regenerate a run's kernels with this tree")
    again.add_argument("run")
    arguments = parser.parse_args()
    if arguments.command == "compare":
        return compare(arguments.old, arguments.new, arguments.old_root, arguments.new_root)
    return replay(arguments.run)


if __name__ == "__main__":
    raise SystemExit(main())
