"""Small local lists used as numbers in named places become one variable per place.

    s = [0, 0, 0]                            __gc_s_0, __gc_s_1, __gc_s_2 = 0, 0, 0
    for sample in matrix:                    for sample in matrix:
        s[0] = sample + c * s[1] - s[2]   =>     __gc_s_0 = sample + c * __gc_s_1 - __gc_s_2
        s[1:3] = s[0:2]                          __gc_s_1, __gc_s_2 = __gc_s_0, __gc_s_1
    return s[1] ** 2 + s[2] ** 2             return __gc_s_1 ** 2 + __gc_s_2 ** 2

A filter's or a recurrence's state kept in a list is changed in place on every trip, which a
captured loop cannot carry (a Python object changing: the loop would run in Python); its places
as variables are carried like any other number. The rewrite applies to a name bound once, at the
function's top level, to a list display (or ``[x] * n``) of at most ``MAX_PLACES`` items, and
read or written nowhere but through constant indices and slices of known length, after its
binding and outside any nested function, lambda, class or comprehension: then every place is
known where it is used, and the variables do what the list did. Python evaluates a slice assignment's value before it
stores, as a tuple assignment does; a slice read is a new list, as before.
"""

from __future__ import annotations

import ast

from .scopes import identifiers, mentions

MAX_PLACES = 16
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_NESTED += (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def split_lists(function: ast.FunctionDef) -> list[str]:
    """Rewrite in place each list of ``function`` that the module docstring describes; returns
    their names."""
    split = []
    for statement in function.body:
        length = _list_length(statement)
        if length is None:
            continue
        name = statement.targets[0].id
        places = _Places(name, length)
        if places.only_places(function, statement):
            _Split(name, length, places.uses).visit(function)
            split.append(name)
    if split:
        ast.fix_missing_locations(function)  # (the new names where their statement is)
    return split


def _list_length(statement: ast.stmt) -> int | None:
    """The length of the list ``statement`` binds a plain name to, when it is a display or
    ``[x] * n`` of at most ``MAX_PLACES`` items."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    if not isinstance(statement.targets[0], ast.Name):
        return None
    value = statement.value
    if isinstance(value, ast.List) and not any(isinstance(e, ast.Starred) for e in value.elts):
        length = len(value.elts)
    elif _repeated(value):
        length = value.right.value
    else:
        return None
    return length if 0 < length <= MAX_PLACES else None


def _repeated(value: ast.expr) -> bool:
    """``[x] * n`` of a constant int ``n``."""
    return (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Mult)
        and isinstance(value.left, ast.List)
        and len(value.left.elts) == 1
        and not isinstance(value.left.elts[0], ast.Starred)
        and isinstance(value.right, ast.Constant)
        and type(value.right.value) is int
    )


def _constant_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _constant_int(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _places(index: ast.expr, length: int) -> list[int] | int | None:
    """The places of a list of ``length`` items an index picks: an int for an item, a list
    for a slice, None when not constant (or out of range)."""
    if isinstance(index, ast.Slice):
        bounds = [index.lower, index.upper, index.step]
        values = [None if b is None else _constant_int(b) for b in bounds]
        if any(b is not None and v is None for b, v in zip(bounds, values)) or values[2] == 0:
            return None
        return list(range(length)[slice(*values)])
    position = _constant_int(index)
    if position is None or not -length <= position < length:
        return None
    return position % length


class _Places(ast.NodeVisitor):
    """Whether every use of list ``name`` but its binding is a subscript at constant places
    (``uses``: each such subscript -> its places), with slice stores of a value of their
    length."""

    def __init__(self, name: str, length: int):
        self.name, self.length = name, length
        self.uses: dict = {}
        self.fitted: set = set()  # slice stores of plain assignments, their value's length known
        self.other = False

    def only_places(self, function: ast.FunctionDef, binding: ast.Assign) -> bool:
        args = function.args
        params = args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
        if any(a is not None and a.arg == self.name for a in params):
            return False
        self.binding = binding.targets[0]
        declared = (ast.Global, ast.Nonlocal)
        if any(isinstance(n, declared) and self.name in n.names for n in ast.walk(function)):
            return False
        position = function.body.index(binding)
        before = function.body[: position + 1]  # (a read there may find the name unbound)
        if any(self._mentions(statement) for statement in before[:-1]):
            return False
        if self._mentions(binding.value):
            return False
        for statement in function.body[position + 1 :]:
            self.visit(statement)
        return not self.other and bool(self.uses)

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, _NESTED) and self._mentions(node):
            self.other = True
            return
        if self.name in identifiers(node):  # (``except E as s``, ``import s``, ``def s``)
            self.other = True
        super().generic_visit(node)

    def _mentions(self, node: ast.AST) -> bool:
        return mentions(node, {self.name})

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == self.name and node is not self.binding:
            self.other = True

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if not (isinstance(node.value, ast.Name) and node.value.id == self.name):
            self.generic_visit(node)
            return
        places = _places(node.slice, self.length)
        if places is None or isinstance(node.ctx, ast.Del):
            self.other = True
        if isinstance(places, list) and isinstance(node.ctx, ast.Store) and node not in self.fitted:
            self.other = True  # (a for/with target, an annotated or tuple store: any length)
        self.uses[node] = places
        self.visit(node.slice)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if self._slice_of_list(target) and self._fits(target, node.value):
                self.fitted.add(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if self._slice_of_list(node.target):
            self.other = True
        self.generic_visit(node)

    def _slice_of_list(self, target: ast.expr) -> bool:
        if isinstance(target, (ast.Tuple, ast.List)):
            return any(self._slice_of_list(t) for t in target.elts)
        return (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and target.value.id == self.name
            and isinstance(target.slice, ast.Slice)
        )

    def _fits(self, target: ast.expr, value: ast.expr) -> bool:
        """A slice store whose value has the slice's length: a display or a constant slice of
        this list (the list could otherwise grow or shrink)."""
        if not isinstance(target, ast.Subscript):
            return False
        wanted = _places(target.slice, self.length)
        if wanted is None:
            return False
        if isinstance(value, (ast.List, ast.Tuple)):
            return not any(isinstance(e, ast.Starred) for e in value.elts) and len(
                value.elts
            ) == len(wanted)
        if self._slice_of_list(value):
            return _places(value.slice, self.length) is not None and len(
                _places(value.slice, self.length)
            ) == len(wanted)
        return False


class _Split(ast.NodeTransformer):
    """Rewrites the binding and the uses ``_Places`` found of list ``name``."""

    def __init__(self, name: str, length: int, uses: dict):
        self.name, self.length, self.uses = name, length, uses

    def place(self, position: int, ctx: ast.expr_context) -> ast.Name:
        return ast.Name(f"__gc_{self.name}_{position}", ctx)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == self.name:
            value = node.value
            items = value.elts if isinstance(value, ast.List) else value.left.elts * self.length
            if not isinstance(value, ast.List):  # ([x] * n: x evaluated once, as Python does)
                places = [self.place(0, ast.Store())]
                first = ast.copy_location(ast.Assign(places, self.visit(items[0])), node)
                copies = [self.place(0, ast.Load()) for _ in range(self.length)]
                rest = ast.Assign([self._tuple(ast.Store())], ast.Tuple(copies, ast.Load()))
                return [first, ast.copy_location(rest, node)]
            items = [self.visit(item) for item in items]
            assign = ast.Assign([self._tuple(ast.Store())], ast.Tuple(items, ast.Load()))
            return ast.copy_location(assign, node)
        return self.generic_visit(node)

    def _tuple(self, ctx: ast.expr_context) -> ast.Tuple:
        return ast.Tuple([self.place(i, ctx) for i in range(self.length)], ctx)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if node not in self.uses:
            return self.generic_visit(node)
        places = self.uses[node]
        if isinstance(places, int):
            return ast.copy_location(self.place(places, node.ctx), node)
        names = [self.place(i, node.ctx) for i in places]
        kind = ast.Tuple if isinstance(node.ctx, ast.Store) else ast.List
        return ast.copy_location(kind(names, node.ctx), node)
