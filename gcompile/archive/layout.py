"""What an export archive holds, shared by the writer and the reader.

::

    manifest.json       {"format": "gcompile-export", "version": 1, "sha256": {name: hex}}
    meta.json           versions, parameters, guards, the host's globals (``codec`` data)
    graph.txt           the compiled (optimised and fused) graph's text form, for reading
    code.txt            the readable generated code (fn.code), for reading
    host.py             the host function's source
    check.py            the size check's source (when the entry has one)
    modules/<key>.py    each kernel and loop program module (Numba source)
    arrays/<name>.npy   each array the code reads (NumPy's format, never pickled)
    machine/<key>-<n>.o, .bc
                        Numba's object code and linking bitcode of the kernel of module <key>
                        for its signature <n> (``machine``: run only by a trusted load)

``graph.txt`` and ``code.txt`` are never run: the sources are.
"""

from __future__ import annotations

import hashlib
import re

FORMAT = "gcompile-export"
# (2: kernel modules import copies whole; 3: machine code, meta.json's "machine"; 4: a loop
# program's code calls its kernels by name, their machine code stored as its "links")
VERSION = 4
GRAPH_HEADER = f"# {FORMAT} graph text, version {VERSION} (the compiled graph, stage fused)\n"

MANIFEST = "manifest.json"
FIXED = ("meta.json", "graph.txt", "code.txt", "host.py", "check.py")
NAMES = re.compile(
    r"modules/[0-9a-f]{40}\.py|arrays/[A-Za-z_][A-Za-z0-9_]*\.npy"
    r"|machine/[0-9a-f]{40}-[0-9]+\.(o|bc)"
)
MAX_BYTES = 1 << 30  # what a loader unpacks at most (a zip claiming more is refused)


def digest(data: bytes) -> str:
    """The SHA-256 of ``data``, as the manifest records it."""
    return hashlib.sha256(data).hexdigest()


def machine_members(key: str, number: int) -> tuple[str, str]:
    """The members holding the object code and the bitcode of kernel module ``key``'s
    signature ``number`` (``machine``)."""
    return f"machine/{key}-{number}.o", f"machine/{key}-{number}.bc"


def allowed_name(name: str) -> bool:
    """Whether ``name`` is a member an archive may have (besides the manifest)."""
    return name in FIXED or NAMES.fullmatch(name) is not None


def versions() -> dict:
    """The versions of what generated code depends on: gcompile, NumPy, Numba."""
    import numba
    import numpy

    from .. import __version__

    return {"gcompile": __version__, "numpy": numpy.__version__, "numba": numba.__version__}
