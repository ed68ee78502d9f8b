"""Calls made for their effect (``print``): one ``callback`` node each, run on every call of
the compiled function with that call's values, in the order the function made them.

    %callback_1 : bool[] = callback(%y, call=print('mid', #0))

``Callback.template`` is the call's ``(args, kwargs)`` with each traced value (an array, a
size) replaced by the ``Operand`` of the node's operands it is; everything else (strings,
numbers, ``file=``) is kept as given; a string formatted from traced values (``f"r={r:.3e}"``)
is a ``Text`` of its pieces, formatted on each call. The node's value is a token (True) that the
next callback of its graph takes as its first operand, so that no pass reorders two of them.
"""

from __future__ import annotations

import functools
import operator
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
        args, kwargs = self._filler(operands)
        self.function(*args, **kwargs)

    @functools.cached_property
    def _filler(self) -> Callable[[tuple], tuple]:
        """``operands -> (args, kwargs)``: the template filled, by one function per leaf for
        a flat template (a ``print`` in a loop program runs it on every trip)."""
        args, kwargs = self.template
        leaves = (*args, *kwargs.values())
        if any(isinstance(v, (tuple, list, dict)) for v in leaves):
            return lambda operands: _filled(self.template, operands)
        arguments = [_leaf_filler(v) for v in args]
        keywords = [(key, _leaf_filler(v)) for key, v in kwargs.items()]
        return lambda operands: (
            [fill(operands) for fill in arguments],
            {key: fill(operands) for key, fill in keywords},
        )


@dataclass(frozen=True)
class Field:
    """A traced value formatted into a ``Text``: its operand, the format spec, and its dtype
    (a NumPy scalar formats as NumPy's, a float32 as its shortest digits) when a scalar."""

    operand: Operand
    spec: str
    scalar: np.dtype | None
    conversion: str = ""  # "r": ``repr`` of the value

    def format(self, operands: tuple) -> str:
        value = operands[self.operand.index]
        if self.scalar is not None:
            value = self.scalar.type(value)
        return repr(value) if self.conversion == "r" else format(value, self.spec)


@dataclass(frozen=True)
class Text:
    """A string formatted from traced values: literal pieces and ``Field``s, joined on each
    call (``frontend/texts.py`` makes it)."""

    pieces: tuple

    def __repr__(self) -> str:
        parts = [
            p if isinstance(p, str) else f"{{{p.operand}{'!r' if p.conversion else ''}:{p.spec}}}"
            for p in self.pieces
        ]
        return "f" + repr("".join(parts))

    def format(self, operands: tuple) -> str:
        return "".join([p if type(p) is str else p.format(operands) for p in self.pieces])


def _leaf_filler(value: Any) -> Callable[[tuple], Any]:
    if isinstance(value, Operand):
        return operator.itemgetter(value.index)
    if isinstance(value, Text):
        return value.format
    return lambda operands: value


def _filled(value: Any, operands: tuple) -> Any:
    def leaf(v: Any) -> Any:
        if isinstance(v, Operand):
            return operands[v.index]
        return v.format(operands) if isinstance(v, Text) else v

    return map_leaves(leaf, value)


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


# the value of a node run for its effect, which the next one takes (``callback``, ``raise_unless``)
TOKEN = TensorMeta((), np.dtype(bool), scalar=True, writeable=False)


def infer(*operands: Any, call: Callback) -> TensorMeta:
    """A token: a boolean scalar."""
    return TOKEN
