"""Lookup tables: a list or tuple of numbers that a function reads from its module or closure
(``crc_table[i]``, an S-box, a table of coefficients), or is given as an argument (a knapsack's
weights), at a position the data or a loop index decide.

The rewrite makes each such read ``NAME[index]`` of a name the function does not bind (a
parameter it never binds again included) a call ``__gc_rt.table(NAME, index)``
(``runtime.table``), which offers it to the handler: the tracer reads the table as a constant
array at a traced position, where Python would have asked the traced index for an int. The
compiled function's guard holds the table's contents (``captured_globals`` for globals and
closures, the guard key for an argument's static numbers), so a call after the table changed
traces again; ``own_tables`` says which tables of its module and closure that guard covers:
those of the compiled function itself, not of the functions it calls.

A list the function makes itself and never changes (``lut = create_lut(poly)``, a display, a
comprehension, ``[x] * n``: ``read_only_lists``) is read the same way, through
``<runtime>.local_table``: its numbers were computed while tracing, from what the trace
specialised on, as any other Python value the function computes.
"""

from __future__ import annotations

import ast
import dis
import functools
import types
from typing import Any

from .scopes import NonLocalNames, parameter_names

MAX_LENGTH = 4096  # the longest table read as a constant (a guard compares it on each call)
_NUMBERS = (bool, int, float)
_GLOBAL_LOADS = ("LOAD_GLOBAL", "LOAD_NAME")


def is_table(value: Any) -> bool:
    """Whether ``value`` is a list or tuple of numbers of one Python type (so that an element
    read from it at a traced position has the type Python would give)."""
    if type(value) not in (list, tuple) or not 0 < len(value) <= MAX_LENGTH:
        return False
    kind = type(value[0])
    return kind in _NUMBERS and all(type(item) is kind for item in value)


@functools.lru_cache(maxsize=4096)  # (asked on every trace; code objects never change)
def loaded_globals(code: types.CodeType) -> frozenset:
    """The names ``code`` and the code objects nested in it load as globals (not the
    attribute names ``co_names`` also holds: ``x.size`` is no global ``size``)."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_LOADS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= loaded_globals(const)
    return frozenset(names)


def own_tables(fn: Any) -> tuple:
    """The tables among the globals ``fn``'s code loads and its closure's values."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    values = [fn.__globals__.get(name) for name in loaded_globals(code)]
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # (a variable not bound yet)
            continue
    return tuple(value for value in values if is_table(value))


# Calls a list the function made may be given without being changed: builtins that only read.
_READING_BUILTINS = frozenset({"len", "sum", "min", "max", "sorted", "list", "tuple", "print"})
_MADE = (ast.Call, ast.List, ast.ListComp)


def read_only_lists(function: ast.FunctionDef) -> set[str]:
    """Names ``function`` binds only by ``NAME = <a call, list display, list comprehension,
    [x] * n, or a conditional expression of two of those>`` and never changes in place: no
    item or slice assigned or deleted, no attribute (``.append``, ``.sort``), not given to a
    call other than a reading builtin's, not bound in any other way (a loop target, a
    parameter, ``+=``, a nested scope's). A name bound to another name (``lut = TABLE``: a list
    the guard may hold) is not one."""
    parents = {child: node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    names: set[str] = set()
    spoilt = parameter_names(function.args)
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            spoilt.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            spoilt.update(node.names)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                if _changing_use(node, parents[node]):
                    spoilt.add(node.id)
            elif _made_list(node, parents[node]):
                names.add(node.id)
            else:
                spoilt.add(node.id)
    return names - spoilt


def _made_list(name: ast.Name, parent: ast.AST) -> bool:
    return isinstance(parent, ast.Assign) and parent.targets == [name] and _new(parent.value)


def _new(value: ast.expr) -> bool:
    """Whether ``value`` makes a new object: a call, a list display or comprehension,
    ``[x] * n``, or a conditional expression of two of those."""
    if isinstance(value, ast.IfExp):
        return _new(value.body) and _new(value.orelse)
    repeated = isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)
    return isinstance(value, _MADE) or (repeated and isinstance(value.left, ast.List))


def _changing_use(name: ast.Name, parent: ast.AST) -> bool:
    """Whether a read of ``name`` may change the list it names (or hand it to code that may)."""
    if isinstance(parent, ast.Attribute):
        return True
    if isinstance(parent, ast.Subscript) and parent.value is name:
        return not isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Call) and name in parent.args + [k.value for k in parent.keywords]:
        reader = isinstance(parent.func, ast.Name) and parent.func.id in _READING_BUILTINS
        return not reader
    return isinstance(parent, ast.Starred)


class Tables(NonLocalNames):
    """Rewrites ``NAME[index]`` reads of names not bound in the function into
    ``<runtime>.table(NAME, index)``, and of the lists it makes and never changes
    (``read_only_lists``) into ``<runtime>.local_table(NAME, index)`` (its own scope and the
    functions the conversion made)."""

    def __init__(
        self, runtime: str, generated: tuple, local: set, reserved: tuple, made: set = frozenset()
    ):
        super().__init__(generated, local)
        self.runtime, self.reserved, self.made = runtime, reserved, made

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        value = node.value
        if not isinstance(node.ctx, ast.Load) or not isinstance(value, ast.Name):
            return node
        if isinstance(node.slice, (ast.Slice, ast.Tuple)):
            return node
        made = value.id in self.made
        if (value.id in self.shadowed and not made) or value.id.startswith(self.reserved):
            return node  # (a reserved name: the conversion's own, bound after ``local``)
        function = "local_table" if made else "table"
        read = ast.Attribute(ast.Name(self.runtime, ast.Load()), function, ast.Load())
        return ast.copy_location(ast.Call(read, [value, node.slice], []), node)
