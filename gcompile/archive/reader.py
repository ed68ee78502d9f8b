"""Reading an export archive (``layout``): everything checked before anything is used.

In order: the file is a zip whose members are the manifest and names the layout allows; the
manifest is of this format and of a version this gcompile reads; every member is listed with
its SHA-256 and matches it, and none is missing or extra; ``meta.json`` is JSON of the same
format, made with the same gcompile, NumPy and Numba versions; every source passes the gate
(``sources``) and every array is NumPy's format without pickles. Any failure raises
``ArchiveError`` saying what is wrong; nothing of the file has run by then.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np

from ..errors import ArchiveError
from . import layout, sources


@dataclass
class Archive:
    """A verified archive: its meta data, its sources by name, its arrays by global name, its
    machine code by member name (bytes, run only by a trusted load)."""

    path: str
    meta: dict
    texts: dict
    arrays: dict
    machine: dict


def read(path: str | os.PathLike) -> Archive:
    """The verified archive at ``path``; ``ArchiveError`` when it is not one this gcompile
    can load safely (see the module docstring)."""
    path = os.fspath(path)
    members = _members(path)
    manifest = _json(members.pop(layout.MANIFEST, None), path, layout.MANIFEST)
    _check_format(manifest, path, layout.MANIFEST)
    recorded = manifest.get("sha256")
    if not isinstance(recorded, dict) or set(recorded) != set(members):
        missing = sorted(set(recorded or {}) - set(members))
        extra = sorted(set(members) - set(recorded or {}))
        raise ArchiveError(f"{path}: members missing {missing} or not in the manifest {extra}")
    for name, body in members.items():
        if layout.digest(body) != recorded[name]:
            raise ArchiveError(f"{path}: {name} does not match its SHA-256 in the manifest")
    meta = _json(members.get("meta.json"), path, "meta.json")
    _check_format(meta, path, "meta.json")
    _check_versions(meta, path)
    machine = {n: b for n, b in members.items() if n.startswith("machine/")}
    texts = {n: b.decode() for n, b in members.items() if not n.startswith(("arrays/", "machine/"))}
    _check_sources(texts, meta, path)
    arrays = {
        n.removeprefix("arrays/").removesuffix(".npy"): _array(b, path, n)
        for n, b in members.items()
        if n.startswith("arrays/")
    }
    return Archive(path, meta, texts, arrays, machine)


def _members(path: str) -> dict:
    """Every member's bytes; refused when the zip is damaged, too large or has other names."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if sum(info.file_size for info in infos) > layout.MAX_BYTES:
                raise ArchiveError(f"{path}: unpacks to more than {layout.MAX_BYTES} bytes")
            names = [info.filename for info in infos]
            odd = [n for n in names if n != layout.MANIFEST and not layout.allowed_name(n)]
            if odd or len(set(names)) != len(names):
                raise ArchiveError(f"{path}: members an export never has: {odd or names}")
            return {info.filename: archive.read(info) for info in infos}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error) as error:
        raise ArchiveError(f"{path}: not a complete zip archive ({error})") from None
    except OSError as error:
        raise ArchiveError(f"{path}: cannot be read ({error})") from None


def _json(body: bytes | None, path: str, name: str) -> dict:
    if body is None:
        raise ArchiveError(f"{path}: no {name} (not a gcompile export)")
    try:
        value = json.loads(body.decode())
    except (UnicodeDecodeError, ValueError):
        raise ArchiveError(f"{path}: {name} is not JSON (not a gcompile export)") from None
    if not isinstance(value, dict):
        raise ArchiveError(f"{path}: {name} is not a JSON object")
    return value


def _check_format(data: dict, path: str, name: str) -> None:
    if data.get("format") != layout.FORMAT:
        raise ArchiveError(f"{path}: {name} is not of a gcompile export")
    version = data.get("version")
    if not isinstance(version, int) or version > layout.VERSION:
        raise ArchiveError(
            f"{path}: export format version {version!r}, newer than this gcompile reads "
            f"({layout.VERSION}): load it with the gcompile that made it"
        )
    if version != layout.VERSION:
        raise ArchiveError(
            f"{path}: export format version {version}, this gcompile reads only {layout.VERSION}"
        )


def _check_versions(meta: dict, path: str) -> None:
    """The generated code is valid for the versions it was made with only."""
    made, here = meta.get("versions"), layout.versions()
    if made != here:
        differ = (
            ", ".join(f"{k} {made.get(k)} (here {v})" for k, v in here.items() if made.get(k) != v)
            if isinstance(made, dict)
            else repr(made)
        )
        raise ArchiveError(f"{path}: made with {differ}: export it again with these versions")


def _check_sources(texts: dict, meta: dict, path: str) -> None:
    try:
        host = meta["host"]
        names = set(host["globals"])
        sources.check_host_function(texts["host.py"], host["function"], names)
        if meta.get("check"):
            sources.check_host_function(texts["check.py"], "check", set())
        for name, text in texts.items():
            if name.startswith("modules/"):
                sources.check_kernel_module(text)
    except sources.SourceRefused as refused:
        raise ArchiveError(
            f"{path}: a source of a form gcompile never generates: {refused}"
        ) from None
    except (KeyError, TypeError) as missing:
        raise ArchiveError(f"{path}: meta.json lacks {missing}") from None


def _array(body: bytes, path: str, name: str) -> np.ndarray:
    try:
        array = np.load(io.BytesIO(body), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise ArchiveError(f"{path}: {name} is not a plain NumPy array ({error})") from None
    if array.dtype.kind not in "biufc":
        raise ArchiveError(f"{path}: {name} has dtype {array.dtype}")
    return array
