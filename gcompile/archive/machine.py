"""Machine code in an archive: Numba's object code of each kernel signature, for trusted loads.

At export, each kernel signature the host calls is stored as Numba compiled it: its object
code, the bitcode Numba keeps beside it for linking, the name of the function's Python wrapper
(whose mangled name spells the argument types), the environments its code refers to, with the
constants of the wrapper's own (dtypes that boxing an array reads: ``codec`` data), and the
set-up to run before it (``reload``: the start of Numba's threads for a parallel kernel)
(``describe``). Code that Numba loaded from its disk cache (the engine took its object code) is
emitted again from that bitcode. A signature whose wrapper holds constants of other objects,
or that needs other set-up, is not stored: its load compiles it.

``gcompile.load(path, trust_machine_code=True)`` installs that code as the dispatcher's
overload (``install``) instead of compiling the stored source, when it was made for this CPU
and Python (``magic``). Nothing checks what machine code does: as with a pickle, only a file
you trust should be loaded so. The dispatcher is the process's one for that kernel text: once
installed, the code serves every function of this process that calls that kernel. A default
load never installs it (the stored sources pass the gate and are compiled).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from llvmlite import binding as llvm
from numba import _dynfunc
from numba.core import types as nbtypes
from numba.core.compiler_lock import global_compiler_lock
from numba.core.environment import Environment, lookup_environment
from numba.core.itanium_mangler import mangle_args
from numba.core.registry import cpu_target
from numba.core.runtime.nrt import rtsys
from numba.core.typed_passes import _reload_parfors
from numba.core.typing import signature as make_signature

from ..backends.numba import linking
from ..errors import UnsupportedError
from . import codec

# the set-up a kernel's code may need before it runs (Numba's ``reload_init``), by name
_RELOADS = {"parfors": _reload_parfors}

_ENVIRONMENT_PREFIX = "_ZN08NumbaEnv"


def magic() -> list:
    """What machine code Numba makes here is valid for: the target triple, CPU name and
    features, and the Python it calls (the wrapper calls its C API)."""
    python = f"Python {sys.version_info[0]}.{sys.version_info[1]}"
    return [*cpu_target.target_context.codegen().magic_tuple(), python]


def describe(dispatcher: object, signature: tuple) -> tuple[dict, bytes, bytes] | None:
    """``(entry, object code, bitcode)`` of ``dispatcher`` compiled for ``signature``, or None
    when that code cannot be installed elsewhere (Python constants, other set-up)."""
    compiled = dispatcher.overloads.get(tuple(signature))
    if isinstance(compiled, _Overload):  # (installed from an archive: stored again as it was)
        return compiled.stored
    if compiled is None or compiled.objectmode:
        return None
    names = {function: name for name, function in _RELOADS.items()}
    if any(function not in names for function in compiled.reload_init):
        return None
    library = compiled.library
    linked = library._get_module_for_linking()
    bitcode = linked.as_bitcode()
    code = library._compiled_object
    if code is None:  # (loaded from Numba's disk cache: the engine took its object code)
        code = library.codegen._tm.emit_object(llvm.parse_bitcode(bitcode))  # (on a copy)
    own = compiled.fndesc.env_name
    try:
        constants = _constants(own)
    except UnsupportedError:
        return None
    wrapper = compiled.fndesc.llvm_cpython_wrapper_name
    entry = {
        "library": library.name,
        "wrapper": wrapper if any(f.name == wrapper for f in linked.functions) else None,
        "function": compiled.fndesc.mangled_name,
        "environment": own,
        "constants": constants,
        "environments": sorted(
            v.name for v in linked.global_variables if v.name.startswith(_ENVIRONMENT_PREFIX)
        ),
        "reload": sorted({names[function] for function in compiled.reload_init}),
    }
    return entry, code, bitcode


def _constants(name: str) -> list:
    """The constants of environment ``name`` as ``codec`` data (UnsupportedError: others)."""
    environment = lookup_environment(name)
    consts = [] if environment is None else list(environment.consts)
    return [codec.encode(value, "a constant of compiled code") for value in consts]


@dataclass
class _Overload:
    """What a dispatcher keeps of an overload to call it (``Dispatcher.add_overload``), with
    what keeps its code's references alive and what it was installed from."""

    signature: object
    entry_point: object
    library: object
    environments: list = field(default_factory=list)
    stored: tuple = ()
    objectmode: bool = False


def install(dispatcher: object, signature: tuple, entry: dict, code: bytes, bitcode: bytes):
    """``dispatcher`` given the stored machine code for ``signature`` as its overload (no
    typing, no compiling): True; False when it already has one for ``signature`` (left as it
    is), or when the code calls kernels whose code is not loaded (``linking``). ValueError
    when the code was not compiled for ``signature``."""
    if entry["wrapper"] is None:
        return _install_linked(dispatcher, signature, entry, code, bitcode)
    wrapper = str(entry["wrapper"])
    if not wrapper.endswith(mangle_args(tuple(signature))):
        raise ValueError(f"machine code compiled for other argument types than {signature}")
    reloads = [_RELOADS[str(name)] for name in entry["reload"]]
    with global_compiler_lock:  # (Numba's, held wherever its engine takes code)
        if tuple(signature) in dispatcher.overloads:
            return False
        context = dispatcher.targetctx
        if not linking.kernels_loaded(llvm.parse_bitcode(bitcode), context.codegen()):
            return False  # (a loop program whose kernels were compiled here, not installed)
        rtsys.initialize(context)  # (the runtime the code calls; Numba's compiler stays unset)
        for reload in reloads:
            reload()
        library = context.codegen().unserialize_library(
            (str(entry["library"]), "object", (code, bitcode))
        )
        pointer = library.get_pointer_to_function(wrapper)
        if not pointer:
            raise ValueError(f"the machine code lacks {wrapper}")
        function = dispatcher.py_func
        own = _environment(str(entry["environment"]), function.__globals__, entry["constants"])
        environments = [own] + [
            _environment(str(name), function.__globals__, []) for name in entry["environments"]
        ]
        for environment in environments:
            library.codegen.set_env(environment.env_name, environment)
        entry_point = _dynfunc.make_function(
            sys.modules[function.__module__],
            function.__name__,
            f"compiled wrapper for {function.__qualname__!r} (loaded machine code)",
            pointer,
            own,
            (library,),
        )
        # (the return type is unused: nothing compiles a call to a loaded overload)
        overload = _Overload(
            make_signature(nbtypes.none, *signature),
            entry_point,
            library,
            environments,
            (entry, code, bitcode),
        )
        dispatcher.add_overload(overload)
    return True


_LINKED: dict = {}  # (dispatcher id, signature) -> the library of a kernel only programs call


def _install_linked(dispatcher: object, signature: tuple, entry: dict, code, bitcode) -> bool:
    """The stored machine code of a kernel only loop programs call (no Python wrapper): put in
    Numba's engine, where the programs' code finds its function by name (``linking``), not
    made an overload (a program compiled here compiles the kernel again). True when
    installed, False when it was already."""
    function = str(entry["function"])  # (its signature may hold literals the codec drops)
    with global_compiler_lock:
        if (id(dispatcher), tuple(signature)) in _LINKED:
            return False
        context = dispatcher.targetctx
        rtsys.initialize(context)
        for reload in (_RELOADS[str(name)] for name in entry["reload"]):
            reload()
        library = context.codegen().unserialize_library(
            (str(entry["library"]), "object", (code, bitcode))
        )
        if not library.codegen._engine.is_symbol_defined(function):
            raise ValueError(f"the machine code lacks {function}")
        for name in entry["environments"]:
            library.codegen.set_env(name, _environment(name, dispatcher.py_func.__globals__, []))
        _LINKED[(id(dispatcher), tuple(signature))] = (dispatcher, library)
    return True


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
