"""Machine code in an archive: Numba's object code of each kernel signature, for trusted loads.

At export, each kernel signature the host calls is stored as Numba compiled it: its object
code, the bitcode Numba keeps beside it for linking, the name of the function's Python wrapper
and the environments its code reads, with their constants (dtypes that boxing an array reads:
``codec`` data) (``describe``). Code that Numba loaded from its disk cache (the engine took
its object code) is emitted again from that bitcode. A signature whose code holds constants of
other objects, or needs set-up on reload, is not stored: its load compiles it.

``gcompile.load(path, trust_machine_code=True)`` installs that code as the dispatcher's
overload (``install``) instead of compiling the stored source, when it was made for this CPU
(``magic``: the target triple, CPU name and features Numba compiles for). Nothing checks what
machine code does: as with a pickle, only a file you trust should be loaded so. A default load
never runs it (the stored sources pass the gate and are compiled).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from llvmlite import binding as llvm
from numba import _dynfunc
from numba.core import types as nbtypes
from numba.core.environment import Environment, lookup_environment
from numba.core.registry import cpu_target
from numba.core.runtime.nrt import rtsys
from numba.core.typing import signature as make_signature

from ..errors import UnsupportedError
from . import codec

_ENVIRONMENT_PREFIX = "_ZN08NumbaEnv"


def magic() -> list:
    """What machine code Numba makes here is valid for: the target triple, CPU and features."""
    return list(cpu_target.target_context.codegen().magic_tuple())


def describe(dispatcher: object, signature: tuple) -> tuple[dict, bytes, bytes] | None:
    """``(entry, object code, bitcode)`` of ``dispatcher`` compiled for ``signature``, or None
    when that code cannot be installed elsewhere (Python constants, set-up on reload)."""
    compiled = dispatcher.overloads.get(tuple(signature))
    if compiled is None or compiled.objectmode or compiled.reload_init:
        return None
    library = compiled.library
    linked = library._get_module_for_linking()
    bitcode = linked.as_bitcode()
    code = library._compiled_object
    if code is None:  # (loaded from Numba's disk cache: the engine took its object code)
        code = library.codegen._tm.emit_object(llvm.parse_bitcode(bitcode))  # (on a copy)
    names = {v.name for v in linked.global_variables if v.name.startswith(_ENVIRONMENT_PREFIX)}
    own = compiled.fndesc.env_name
    try:
        environments = {name: _constants(name) for name in sorted(names | {own})}
    except UnsupportedError:
        return None
    entry = {
        "library": library.name,
        "wrapper": compiled.fndesc.llvm_cpython_wrapper_name,
        "environment": own,
        "environments": environments,
    }
    return entry, code, bitcode


def _constants(name: str) -> list:
    """The constants of environment ``name`` as ``codec`` data (UnsupportedError: others)."""
    environment = lookup_environment(name)
    consts = [] if environment is None else list(environment.consts)
    return [codec.encode(value, "a constant of compiled code") for value in consts]


@dataclass
class _Overload:
    """What a dispatcher keeps of an overload to call it (``Dispatcher.add_overload``)."""

    signature: object
    entry_point: object
    library: object
    objectmode: bool = False


def install(dispatcher: object, signature: tuple, entry: dict, code: bytes, bitcode: bytes):
    """``dispatcher`` given the stored machine code for ``signature`` as its overload (no
    typing, no compiling). ``dispatcher`` already compiled for it: left as it is."""
    if tuple(signature) in dispatcher.overloads:
        return
    context = dispatcher.targetctx
    rtsys.initialize(context)  # (the runtime the code calls; Numba's compiler stays unset)
    library = context.codegen().unserialize_library(
        (str(entry["library"]), "object", (code, bitcode))
    )
    pointer = library.get_pointer_to_function(str(entry["wrapper"]))
    if not pointer:
        raise ValueError(f"the machine code lacks {entry['wrapper']}")
    function = dispatcher.py_func
    environments = {
        str(name): _environment(str(name), function.__globals__, consts)
        for name, consts in entry["environments"].items()
    }
    for name, environment in environments.items():
        library.codegen.set_env(name, environment)
    own = environments[str(entry["environment"])]
    entry_point = _dynfunc.make_function(
        sys.modules[function.__module__],
        function.__name__,
        f"compiled wrapper for {function.__qualname__!r} (loaded machine code)",
        pointer,
        own,
        (library,),
    )
    # the return type is unused: nothing compiles a call to a loaded overload
    overload = _Overload(make_signature(nbtypes.none, *signature), entry_point, library)
    dispatcher.add_overload(overload)


def _environment(name: str, globals_: dict, consts: list) -> Environment:
    """The live environment ``name``, or a new one over ``globals_`` holding ``consts``
    (``codec`` data)."""
    found = lookup_environment(name)
    if found is None:
        found = Environment(globals_)
        found.consts[:] = [codec.decode(value) for value in consts]
        found.env_name = name
        Environment._memo[name] = found
    return found
