"""Calls a loop body or a branch makes on Python objects whose state they may change where no
statement shows it: ``q.put(i)`` on a ``queue.Queue``, ``next(it)``, ``acc.push(v)`` of a class
whose method assigns ``self.total``. A handler traces a body once, so such a call would run once
instead of once per trip (a wrong answer): the construct runs in Python instead.

Capture sees the calls (``plan.calls_on``: ``(name, method)`` pairs, ``next(name)`` as
``__next__``); what each object is, the runtime sees when the loop or ``if`` starts
(``object_effect``): the values of those names, from what the construct carries and the
closure cells of its functions. A call changes its object unless the object is NumPy's,
gcompile's or a builtin value (a list's, dict's or set's mutating methods are capture's own
``effects``), a module, class or function, or the method is a Python function whose source
neither assigns to its first parameter's attributes or items nor calls a method of it that
does (``self.queue.append(v)``: a container's mutating method). A method gcompile cannot read
(a C method of another library, no source) is taken to change it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from collections.abc import Iterator
from typing import Any, Callable

from .plan import CONTAINER_MUTATORS, rooted_at

_VALUES = ("builtins", "numpy", "gcompile")  # (modules whose objects' methods change nothing
# capture does not see: their containers' mutators are ``effects``)
_DEPTH = 4  # methods of the object followed from one another (``put`` -> ``_put``)


def object_effect(info: Any, functions: tuple[Callable, ...], carried: tuple) -> str:
    """Why the construct of ``info`` (its ``calls_on``) changes a Python object when it runs,
    as ``effects`` say it (``calls `q.put(...)` (...)``), or ``""``."""
    calls = getattr(info, "calls_on", ())
    if not calls:
        return ""
    values = dict(zip(getattr(info, "carried", ()), carried))
    for function in functions:
        code, cells = getattr(function, "__code__", None), getattr(function, "__closure__", None)
        for name, cell in zip(code.co_freevars if code else (), cells or ()):
            try:
                values.setdefault(name, cell.cell_contents)
            except ValueError:  # (an empty cell)
                pass
    namespace = getattr(functions[0], "__globals__", {})  # (a module's ``Q.put(i)``)
    for name, _ in calls:
        if name not in values and name in namespace:
            values[name] = namespace[name]
    for name, method in calls:
        if name in values and _changes(values[name], method):
            what = type(values[name]).__name__
            call = f"next({name})" if method == "__next__" else f"`{name}.{method}(...)`"
            return f"calls {call} (a change to a {what} it holds)"
    return ""


def _changes(value: Any, method: str) -> bool:
    if method == "__next__":  # (NumPy's iterators too: ``np.ndindex``)
        return isinstance(value, Iterator) and _root(type(value)) != "gcompile"
    if isinstance(value, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)):
        return False
    if _root(type(value)) in _VALUES:
        return False
    return _method_changes(type(value), method, _DEPTH)


def _root(cls: type) -> str:
    return (cls.__module__ or "").partition(".")[0]


@functools.lru_cache(maxsize=256)  # (asked at every loop and ``if`` a trace meets: parsed once)
def _method_changes(cls: type, method: str, depth: int) -> bool:
    found = inspect.getattr_static(cls, method, None)
    if isinstance(found, (staticmethod, classmethod)):
        return False  # (no instance to change; a class's state is the function's own business)
    if not isinstance(found, types.FunctionType):
        return True  # (a C method, or one found dynamically: gcompile cannot read it)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(found)))
    except (OSError, TypeError, SyntaxError):
        return True
    function = tree.body[0]
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not function.args.args:
        return True
    own = {function.args.args[0].arg}
    for node in ast.walk(function):
        if _assigns_into(node, own) or _changes_argument(node, own):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "__dict__" and rooted_at(node, own):
            return True  # (``d = self.__dict__; d["n"] += 1``)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver, name = node.func.value, node.func.attr
            if rooted_at(receiver, own) and name in _STATE_CHANGING:
                return True
            if isinstance(receiver, ast.Name) and receiver.id in own:
                if depth == 0 or _method_changes(cls, name, depth - 1):
                    return True
    return False


# methods changing the object they are called on (``self.q.put(v)``): a container's, a queue's,
# a deque's, a generator's, a file's, a lock's
_STATE_CHANGING = CONTAINER_MUTATORS | {
    "put", "put_nowait", "get", "get_nowait", "popleft", "appendleft", "extendleft", "rotate",
    "send", "throw", "write", "writelines", "seek", "acquire", "release",
}  # fmt: skip

# builtins changing their first argument, or calling code that may (``super().push(v)``)
_ARGUMENT_CHANGING = frozenset({"next", "setattr", "delattr", "super"})


def _changes_argument(node: ast.AST, own: set[str]) -> bool:
    """``next(self._it)``, ``setattr(self, "n", v)``, ``super().push(v)``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    if node.func.id == "super":
        return True
    first = node.args[0] if node.args else None
    return node.func.id in _ARGUMENT_CHANGING and first is not None and rooted_at(first, own)


def _assigns_into(node: ast.AST, own: set[str]) -> bool:
    """``self.x = v``, ``self.x += v``, ``self.x[i] = v``, ``del self.x`` (``own``: ``self``)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    else:
        return False
    return any(
        isinstance(t, (ast.Attribute, ast.Subscript)) and rooted_at(t, own)
        for target in targets
        for t in ast.walk(target)
    )
