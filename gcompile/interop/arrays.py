"""Arguments of other array libraries as NumPy arrays over the same memory.

An object exposing ``__dlpack__`` (with ``__dlpack_device__`` reporting the CPU) is imported
by ``np.from_dlpack(x, copy=False)``; one exposing ``__array_interface__``,
``__array_struct__`` or the buffer protocol (``memoryview``, ``array.array``, ``mmap``) by
``np.asarray``, which wraps such memory without a copy. Either way the array keeps the
producer's dtype, strides and read-only flag, and a write into it is a write into the
producer's memory. A device array that is not on the CPU is refused by name
(``DeviceError``); ``__array__`` alone, which may copy, is not taken.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DeviceError, UnsupportedError

# DLPack's device types (``DLDeviceType`` in dlpack.h), for messages
DEVICE_NAMES = {
    1: "CPU",
    2: "CUDA",
    3: "CUDA host",
    4: "OpenCL",
    7: "Vulkan",
    8: "Metal",
    9: "VPI",
    10: "ROCm",
    11: "ROCm host",
    12: "ext_dev",
    13: "CUDA managed",
    14: "oneAPI",
    15: "WebGPU",
    16: "Hexagon",
    17: "MAIA",
}
CPU = 1


def is_array_like(value: Any) -> bool:
    """Whether ``value`` offers its memory through DLPack, the array interface or a buffer."""
    if (
        hasattr(value, "__dlpack__")
        or hasattr(value, "__array_interface__")
        or hasattr(value, "__array_struct__")
    ):
        return True
    try:
        memoryview(value).release()
    except TypeError:
        return False
    return True


def as_ndarray(value: Any, path: str) -> np.ndarray:
    """The NumPy array over ``value``'s memory (``value``: ``is_array_like``); ``DeviceError``
    for memory on another device, ``UnsupportedError`` when NumPy cannot take it as it is."""
    kind = type(value)
    name = type_name(kind)
    dlpack = hasattr(value, "__dlpack__")
    if dlpack:
        _check_device(value, path, name)
    try:
        if dlpack:
            array = np.from_dlpack(value, copy=False)
        else:
            array = np.asarray(value)
            if array.flags.owndata and array.size:
                raise BufferError("NumPy made a copy")
    except (BufferError, TypeError, ValueError, RuntimeError) as error:  # (torch: RuntimeError)
        raise UnsupportedError(
            f"argument '{path}' of type {name} that NumPy cannot take without a copy "
            f"({type(error).__name__}: {error})",
            hint="pass a NumPy array (np.asarray(x)), or a CPU array of a bool, integer, float "
            "or complex dtype",
        ) from None
    return array


def _check_device(value: Any, path: str, name: str) -> None:
    """``DeviceError`` naming the device of a DLPack producer whose memory is not the CPU's."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None:
        return  # np.from_dlpack asks for it and says what is missing
    device_type, device_id = device()
    if int(device_type) != CPU:
        where = DEVICE_NAMES.get(int(device_type), f"DLPack device type {int(device_type)}")
        raise DeviceError(
            f"argument '{path}' ({name}) lives on the {where} device {device_id}: gcompile "
            "compiles for the CPU; move it there first (for torch: x.cpu())"
        )


def type_name(kind: type) -> str:
    """``torch.Tensor``: a type's module and name, for messages and guards."""
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"
