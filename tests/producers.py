"""Array producers of the test suite's own: NumPy arrays behind one protocol each, so that the
interoperability tests need no array library (``Tensor``: DLPack with the array API's
``from_dlpack`` class method; ``Opaque``: DLPack only; ``Interfaced``: the array interface)."""

import numpy as np


class Opaque:
    """A DLPack-only producer over a NumPy array's memory, with no way back."""

    def __init__(self, data: np.ndarray, device: tuple = (1, 0)):
        self._data = data
        self._device = device

    def __dlpack__(self, **options):
        return self._data.__dlpack__(**options)

    def __dlpack_device__(self):
        return self._device


class Tensor(Opaque):
    """A DLPack-only producer that also takes arrays back (``Tensor.from_dlpack``)."""

    @classmethod
    def from_dlpack(cls, other):
        return cls(np.from_dlpack(other))


class Interfaced:
    """An object offering its memory through ``__array_interface__`` only."""

    def __init__(self, data: np.ndarray):
        self.data = data
        self.__array_interface__ = data.__array_interface__
