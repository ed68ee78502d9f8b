"""``gcompile.export``: a compiled function and its guards written to one archive (``layout``).

The function is compiled for the example arguments, with ``fullgraph`` (a refusal is the
export's refusal), as a compiled call of it runs: a host calling its kernels (the variants a
call does not need compiled when one does, so a load with an empty cache compiles no more than
compiling the source would), or the whole graph as one Numba function where the compiler
chooses that form. What the host function reads is described as data (``codec``): NumPy, the
buffer allocator, dtypes, kernels by module, arrays, operators, numbers. A host that calls
anything else is compiled again as one Numba function (option ``whole_program``); a step run
by Python even so (a library call, an interpreted loop) cannot be exported, and the error
names it.
"""

from __future__ import annotations

import inspect
import io
import json
import operator
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..api import CompiledFunction
from ..backends.numba import cache, copies, linking
from ..backends.numba.kernels import LazyKernel
from ..errors import UnsupportedError
from ..ir.graph import Node
from . import codec, layout, sources
from . import machine as machine_code


def export(fn: Callable, *example_args: Any, path: str | os.PathLike, **example_kwargs) -> Path:
    """Write ``fn`` compiled for arguments like ``example_args`` to the archive ``path``.

    ``fn``: a function or a ``CompiledFunction`` (its options and static_argnames are kept).
    The example arguments are not run, only traced. ``gcompile.load(path)`` gives it back,
    without its source. Raises ``UnsupportedError`` naming what cannot be exported.
    """
    compiled = _compiled(fn, whole_program=None)
    if compiled.backend != "numba":
        raise UnsupportedError("exporting a function of the interpreter backend")
    try:
        data = _contents(compiled, *compiled.prepare(*example_args, **example_kwargs))
    except (UnsupportedError, sources.SourceRefused):
        if compiled.options["whole_program"]:
            raise
        compiled = _compiled(fn, whole_program=True)
        data = _contents(compiled, *compiled.prepare(*example_args, **example_kwargs))
    return _write_zip(Path(path), data)


def _contents(compiled: CompiledFunction, entry: Any, bound: Any) -> dict:
    """The archive's members (name -> bytes, but the manifest) of ``compiled``'s ``entry``."""
    if entry.python is not None:
        raise UnsupportedError(
            f"exporting a function whose trace computes nothing ({entry.python})"
        )
    host = entry.run
    name = host.__name__
    machine: dict = {}
    globals_, modules, arrays = _describe_globals(host.__globals__, name, entry.graph.name, machine)
    files = {
        "host.py": host.program.source,
        "graph.txt": layout.GRAPH_HEADER + str(entry.graph),
        "code.txt": host.program.code,
        **{f"modules/{key}.py": text for key, text in modules.items()},
    }
    sources.check_host_function(files["host.py"], name, set(globals_))
    if entry.sizes is not None:
        files["check.py"] = entry.sizes.source
        sources.check_host_function(entry.sizes.source, "check", set())
    meta = _meta(compiled, entry, bound, name, globals_)
    data = {k: v.encode() for k, v in files.items()}
    data["meta.json"] = json.dumps(meta, indent=1).encode()
    data.update({f"arrays/{k}.npy": _npy(v) for k, v in arrays.items()})
    data.update(machine)
    return data


def _compiled(fn: Callable, whole_program: bool | None) -> CompiledFunction:
    """A fresh compiled function of ``fn`` for the export (its options; ``whole_program``:
    the whole graph as one Numba function wherever it has that form; None: as ``fn`` says)."""
    base = fn if isinstance(fn, CompiledFunction) else None
    eager = base.eager if base is not None else fn
    options = dict(base.options) if base is not None else {}
    if whole_program is not None or "whole_program" not in options:
        options["whole_program"] = bool(whole_program)
    return CompiledFunction(
        eager,
        backend=base.backend if base is not None else "numba",
        fullgraph=True,
        static_argnames=base.static_argnames if base is not None else (),
        options=options,
    )


def _meta(compiled: CompiledFunction, entry, bound, host: str, globals_: dict) -> dict:
    """The archive's ``meta.json``: versions, the call's form, guards, results, the host."""
    graph = entry.graph
    return {
        "format": layout.FORMAT,
        "version": layout.VERSION,
        "versions": layout.versions(),
        "name": graph.name,
        "parameters": _parameters(compiled),
        "static_argnames": list(compiled.static_argnames),
        "dynamic_ints": sorted(compiled._binder.dynamic_ints),
        "static_scalars": sorted(compiled._binder.static_scalars),
        "key": codec.encode(codec.plain_key(entry.key), "a guard"),
        "guards": entry.guards(),
        "out_spec": codec.encode(graph.out_spec, "the results' structure"),
        "written": entry.written,
        "labels": entry.labels,
        "host": {"function": host, "globals": globals_},
        "check": entry.sizes is not None,
        "machine": machine_code.magic(),
    }


def _parameters(compiled: CompiledFunction) -> list:
    """``[name, kind, default]`` per parameter (no default: ``[name, kind]``)."""
    found = []
    for parameter in compiled._binder.signature.parameters.values():
        item = [parameter.name, int(parameter.kind)]
        if parameter.default is not inspect.Parameter.empty:
            item.append(codec.encode(parameter.default, f"the default of {parameter.name}"))
        found.append(item)
    return found


def _describe_globals(
    namespace: dict, host: str, graph: str, machine: dict
) -> tuple[dict, dict, dict]:
    """The host's globals as data, the kernel modules they need (key -> text), and the arrays
    (global name -> array); the kernels' machine code into ``machine`` (member -> bytes)."""
    described, modules, arrays = {}, {}, {}
    for name, value in namespace.items():
        if name.startswith("__") or name == host:
            continue
        if isinstance(value, LazyKernel):  # (a variant no call needed yet: compiled now)
            value = value.compile_variant()
            described[name] = _kernel(value, modules, machine, lazy=True)
        elif hasattr(value, "py_func") and _copy_loop(name) is None:
            described[name] = _kernel(value, modules, machine, lazy=False)
        elif isinstance(value, np.ndarray):
            codec.encode(value.dtype, name)
            arrays[name] = value
            described[name] = {"kind": "array"}
        else:
            described[name] = _other(name, value, graph)
    return described, modules, arrays


def _kernel(dispatcher: Any, modules: dict, machine: dict, lazy: bool) -> dict:
    """A kernel global: its module (and the modules it binds, into ``modules``), signatures,
    and the machine code of each (into ``machine``; None for one that cannot be stored)."""
    key = _module(dispatcher, modules)
    signatures = [codec.encode_signature(s) for s in dispatcher.signatures]
    codes = [
        _machine_code(dispatcher, s, key, n, machine) for n, s in enumerate(dispatcher.signatures)
    ]
    functions = dispatcher.py_func.__globals__
    links = [  # (a loop program's kernels, installed before it: ``linking``)
        _kernel(functions[name], modules, machine, lazy=False)
        for name in sorted(linking.kernel_signatures(dispatcher))
    ]
    return {
        "kind": "kernel",
        "module": key,
        "signatures": signatures,
        "machine": codes,
        "lazy": lazy,
        "links": links,
    }


def _machine_code(dispatcher: Any, signature: tuple, key: str, number: int, machine: dict):
    """The machine code entry of ``dispatcher`` for ``signature`` (its members into
    ``machine``), or None when it cannot be stored (``machine_code.describe``)."""
    stored = machine_code.describe(dispatcher, signature)
    if stored is None:
        return None
    entry, code, bitcode = stored
    entry = {**entry, "members": list(layout.machine_members(key, number))}
    machine.update(zip(entry["members"], (code, bitcode)))
    return entry


def _module(dispatcher: Any, modules: dict) -> str:
    key, text = cache.module_of(dispatcher)
    if key not in modules:
        sources.check_kernel_module(text)
        modules[key] = text
        for bound in sources.kernel_keys(text):
            _module(cache.dispatcher_of(bound), modules)
    return key


def _other(name: str, value: Any, graph: str) -> dict:
    """A global that is no kernel and no array: NumPy, the allocator, a dtype, an operator, a
    copy loop, or a value ``codec`` encodes; ``UnsupportedError`` for anything else."""
    if value is np:
        return {"kind": "numpy"}
    if name == "_empty":
        return {"kind": "allocator"}
    if isinstance(value, np.dtype):
        return {"kind": "dtype", "dtype": codec.encode(value, name)["dtype"]}
    if _copy_loop(name) and value is getattr(copies, _copy_loop(name)):
        return {"kind": "copies", "name": _copy_loop(name)}
    if callable(value) and getattr(operator, getattr(value, "__name__", ""), None) is value:
        return {"kind": "operator", "name": value.__name__}
    if name == "_literal_outputs":  # (the graph's outputs: only the literal ones are read)
        value = tuple(None if isinstance(v, Node) else v for v in value)
    try:
        return {"kind": "value", "value": codec.encode(value, name)}
    except UnsupportedError:
        raise UnsupportedError(
            f"exporting {graph}: its compiled code calls Python for {name} "
            f"({type(value).__name__})",
            hint="only a function compiled to kernels and Numba programs can be exported: a "
            "step run by NumPy or the interpreter (a library call, a loop Numba cannot "
            "compile) cannot; gcompile.explain(fn, *args) lists them",
        ) from None


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _write_zip(path: Path, data: dict) -> Path:
    """The archive with ``data`` (name -> bytes) and its manifest, written atomically."""
    manifest = {
        "format": layout.FORMAT,
        "version": layout.VERSION,
        "sha256": {name: layout.digest(body) for name, body in sorted(data.items())},
    }
    handle, temporary = tempfile.mkstemp(dir=path.parent or ".", suffix=".tmp")
    os.close(handle)
    try:
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(layout.MANIFEST, json.dumps(manifest, indent=1))
            for name, body in sorted(data.items()):
                archive.writestr(name, body)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _copy_loop(name: str) -> str | None:
    """The ``copies`` loop a host global ``_<name>`` is, or None."""
    return name[1:] if name.startswith("_") and name[1:] in copies.HOST_COPIES else None
