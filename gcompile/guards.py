"""What a compiled graph assumes about its inputs, and the cache key that encodes it.

Arguments are bound to the function's signature (defaults applied), and tuples,
lists and dicts are flattened into leaves. Each leaf is one of

* an **input** of the graph: an ndarray (guarded on dtype, ndim, which sizes are 0
  or 1, layout and writeability), a NumPy scalar (guarded on dtype), or a Python
  ``float`` or ``complex`` (guarded on its type only: a new value does not re-trace);
* **static**: a Python ``int`` or ``bool``, a name listed in ``static_argnames``,
  ``None``, a string or another hashable value; its value is guarded and baked
  into the graph;
* a **symbolic int**: a Python ``int`` argument seen with two values (``dynamic_ints``, set by
  ``api``): an input whose value of 2 or more is a size symbol, as an array's size is (0, 1 and
  negative values stay static, in the key).

The key holds no size of 2 or more: those are symbolic in the trace (``ir/shape_env.py``),
so one trace serves them all. What the trace assumed about them (``y.shape[0] == s1`` for
``x + y``, a size it specialised) is checked per entry by the function ``size_check``
builds; a call whose key matches but whose sizes fail the check traces again.
"""

from __future__ import annotations

import enum
import functools
import inspect
import types
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import numpy as np

from .errors import ScalarsDecide, UnsupportedError
from .interop import arrays as interop
from .ir.literals import literal_key
from .ir.meta import RANDOM_STATE_TYPES, layout_of, unsupported_dtype_reason
from .ir.pytree import (
    ARGUMENT_OF,
    TreeSpec,
    flatten,
    more_leaves,
    plain_object,
    unflatten,
)
from .ir.shape_env import SIZE_END, SIZE_LOW, ShapeEnv, source_of
from .ir.symbolic import is_expr, is_int


@dataclass
class BoundCall:
    """One call's arguments, flattened, with the guard key they satisfy."""

    key: tuple
    leaves: list  # [(path, value)]
    is_input: list  # per leaf: graph input (True) or static value (False)
    spec: TreeSpec
    binder: "ArgumentBinder"
    array_type: type | None = None  # the first argument's array type other than ndarray
    foreign: dict = field(default_factory=dict)  # leaf position -> the other library's array

    def inputs(self) -> list:
        """The runtime values of the graph's inputs, in placeholder order."""
        return [value for (_, value), flag in zip(self.leaves, self.is_input) if flag]

    def rebuild(self, values: list) -> tuple[tuple, dict]:
        """``(args, kwargs)`` for a call with the leaves replaced by ``values``."""
        return self.binder.rebuild(self.spec, values)

    def call(self) -> tuple[tuple, dict]:
        """``(args, kwargs)`` of the call as made (other libraries' arrays as passed)."""
        return self.rebuild([self.foreign.get(i, v) for i, (_, v) in enumerate(self.leaves)])


class ArgumentBinder:
    """Binds calls of one function to flattened, guarded leaves."""

    def __init__(self, fn: Callable, static_argnames: tuple | list | str = ()):
        self.signature = inspect.signature(fn)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self.static_argnames = frozenset(static_argnames)
        self.dynamic_ints: frozenset = frozenset()  # paths of int leaves traced as size symbols
        self.size_positions: frozenset = frozenset()  # of parameters among dynamic_ints
        # paths of int leaves traced as values (weak ints): the index of a loop Python runs,
        # passed to a region of its body, which takes a new value on every trip
        self.value_ints: frozenset = frozenset()
        self.value_positions: frozenset = frozenset()  # of parameters among value_ints
        self.static_scalars: set[str] = set()  # paths of scalars a trace found deciding values
        self.static_positions: frozenset = frozenset()  # of parameters among static_scalars
        unknown = self.static_argnames - set(self.signature.parameters)
        if unknown:
            raise ValueError(
                f"static_argnames names no parameter of {getattr(fn, '__name__', fn)}: "
                f"{sorted(unknown)}; parameters are {list(self.signature.parameters)}"
            )

        parameters = list(self.signature.parameters.values())
        self._names = tuple(p.name for p in parameters)
        self._defaults = tuple(p.default for p in parameters)
        self._positional = all(
            p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters
        )
        # every parameter positional-or-keyword, none static: a call f(*arrays) binds trivially
        self.simple_positional = self._positional and not self.static_argnames

    def arguments(self, args: tuple, kwargs: dict) -> dict:
        """Parameter name -> value, defaults applied; TypeError for a wrong arity."""
        if self._positional and not kwargs and len(args) <= len(self._names):
            # The common call f(x, y, 0.5): no need for inspect's general binding.
            tail = self._defaults[len(args) :]
            if not any(default is inspect.Parameter.empty for default in tail):  # (no ==: arrays)
                return dict(zip(self._names, (*args, *tail)))
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.arguments

    def bind(self, args: tuple, kwargs: dict) -> BoundCall:
        """Flatten one call. Raises TypeError for a wrong arity, UnsupportedError for an unsupported argument."""
        arguments = self.arguments(args, kwargs)
        leaves: list = []
        children = []
        for name, value in arguments.items():
            if name in self.static_argnames:
                leaves.append((name, value))
                children.append(TreeSpec("leaf"))
            else:
                if more_leaves(value, MAX_LEAVES):
                    raise UnsupportedError(
                        f"argument {name!r} holding more than {MAX_LEAVES} values in lists, "
                        "tuples or dicts",
                        detail="each value would be an input of its own, bound and guarded "
                        "on every call",
                        hint=f"pass an array: np.asarray({name})",
                    )
                sub_leaves, sub_spec = flatten(value, name)
                leaves.extend(sub_leaves)
                children.append(sub_spec)
        spec = TreeSpec("dict", tuple(arguments), tuple(children))
        keys, is_input, foreign = [], [], {}
        for i, (path, value) in enumerate(leaves):
            static = path in self.static_argnames or (
                path in self.static_scalars and isinstance(value, _SCALARS)
            )
            if not static and not isinstance(value, _KNOWN) and interop.is_array_like(value):
                leaves[i] = (path, interop.as_ndarray(value, path))
                key, flag = _leaf_guard(path, leaves[i][1], False, False, source=type(value))
                foreign[i] = value
            else:
                key, flag = _leaf_guard(
                    path, value, static, path in self.dynamic_ints, path in self.value_ints
                )
            keys.append(key)
            is_input.append(flag)
        array_type = type(next(iter(foreign.values()))) if foreign else None
        return BoundCall((spec, tuple(keys)), leaves, is_input, spec, self, array_type, foreign)

    def specialising(self, bound: BoundCall, attempt: Callable) -> tuple[Any, BoundCall]:
        """``(attempt(bound), bound)``; while the attempt raises ``ScalarsDecide``, the scalar
        arguments it names are static from now on (guarded by their values, a scalar at the
        path) and the call is bound again for another attempt."""
        while True:
            try:
                return attempt(bound), bound
            except ScalarsDecide as decide:
                sizes = self.value_ints & set(decide.paths)
                if sizes:  # (they change: sizes after all, 0 and 1 specialised)
                    self.trace_as_values(self.value_ints - sizes)
                    self.trace_as_sizes(self.dynamic_ints | sizes)
                    bound = self.bind(*bound.call())
                    continue
                paths = self.static_scalars | set(decide.paths)
                # (positions first: a call memoised meanwhile keys by the value, never the type)
                self.static_positions = self._positions_of(paths)
                self.static_scalars = paths
                bound = self.bind(*bound.call())

    def trace_as_values(self, paths: frozenset) -> None:
        """Trace the int leaves at ``paths`` as weak int values (``value_ints``)."""
        self.value_ints = frozenset(paths)
        self.value_positions = self._positions_of(paths)

    def trace_as_sizes(self, paths: frozenset) -> None:
        """Trace the int leaves at ``paths`` as size symbols (``dynamic_ints``)."""
        self.dynamic_ints = frozenset(paths)
        self.size_positions = self._positions_of(paths)

    def _positions_of(self, paths: frozenset) -> frozenset:
        return frozenset(i for i, name in enumerate(self._names) if name in paths)

    def rebuild(self, spec: TreeSpec, values: list) -> tuple[tuple, dict]:
        arguments = unflatten(spec, values, make_object=argument_object)
        rebuilt = inspect.BoundArguments(self.signature, arguments)
        return rebuilt.args, rebuilt.kwargs


def argument_object(cls: type, attributes: dict) -> Any:
    """An argument object (``pytree``: a ``SimpleNamespace``, a dataclass instance) rebuilt
    from its attributes, as an instance of a subclass of ``cls`` that refuses to have its
    attributes set: the caller's object would not see the change (a statement doing so is
    refused, and runs in Python as a graph break, on the caller's object)."""
    return plain_object(_unassignable(cls), attributes)


@functools.cache
def _unassignable(cls: type) -> type:
    def refuse(self, name: str, *value: Any) -> None:
        raise UnsupportedError(
            f"assigning attribute {name!r} of an argument of type {cls.__name__}",
            detail="the function sees a copy of the object's attributes",
            hint="return the new value instead, or assign it outside the compiled function",
        )

    members = {"__setattr__": refuse, "__delattr__": refuse, ARGUMENT_OF: cls}
    return type(cls.__name__, (cls,), members)


def _leaf_guard(
    path: str,
    value: Any,
    static: bool,
    symbolic: bool,
    as_value: bool = False,
    source: type | None = None,
) -> tuple[tuple, bool]:
    """(guard key, is graph input) of one leaf; ``source``: the type of the other library's
    array ``value`` was taken from (None for a NumPy array)."""
    if static:
        _hashable(path, value, static=True)
        return ("static", literal_key(value)), False
    if as_value and is_int(value) and -SIZE_END <= value < SIZE_END:
        return ("int value",), True
    if symbolic and is_int(value) and SIZE_LOW <= value < SIZE_END:
        return ("int",), True
    if isinstance(value, np.ndarray):
        _check_dtype(path, value.dtype)
        _check_subclass(path, value)
        pinned = tuple(size if size < SIZE_LOW else None for size in value.shape)
        layout, writeable = layout_of(value), value.flags.writeable
        return ("array", value.dtype, pinned, layout, writeable, source), True
    if isinstance(value, np.generic):
        _check_dtype(path, value.dtype)
        return ("numpy scalar", value.dtype), True
    if isinstance(value, (float, complex)):
        return (type(value).__name__,), True
    if not isinstance(value, _STATIC_TYPES):
        if isinstance(value, RANDOM_STATE_TYPES):  # (drawn from in Python: random_states)
            return ("random state", type(value)), False
        raise UnsupportedError(
            f"argument '{path}' of type {type(value).__name__}",
            hint="pass arrays, Python scalars, strings, dtypes, functions, or tuples/lists/dicts, "
            "SimpleNamespaces or dataclass instances (not slotted) of them. "
            "Other objects would be frozen at compile time; name the parameter in static_argnames if "
            "the object never changes (it is then guarded by identity)",
        )
    _hashable(path, value, static=False)
    return ("static", literal_key(value)), False


# Values a scalar argument made static may take (else the path is an input again).
_SCALARS = (bool, int, float, complex, np.generic)
# the most values one argument may hold in lists, tuples and dicts (each is an input, bound
# and guarded on every call; a long list is data, better passed as an array)
MAX_LEAVES = 64

# Values that are safe to bake into a graph and guard by equality (or identity, for functions).
_STATIC_TYPES = (
    type(None),
    bool,
    int,
    str,
    bytes,
    np.dtype,
    type,
    enum.Enum,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    functools.partial,
    np.ufunc,
    type(np.mean),  # (NumPy's functions dispatching to __array_function__: statistic=np.mean)
)
# leaves that are never another library's array (bytes: a static value, though a buffer)
_KNOWN = (np.ndarray, np.generic, float, complex, *_STATIC_TYPES)


def _check_subclass(path: str, value: np.ndarray) -> None:
    """Refuse an ndarray subclass (``np.matrix``, ``np.ma.MaskedArray``...): its operators,
    reductions and masks mean other things than the compiled code's (a memory map is an
    array)."""
    if type(value) is not np.ndarray and not isinstance(value, np.memmap):
        raise UnsupportedError(
            f"argument '{path}' of type {type(value).__module__}.{type(value).__name__}, an "
            "ndarray subclass (its operators and reductions are its own)",
            hint="pass np.asarray(x) if plain array semantics are meant",
        )


def _check_dtype(path: str, dtype: np.dtype) -> None:
    reason = unsupported_dtype_reason(dtype)
    if reason:
        raise UnsupportedError(
            f"argument '{path}' with {reason}",
            hint="pass arrays of bool, integer, float or complex dtype in native byte order",
        )


def _hashable(path: str, value: Any, static: bool) -> Any:
    try:
        hash(value)
    except TypeError:
        what = "static argument" if static else "argument"
        raise UnsupportedError(
            f"{what} '{path}' of unhashable type {type(value).__name__}",
            hint="pass arrays, Python scalars, or tuples/lists/dicts of them; static values must be hashable",
        ) from None
    return value


def _sizes_text(pinned: tuple) -> str:
    """``[*,1]``: a pinned size as itself, ``*`` for any size of 2 or more."""
    return "[" + ",".join("*" if size is None else str(size) for size in pinned) + "]"


def guard_text(key: tuple, path: str) -> str:
    """One leaf's guard as a readable line (``x: array float64[*,1] layout C writeable``;
    ``*`` is any size of 2 or more; ``(from torch.Tensor)``: another library's array)."""
    kind = key[0]
    if kind == "array":
        _, dtype, pinned, layout, writeable, source = key
        access = "writeable" if writeable else "read-only"
        origin = f" (from {interop.type_name(source)})" if source is not None else ""
        text = f"{path}: array {dtype.name}{_sizes_text(pinned)} layout {layout} {access}"
        return text + origin
    if kind == "numpy scalar":
        return f"{path}: NumPy scalar {key[1].name}"
    if kind == "static":
        return f"{path}: static value {_static_value(key[1])}"
    if kind == "int":
        return f"{path}: Python int >= {SIZE_LOW} (a size symbol)"
    if kind == "random state":
        return f"{path}: {interop.type_name(key[1])} (drawn from in Python)"
    return f"{path}: Python {kind} (any value)"


class GuardChange(NamedTuple):
    """One guard a new call fails: the leaf, the readable change, whether a static value changed."""

    path: str
    text: str  # ``x: ndim 2 -> 3``
    static: bool


def guard_changes(old_key: tuple, new: BoundCall) -> list[GuardChange]:
    """What differs between a cache entry's guards and a new call."""
    old_spec, old_leaves = old_key
    new_spec, new_leaves = new.key
    if old_spec != new_spec:
        text = f"argument structure: {_spec_text(old_spec)} -> {_spec_text(new_spec)}"
        return [GuardChange("", text, False)]
    return [
        GuardChange(path, _leaf_change(path, before, after), before[0] == after[0] == "static")
        for (path, _), before, after in zip(new.leaves, old_leaves, new_leaves)
        if before != after
    ]


def changed_ints(old_key: tuple, new: BoundCall) -> set[str]:
    """The paths of Python int arguments whose value alone tells a cache entry from a new
    call (outside ``static_argnames``); empty when anything else differs too."""
    if old_key[0] != new.key[0]:
        return set()
    paths = set()
    for (path, _), before, after in zip(new.leaves, old_key[1], new.key[1]):
        if before == after:
            continue
        ints = [key[0] == "static" and key[1][0] == "int" for key in (before, after)]
        if path in new.binder.static_argnames or not all(ints):
            return set()
        paths.add(path)
    return paths


def _leaf_change(path: str, before: tuple, after: tuple) -> str:
    if before[0] != after[0]:
        return f"{path}: {_kind_text(before)} -> {_kind_text(after)}"
    if before[0] == "array":
        (_, d0, s0, l0, w0, t0), (_, d1, s1, l1, w1, t1) = before, after
        if t0 != t1:
            return f"{path}: {_array_type(t0)} -> {_array_type(t1)}"
        if d0 != d1:
            return f"{path}: dtype {d0.name} -> {d1.name}"
        if len(s0) != len(s1):
            return f"{path}: ndim {len(s0)} -> {len(s1)}"
        if s0 != s1:
            return (
                f"{path}: sizes {_sizes_text(s0)} -> {_sizes_text(s1)} (sizes 0 and 1 are "
                "specialised, * is any size >= 2)"
            )
        if l0 != l1:
            return f"{path}: layout {l0} -> {l1}"
        return (
            f"{path}: {'writeable' if w0 else 'read-only'} -> {'writeable' if w1 else 'read-only'}"
        )
    if before[0] == "numpy scalar":
        return f"{path}: dtype {before[1].name} -> {after[1].name}"
    if before[0] == "random state":
        return f"{path}: {interop.type_name(before[1])} -> {interop.type_name(after[1])}"
    old, new = before[1], after[1]
    kind = old[0] if old[0] == new[0] else f"{old[0]} -> {new[0]}"
    return f"{path}: {_static_value(old)} -> {_static_value(new)} (static {kind})"


def _array_type(source: type | None) -> str:
    return "numpy.ndarray" if source is None else interop.type_name(source)


def _kind_text(key: tuple) -> str:
    kinds = {
        "array": "array",
        "numpy scalar": "NumPy scalar",
        "static": "static value",
        "random state": "random number generator",
    }
    return kinds.get(key[0], f"Python {key[0]}")


def _static_value(literal: Any) -> str:
    """The value a ``literal_key`` stands for, when it is a plain one, else the key itself."""
    if isinstance(literal, tuple) and len(literal) == 2:
        kind, raw = literal
        if kind in ("float", "complex"):
            return repr(
                np.frombuffer(raw, np.float64 if kind == "float" else np.complex128)[0].item()
            )
        if not isinstance(raw, tuple):
            return repr(raw)
    if isinstance(literal, tuple) and len(literal) == 3 and literal[0] == "np":
        return repr(np.frombuffer(literal[2], np.dtype(literal[1]))[0])
    return repr(literal)


def _spec_text(spec: TreeSpec) -> str:
    if spec.kind == "leaf":
        return "*"
    if spec.kind in ("dict", "object"):
        names = spec.keys if spec.kind == "dict" else spec.keys[1:]
        inner = ", ".join(f"{k}={_spec_text(c)}" for k, c in zip(names, spec.children))
    else:
        inner = ", ".join(_spec_text(c) for c in spec.children)
    if spec.kind in ("namedtuple", "object"):
        return f"{spec.keys[0].__name__}({inner})"
    return {"tuple": f"({inner})", "list": f"[{inner}]"}.get(spec.kind, f"{{{inner}}}")


# -- sizes: what one trace assumed about the sizes of 2 or more ------------------------------------


@dataclass
class SizeCheck:
    """What a compiled entry assumes about its inputs' sizes beyond the guard key.

    ``conditions``: readable lines (where each symbol is read, then each condition);
    ``check(inputs)``: whether one call's inputs meet every condition; ``source``: its code.
    """

    conditions: list
    check: Callable[[list], bool]
    source: str
    tests: list = field(default_factory=list, repr=False)  # (text, test) per condition

    def failures(self, inputs: list) -> list[str]:
        """The conditions a call's inputs do not meet (for recompile reports)."""
        return [text for text, test in self.tests if not test(inputs)]


def size_check(paths: list, metas: list, env: ShapeEnv) -> SizeCheck | None:
    """The check of an entry whose inputs (named ``paths``) were traced as ``metas``: the
    assumptions of its trace (``ShapeEnv.conditions``: learned equalities and guards, over the
    symbols read from the inputs), and the fixed sizes of 2 or more of a trace without
    symbols there. None when there is nothing to check."""
    names = {symbol: symbol.name for symbol in env.sources}
    binding = [f"    {s.name} = inputs{_read(i, axis)}" for s, (i, axis) in env.sources.items()]
    read = set(env.sources.values())
    tests, texts = [], []
    for position, meta in enumerate(metas):
        for axis, size in enumerate(getattr(meta, "shape", ())):
            if not is_expr(size) and size >= SIZE_LOW and (position, axis) not in read:
                tests.append(f"inputs[{position}].shape[{axis}] == {size}")
                texts.append(f"{paths[position]}.shape[{axis}] == {size}")
    for relation, lhs, rhs, text in env.conditions():
        tests.append(f"({source_of(lhs, names)}) {relation} ({source_of(rhs, names)})")
        texts.append(text)
    if not tests:
        return None
    origins = [f"{s.name} = {env.origins[s]}" for s in env.sources]
    source = _check_source(binding, " and ".join(tests))
    singles = [(text, _compiled(_check_source(binding, test))) for text, test in zip(texts, tests)]
    return SizeCheck(origins + texts, _compiled(source), source, singles)


def _read(position: int, axis: int | None) -> str:
    """The subscript reading a symbol from the inputs: an int input itself, or a size."""
    return f"[{position}]" if axis is None else f"[{position}].shape[{axis}]"


def _check_source(binding: list, condition: str) -> str:
    return "\n".join(["def check(inputs):", *binding, f"    return {condition}"]) + "\n"


def _compiled(source: str) -> Callable[[list], bool]:
    namespace: dict = {}
    exec(compile(source, "<gcompile size check>", "exec"), namespace)
    return namespace["check"]
