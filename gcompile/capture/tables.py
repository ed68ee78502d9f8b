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
"""

from __future__ import annotations

import ast
import dis
import types
from typing import Any

from .scopes import NonLocalNames

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


def loaded_globals(code: types.CodeType) -> set:
    """The names ``code`` and the code objects nested in it load as globals (not the
    attribute names ``co_names`` also holds: ``x.size`` is no global ``size``)."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_LOADS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= loaded_globals(const)
    return names


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


class Tables(NonLocalNames):
    """Rewrites ``NAME[index]`` reads of names not bound in the function into
    ``<runtime>.table(NAME, index)`` (its own scope and the functions the conversion made)."""

    def __init__(self, runtime: str, generated: tuple, local: set, reserved: tuple):
        super().__init__(generated, local)
        self.runtime, self.reserved = runtime, reserved

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        value = node.value
        if not isinstance(node.ctx, ast.Load) or not isinstance(value, ast.Name):
            return node
        if value.id in self.shadowed or isinstance(node.slice, (ast.Slice, ast.Tuple)):
            return node
        if value.id.startswith(self.reserved):  # (the conversion's own, bound after ``local``)
            return node
        read = ast.Attribute(ast.Name(self.runtime, ast.Load()), "table", ast.Load())
        return ast.copy_location(ast.Call(read, [value, node.slice], []), node)
