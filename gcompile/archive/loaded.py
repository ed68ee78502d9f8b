"""``gcompile.load``: the callable of a verified archive (``reader``).

Its kernels are installed in the disk cache from their stored sources, keyed as this
environment keys them (a module's references to the kernels it calls rewritten to those keys),
and compiled for their stored signatures (Numba's machine code comes from the disk cache when
it is there, without setting up Numba's compiler: ``cache.compile_from_cache``). A trusted
load (``trust_machine_code=True``) installs the archive's machine code instead (``machine``),
where it was made for this CPU. The host function runs in a namespace the loader builds from
the archive's description of its globals, with a few builtins only. A call binds its arguments
as a compiled function does (``guards.ArgumentBinder``; other libraries' arrays as NumPy
arrays), and raises ``GuardError`` when they do not match the guards: there is no source to
trace again.
"""

from __future__ import annotations

import builtins
import inspect
import operator
import threading
import warnings
from typing import Any

import numpy as np

from ..backends.numba import cache, copies
from ..backends.numba.host import BufferPool
from ..backends.numba.kernels import LazyKernel
from ..backends.numba.program_entry import GuardFailure
from ..errors import ArchiveError, GcompileWarning, GuardError, UnsupportedError
from ..guards import ArgumentBinder, guard_text
from ..interop import results
from ..ir.pytree import unflatten
from . import codec, reader, sources
from . import machine as machine_code

# The host's builtins: those its source may name (``sources``), and ``__import__``, which the
# source cannot name (nor import: the gate refuses both) but Numba's dispatchers use when called.
_BUILTINS = {name: getattr(builtins, name) for name in (*sources.HOST_BUILTINS, "__import__")}


def load(path: Any, *, trust_machine_code: bool = False) -> "LoadedFunction":
    """The function exported to ``path`` (``gcompile.export``), ready to call: no source, no
    trace. Raises ``ArchiveError`` for a file it refuses (see ``gcompile.archive.reader``).

    ``trust_machine_code``: run the machine code the archive holds instead of compiling its
    sources (much faster with an empty cache), where it was made for this CPU. Nothing can
    check what machine code does: only for files you trust, as with pickles. By default the
    sources, which pass gcompile's gate, are compiled and the machine code is never run."""
    archive = reader.read(path)
    try:
        return LoadedFunction(archive, trust_machine_code)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        if isinstance(error, (GuardError, ArchiveError)):
            raise
        raise ArchiveError(
            f"{archive.path}: meta.json is not as an export writes it ({error!r})"
        ) from None


class LoadedFunction:
    """A function loaded from an export archive.

    Attributes: ``name``; ``guards``: what calls must meet (one line per argument, then the
    sizes); ``graph_text`` and ``code``: the compiled graph and the generated code, to read;
    ``versions``: what it was made with; ``kernels``: how many kernel signatures were
    installed from the archive's machine code, and how many otherwise (compiled from their
    sources, or compiled already in this process).
    """

    def __init__(self, archive: reader.Archive, trust_machine_code: bool = False):
        meta = archive.meta
        self.name = meta["name"]
        self.guards = list(meta["guards"])
        self.versions = dict(meta["versions"])
        self.graph_text = archive.texts["graph.txt"]
        self.code = archive.texts["code.txt"]
        self._binder = ArgumentBinder(_stub(meta["parameters"]), meta["static_argnames"])
        self._binder.trace_as_sizes(frozenset(meta["dynamic_ints"]))
        self._binder.static_scalars = set(meta["static_scalars"])
        self._key = codec.decode(meta["key"])
        self._out = codec.decode(meta["out_spec"])
        self._written = [int(i) for i in meta["written"]]
        self._labels = list(meta["labels"])
        self.kernels = {"source": 0, "machine code": 0}
        members = _trusted_machine_code(archive) if trust_machine_code else None
        self._host = _host(archive, members, self.kernels)
        self._check = _run(archive.texts["check.py"], "check", {}) if meta["check"] else None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            bound = self._binder.bind(args, kwargs)
        except UnsupportedError as error:
            raise GuardError(f"{self.name}: {error}") from None
        if codec.plain_key(bound.key) != self._key:
            raise GuardError(self._mismatch(bound))
        inputs = bound.inputs()
        if self._check is not None and not self._check(inputs):
            raise GuardError(self._mismatch(bound))
        self._refuse_overlap(inputs)
        try:
            outputs = self._host(inputs)
        except GuardFailure:  # (a program's own check of its sizes)
            raise GuardError(self._mismatch(bound)) from None
        except TypeError as error:  # (a kernel given types it was not compiled for)
            raise GuardError(f"{self._mismatch(bound)}\n({error})") from None
        convert = results.converter(bound.array_type) or _same
        return (
            convert(outputs[0])
            if self._out.kind == "leaf"
            else unflatten(self._out, list(outputs), convert)
        )

    def _mismatch(self, bound) -> str:
        """Which arguments differ from the guards, and the guards."""
        spec, leaves = codec.plain_key(bound.key)
        differ = []
        if spec != self._key[0]:
            differ.append("the arguments' structure")
        for (path, _), leaf, want in zip(bound.leaves, leaves, self._key[1]):
            if leaf != want:
                differ.append(guard_text(_full(leaf), path))
        got = "; ".join(differ) or "their sizes"
        guards = "\n  ".join(self.guards)
        return (
            f"loaded function {self.name} called with arguments its guards do not admit "
            f"({got}); it was exported for:\n  {guards}\nexport it again for these arguments"
        )

    def _refuse_overlap(self, inputs: list) -> None:
        """A written argument sharing memory with another one: eager NumPy would interleave
        the reads and writes; a loaded function has no eager fallback."""
        for written in self._written:
            for position, value in enumerate(inputs):
                if (
                    position != written
                    and isinstance(value, np.ndarray)
                    and np.may_share_memory(inputs[written], value)
                ):
                    raise GuardError(
                        f"{self.name}: {self._labels[written]} is written and shares memory "
                        f"with {self._labels[position]}: pass separate arrays"
                    )

    def __repr__(self) -> str:
        return f"<gcompile.LoadedFunction {self.name}>"


def _same(value: Any) -> Any:
    return value


def _full(leaf: tuple) -> tuple:
    """A plain key's leaf as ``guard_text`` reads it (an array's library: none)."""
    return leaf + (None,) if leaf[0] == "array" else leaf


_KINDS = {
    int(kind): kind
    for kind in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.VAR_KEYWORD,
    )
}


def _stub(parameters: list) -> Any:
    """An object with the exported function's signature (for binding calls)."""
    listed = []
    for item in parameters:
        name, kind = str(item[0]), _KINDS[int(item[1])]
        default = codec.decode(item[2]) if len(item) > 2 else inspect.Parameter.empty
        listed.append(inspect.Parameter(name, kind, default=default))

    def stub(*args, **kwargs):
        raise TypeError("a signature only")

    stub.__signature__ = inspect.Signature(listed)
    return stub


def _trusted_machine_code(archive: reader.Archive) -> dict | None:
    """The archive's machine code (member -> bytes) if made for this CPU, else None (warned)."""
    made, here = archive.meta["machine"], machine_code.magic()
    if made == here:
        return archive.machine
    warnings.warn(
        f"{archive.path}: its machine code was made for {made[0]} {made[1]}, here "
        f"{here[0]} {here[1]} (or other CPU features): its kernels are compiled from source",
        GcompileWarning,
        stacklevel=4,
    )
    return None


def _host(archive: reader.Archive, members: dict | None, counts: dict) -> Any:
    """The host function, in a namespace built from the archive's description (its kernels'
    machine code from ``members``, member name -> bytes, unless None: compiled from source)."""
    host = archive.meta["host"]
    dispatchers = _install(archive.texts)
    namespace, lazy = {}, []
    pool = BufferPool()
    kernels = _Kernels(dispatchers, members, counts)
    for name, described in host["globals"].items():
        namespace[name] = _global(name, described, kernels, archive, pool)
        if isinstance(namespace[name], LazyKernel):
            lazy.append(namespace[name])
    function = _run(archive.texts["host.py"], host["function"], namespace)
    for stub in lazy:
        stub.namespace = function.__globals__
    return function


def _global(name: str, described: dict, kernels: "_Kernels", archive, pool: BufferPool) -> Any:
    """One global of the host, from its description (``writer._describe_globals``)."""
    kind = described["kind"]
    if kind == "kernel":
        if described["lazy"]:
            return LazyKernel(name, lambda: kernels.compiled(described))
        return kernels.compiled(described)
    if kind == "array":
        return archive.arrays[name]
    if kind == "numpy":
        return np
    if kind == "allocator":
        return pool.empty
    if kind == "dtype":
        return codec.decode({"dtype": described["dtype"]})
    if kind == "copies" and described["name"] in copies.HOST_COPIES:
        return getattr(copies, described["name"])
    if kind == "operator" and described["name"].startswith("__"):
        return getattr(operator, described["name"])
    if kind == "value":
        return codec.decode(described["value"])
    raise ValueError(f"a global {name} of kind {kind!r}")


def _install(texts: dict) -> dict:
    """Each stored module installed in the disk cache (those it binds first, its references
    rewritten to their keys here): stored key -> dispatcher."""
    stored = {n[len("modules/") : -3]: t for n, t in texts.items() if n.startswith("modules/")}
    keys, dispatchers = {}, {}
    while len(keys) < len(stored):
        ready = [
            k
            for k, t in stored.items()
            if k not in keys and all(b in keys for b in sources.kernel_keys(t))
        ]
        if not ready:
            raise ValueError("modules bind modules the archive lacks")
        for old in ready:
            text = stored[old]
            for bound in sources.kernel_keys(text):
                text = text.replace(
                    f"_dispatcher_of('{bound}')", f"_dispatcher_of('{keys[bound]}')"
                )
            keys[old], dispatchers[old] = cache.install(text)
    return dispatchers


_READYING = threading.RLock()  # (held while a dispatcher is made ready for its signatures)


class _Kernels:
    """The host's kernels made ready: each stored signature installed from the archive's
    machine code (a trusted load), or compiled from source (machine code from the disk cache
    if there); ``counts`` says how many of each."""

    def __init__(self, dispatchers: dict, members: dict | None, counts: dict):
        """``members``: the archive's machine code by member name (None: compile sources)."""
        self.dispatchers, self.members, self.counts = dispatchers, members, counts

    def compiled(self, described: dict) -> Any:
        """The dispatcher of a kernel global, ready for its signatures and no other types."""
        if self.members is not None:
            for link in described.get("links", ()):
                self._install_link(link)
        dispatcher = self.dispatchers[described["module"]]
        with _READYING:  # (loads in threads: one enables compiling while another disables it)
            for number, signature in enumerate(described["signatures"]):
                signature = codec.decode_signature(signature)
                entry = described["machine"][number] if self.members is not None else None
                if entry is None or not self._install(dispatcher, signature, entry):
                    cache.compile_from_cache(dispatcher, signature)
                    self.counts["source"] += 1
            # Other types are no call the guards admit: Numba then raises instead of compiling
            # them (``cache.load`` enables compiling again for a compiled function needing it).
            dispatcher.disable_compile()
        return dispatcher

    def _install_link(self, described: dict) -> None:
        """The stored machine code of a kernel a loop program calls (``linking``), installed
        where there is some; nothing compiled: the program's own load then compiles the
        kernels it lacks (``linking.guard_program_cache``), and the program with them."""
        dispatcher = self.dispatchers[described["module"]]
        with _READYING:
            for signature, entry in zip(described["signatures"], described["machine"]):
                if entry is not None:
                    self._install(dispatcher, codec.decode_signature(signature), entry)

    def _install(self, dispatcher: Any, signature: tuple, entry: dict) -> bool:
        """Whether the stored code for ``signature`` was installed (False: the dispatcher of
        this process has one already)."""
        try:
            code, bitcode = (self.members[str(member)] for member in entry["members"])
            installed = machine_code.install(dispatcher, signature, entry, code, bitcode)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ArchiveError(
                f"a machine code entry is not as an export writes it ({error})"
            ) from None
        self.counts["machine code"] += installed
        return installed


def _run(source: str, name: str, namespace: dict) -> Any:
    """Define function ``name`` of a checked host source, with the few builtins only."""
    scope = {**namespace, "__builtins__": _BUILTINS}
    exec(compile(source, f"<gcompile loaded {name}>", "exec"), scope)
    return scope[name]
