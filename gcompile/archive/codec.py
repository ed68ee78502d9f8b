"""Plain values as JSON and back: guard keys, argument structures, literals and Numba signatures.

Only data: ``None``, bools, numbers, strings, and tagged objects ``{"tuple": [...]}``,
``{"bytes": "00ff"}``, ``{"dtype": "<f8"}``, ``{"spec": [kind, keys, children]}``,
``{"complex": [re, im]}``, ``{"scalar": [dtype, "00ff"]}`` (a NumPy scalar). Anything else (a function, a class, an object) cannot be encoded
and makes ``encode`` raise ``UnsupportedError`` naming it: such a value cannot be exported.
Decoding builds nothing but these types, so a file cannot make the reader construct an object.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba.core import types as nbtypes
from numba.np.numpy_support import as_dtype

from ..errors import UnsupportedError
from ..ir.pytree import TreeSpec

_PLAIN = (type(None), bool, int, float, str)


def encode(value: Any, what: str = "a value") -> Any:
    """``value`` as JSON data (see the module docstring); ``what`` names it in a refusal."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, complex):
        return {"complex": [value.real, value.imag]}
    if isinstance(value, (tuple, list)) and not hasattr(type(value), "_fields"):
        tag = "tuple" if isinstance(value, tuple) else "list"
        return {tag: [encode(v, what) for v in value]}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, np.dtype):
        return {"dtype": value.str}
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return {"scalar": [value.dtype.str, value.tobytes().hex()]}
    if isinstance(value, TreeSpec):
        return {"spec": [value.kind, encode(value.keys, what), encode(value.children, what)]}
    raise UnsupportedError(
        f"exporting {what} holding a {type(value).__name__} ({value!r:.60})",
        hint="an exported function may depend on arrays, numbers, strings and containers of "
        "them only: pass other objects as arguments of a function that does not need them",
    )


def decode(data: Any) -> Any:
    """The value ``encode`` made ``data`` from; ValueError for data it never makes."""
    if isinstance(data, _PLAIN):
        return data
    if isinstance(data, list):
        raise ValueError("a bare list")
    if not isinstance(data, dict) or len(data) != 1:
        raise ValueError(f"not an encoded value: {data!r:.60}")
    ((tag, body),) = data.items()
    if tag in ("tuple", "list") and isinstance(body, list):
        items = [decode(v) for v in body]
        return tuple(items) if tag == "tuple" else items
    if tag == "bytes" and isinstance(body, str):
        return bytes.fromhex(body)
    if tag == "dtype" and isinstance(body, str):
        return _dtype(body)
    if tag == "scalar" and isinstance(body, list) and len(body) == 2:
        dtype = _dtype(body[0])
        return np.frombuffer(bytes.fromhex(body[1]), dtype, count=1)[0]
    if tag == "complex" and isinstance(body, list) and len(body) == 2:
        return complex(float(body[0]), float(body[1]))
    if tag == "spec" and isinstance(body, list) and len(body) == 3:
        kind, keys, children = body[0], decode(body[1]), decode(body[2])
        if kind not in ("leaf", "tuple", "list", "dict", "rows", "slice") or not isinstance(
            children, tuple
        ):
            raise ValueError(f"not an argument structure: {kind!r}")
        if not all(isinstance(c, TreeSpec) for c in children):
            raise ValueError("an argument structure of other values")
        return TreeSpec(kind, keys, children)
    raise ValueError(f"unknown tag {tag!r}")


def _dtype(text: str) -> np.dtype:
    """A bool, integer, float or complex dtype (never an object or structured one)."""
    dtype = np.dtype(text)
    if dtype.kind not in "biufc" or dtype.fields is not None:
        raise ValueError(f"dtype {text!r} is not one gcompile compiles")
    return dtype


def plain_key(key: tuple) -> tuple:
    """A guard key (``guards.BoundCall.key``) without the type of the library each array came
    from: a loaded function takes any library's arrays, as NumPy arrays."""
    spec, leaves = key
    return spec, tuple(leaf[:5] if leaf[0] == "array" else leaf for leaf in leaves)


def encode_signature(signature: tuple) -> list:
    """A Numba signature (argument types) as JSON data: arrays and scalars only."""
    encoded = []
    for kind in signature:
        if isinstance(kind, nbtypes.Array):
            dtype = as_dtype(kind.dtype).str
            encoded.append(["array", dtype, kind.ndim, kind.layout, not kind.mutable])
        elif isinstance(kind, (nbtypes.Number, nbtypes.Boolean)):
            encoded.append(["scalar", as_dtype(kind).str])
        else:
            raise UnsupportedError(f"exporting a kernel taking a {kind}")
    return encoded


def decode_signature(data: list) -> tuple:
    """The Numba signature ``encode_signature`` made ``data`` from."""
    types = []
    for item in data:
        if item[0] == "array" and len(item) == 5 and item[3] in ("C", "F", "A"):
            dtype = numba.from_dtype(_dtype(item[1]))
            types.append(nbtypes.Array(dtype, int(item[2]), item[3], readonly=bool(item[4])))
        elif item[0] == "scalar" and len(item) == 2:
            types.append(numba.from_dtype(_dtype(item[1])))
        else:
            raise ValueError(f"not a kernel argument type: {item!r:.60}")
    return tuple(types)
