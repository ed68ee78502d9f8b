"""Kernels called by loop programs through their symbols, not compiled again inside them.

Numba links the LLVM module of each function a compiled function calls into the caller's, and
optimises and compiles the whole again (so that it may inline). A loop program so redid the
work of every kernel it calls: in npbench's resnet, 1.3 s of a 6 s first call. Here a kernel's
module is linked into its callers as declarations of its functions (``KernelLinks``): the
program calls the kernel's machine code, which is already in the process's engine, by name.

For that name to be one in every process (a program's machine code from the disk cache refers
to it), a kernel is compiled by ``KernelCompiler``, which fixes the per-process counter Numba
puts in each function's symbol: a kernel module (``gcompile_kernels.k_<key>``) holds one
function, so its module names it.

A program's machine code loaded from the disk cache needs its kernels' loaded first. Beside
each program signature the cache keeps the signatures its kernels were compiled for
(``kernel_signatures``, a ``.links`` file, written before Numba writes the program's code);
``guard_program_cache`` loads those before the program, and compiles the program where that
record is missing.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

from llvmlite import binding as llvm
from numba.core import codegen
from numba.core.compiler import Compiler

from .files import write_atomically

# A kernel's functions' unique id; Numba's own counter starts at 1, so no other function has it.
KERNEL_UID = 0
_KERNEL_PREFIX = "_ZN16gcompile_kernels"
_KERNEL_TAG = f"6kernelB{len(f'v{KERNEL_UID}')}v{KERNEL_UID}"
# A kernel of at most this many LLVM instructions is linked whole into the programs calling it,
# which may inline it: the kernels of a few elements called on every trip of an inner loop
# (sweeps H, I, L: 9 to 203 instructions) ran 2-5x slower called by name. npbench resnet's 9
# kernels hold 100 to 2953: linked whole, its first call took 5.6 s; by name past 250, 4.8 s.
INLINED_SIZE = 250


class KernelCompiler(Compiler):
    """Numba's compiler, naming the function by its module alone (``KERNEL_UID``)."""

    def _compile_bytecode(self):
        self.state.func_id.unique_id = KERNEL_UID
        self.state.func_id.unique_name = f"{self.state.func_id.func_qualname}${KERNEL_UID}"
        return super()._compile_bytecode()


class KernelLinks:
    """What a caller's library links of a kernel's: declarations of its functions (Numba's
    ``CodeLibrary.finalize`` reads ``_reload_init`` and ``_get_module_for_linking``)."""

    def __init__(self, library: object, declarations: object):
        self.library = library
        self._reload_init = library._reload_init
        self._declarations = declarations

    def _ensure_finalized(self) -> None:
        self.library._ensure_finalized()

    def _get_module_for_linking(self) -> object:
        return self._declarations


def _declarations(library: object) -> object | None:
    """A module declaring the kernel functions ``library`` defines, or None when it is no
    kernel's library, or a small one (linked whole: a program inlines it, as it did the
    kernels of a few elements it calls on every trip of an inner loop). (Numba's module for
    linking has them ``linkonce_odr``; the machine code loaded in the engine defines them.)"""
    module = library._get_module_for_linking()
    kernels = [f for f in module.functions if not f.is_declaration and _is_kernel_function(f.name)]
    if not kernels or not _larger_than(kernels, INLINED_SIZE):
        return None
    lines = [f'target triple = "{module.triple}"', f'target datalayout = "{module.data_layout}"']
    for function in kernels:
        result, _, parameters = str(function.global_value_type).partition(" (")
        lines.append(f'declare {result} @"{function.name}"({parameters}')
    return llvm.parse_assembly("\n".join(lines) + "\n")


def _larger_than(functions: list, size: int) -> bool:
    """Whether ``functions`` hold more than ``size`` LLVM instructions (counted up to that)."""
    count = 0
    for function in functions:
        for block in function.blocks:
            count += sum(1 for _ in block.instructions)
            if count > size:
                return True
    return False


def _is_kernel_function(name: str) -> bool:
    return name.startswith(_KERNEL_PREFIX) and _KERNEL_TAG in name


_numba_add_linking_library = codegen.CPUCodeLibrary.add_linking_library


def _add_linking_library(self, library):
    """Numba's, a kernel's library replaced by its ``KernelLinks``."""
    links = getattr(library, "_gcompile_links", None)
    if links is None and not isinstance(library, KernelLinks):
        library._ensure_finalized()
        declarations = _declarations(library)
        links = library if declarations is None else KernelLinks(library, declarations)
        library._gcompile_links = links
    _numba_add_linking_library(self, library if links is None else links)


codegen.CPUCodeLibrary.add_linking_library = _add_linking_library


def kernels_loaded(module: object, codegen: object) -> bool:
    """Whether every kernel function ``module`` (a library's module for linking) calls by its
    symbol is defined in ``codegen``'s engine (its machine code may then be loaded)."""
    engine = codegen._engine
    return all(
        engine.is_symbol_defined(f.name)
        for f in module.functions
        if f.is_declaration and _is_kernel_function(f.name)
    )


def guard_program_cache(dispatcher: object, path: Path, load) -> None:
    """Make the disk cache of ``dispatcher`` (a loop program's, its module at ``path``) load
    its kernels first: saving a signature records its kernels' signatures beside the module
    first; loading one loads the kernels recorded (``load(kernel, signature)``), and finds
    nothing where there is no record (the program compiles). Every load, Numba's own or
    ``cache.compile_from_cache``'s, goes through the cache's ``_load_overload``."""
    cache = getattr(dispatcher, "_cache", None)
    if cache is None or not hasattr(cache, "_load_overload"):
        return
    numba_load, numba_save = cache._load_overload, cache._save_overload
    functions = dispatcher.py_func.__globals__

    def load_overload(signature, target_context):
        try:
            kernels = pickle.loads(_record_path(path, signature).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None
        if not set(kernels) <= set(functions):
            return None
        for name, signatures in kernels.items():
            for kernel_signature in signatures:
                load(functions[name], kernel_signature)
        return numba_load(signature, target_context)

    def save_overload(signature, data):
        kernels = kernel_signatures(dispatcher, data.library)
        write_atomically(_record_path(path, signature), pickle.dumps(kernels))
        numba_save(signature, data)

    cache._load_overload, cache._save_overload = load_overload, save_overload


def kernel_signatures(dispatcher: object, library: object = None) -> dict:
    """The kernels ``dispatcher``'s module binds (global name -> their compiled signatures);
    given ``library``, a program's compiled code, only the signatures it calls."""
    called = None
    if library is not None:
        module = library._get_module_for_linking()
        called = {f.name for f in module.functions if f.is_declaration}
    found = {}
    for name, value in dispatcher.py_func.__globals__.items():
        module_name = getattr(getattr(value, "py_func", None), "__module__", "") or ""
        if value is dispatcher or not module_name.startswith("gcompile_kernels.k_"):
            continue
        found[name] = [
            signature
            for signature, overload in value.overloads.items()
            if called is None
            or getattr(overload, "fndesc", None) is None
            or overload.fndesc.mangled_name in called
        ]
    return found


def _record_path(path: Path, signature: tuple) -> Path:
    digest = hashlib.sha256(repr(tuple(signature)).encode()).hexdigest()[:16]
    return path.with_name(f"{path.stem}.{digest}.links")
