"""Calls made for their effect (``print``): one ``callback`` node each, run on every call of
the compiled function with that call's values, in the order the function made them.

    %callback_1 : bool[] = callback(%y, call=print('mid', #0))

``Callback.template`` is the call's ``(args, kwargs)`` with each traced value (an array, a
size) replaced by the ``Operand`` of the node's operands it is; everything else (strings,
numbers, ``file=``) is kept as given. The node's value is a token (True) that the next
callback of its graph takes as its first operand, so that no pass reorders two of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .externs import Operand
from .meta import TensorMeta
from .pytree import map_leaves


@dataclass(frozen=True, eq=False)
class Callback:
    """``function(*args, **kwargs)`` with ``Operand`` leaves in ``template`` (see above)."""

    name: str
    function: Callable
    template: tuple  # (args, kwargs)

    def __repr__(self) -> str:
        args, kwargs = self.template
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        return f"{self.name}({', '.join(parts)})"

    def run(self, operands: tuple) -> None:
        """Call the function with the operands' values in place of the ``Operand``s."""
        args, kwargs = _filled(self.template, operands)
        self.function(*args, **kwargs)


def _filled(value: Any, operands: tuple) -> Any:
    return map_leaves(lambda v: operands[v.index] if isinstance(v, Operand) else v, value)


_REGISTERED: dict[int, Callback] = {}  # what compiled loop programs call back (by number)


def register(call: Callback) -> int:
    """A number for ``call`` that a loop program's source can name (``run_registered``)."""
    _REGISTERED[id(call)] = call
    return id(call)


def run_registered(number: int, operands: tuple) -> None:
    """Run the registered call ``number`` (from a loop program, in Numba's object mode)."""
    _REGISTERED[number].run(operands)


def impl(*operands: Any, call: Callback) -> np.bool_:
    """Run the call (the first operand, the previous callback's token, is not its own)."""
    call.run(operands[1:])
    return np.bool_(True)


def infer(*operands: Any, call: Callback) -> TensorMeta:
    """A token: a boolean scalar."""
    return TensorMeta((), np.dtype(bool), scalar=True, writeable=False)
