"""Text of the loop IR (golden tests, debugging), and the operator precedence both this printer
and the backends' renderers use to write expressions with the parentheses they need.

    kernel fused_1(out0, n0, s0, x):
      for i0 in range(n0) [kept]:
        init acc_sum_1 = f64(0.0)
        for i1 in range(n1) [reduce]:
          # %sum_1 : f64[8] = sum(%x, axis=-1)
          ld0 = x[s0*i0 + i1]
          acc_sum_1 += ld0
        sum_1 = f64(acc_sum_1)
        out0[i0] = sum_1

Values are named after their graph nodes (``sum_1``), loads ``ld<k>``; ``f64(...)`` is a
conversion, ``exp.fast(...)`` a call of the backend's fast path, ``sin.exact(...)`` a call that
must not take a range-limited one.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ir.meta import dtype_abbrev
from ..ir.printer import format_node
from .nodes import (
    Accumulate,
    Affine,
    Alloc,
    Apply,
    Assign,
    Attr,
    BinOp,
    BoolOp,
    Call,
    CallKernel,
    Cast,
    Comment,
    Compare,
    Const,
    Convert,
    Eval,
    If,
    IfExp,
    Init,
    Intrinsic,
    Item,
    Kernel,
    Let,
    Load,
    Loop,
    Name,
    ObjectMode,
    Raise,
    RangeCheck,
    Release,
    Return,
    Size,
    Slice,
    Store,
    Tuple,
    Update,
    Var,
    While,
)

ATOM = 20  # the precedence of a name, a call or a subscript
UNARY = 11  # the precedence of -x (a negative literal)
SUM = 9  # the precedence of a sum (a symbolic size as source: ``s0 - 2``, ``2 * s1``)
_PRECEDENCE = {
    "or": 1,
    "and": 2,
    "compare": 4,
    "|": 5,
    "^": 6,
    "&": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "//": 10,
    "%": 10,
}
_ACCUMULATE = {"sum": "+=", "prod": "*=", "max": "max=", "min": "min=", "any": "|=", "all": "&="}


def format_expr(expr: Any, leaf: Callable[[Any], tuple[str, int]]) -> tuple[str, int]:
    """``(text, precedence)`` of ``expr``: operators here, every other node by ``leaf``."""
    if isinstance(expr, RangeCheck):
        expr = Compare((">",), (Intrinsic("abs", (expr.value,)), expr.bound))
    if isinstance(expr, BinOp):
        level = _PRECEDENCE[expr.op]
        left = _wrap(format_expr(expr.left, leaf), level)
        right = _wrap(format_expr(expr.right, leaf), level + 1)
        return f"{left} {expr.op} {right}", level
    if isinstance(expr, Compare):
        level = _PRECEDENCE["compare"]
        parts = [_wrap(format_expr(e, leaf), level + 1) for e in expr.operands]
        text = parts[0] + "".join(f" {op} {part}" for op, part in zip(expr.ops, parts[1:]))
        return text, level
    if isinstance(expr, BoolOp):
        level = _PRECEDENCE[expr.op]
        parts = [_wrap(format_expr(e, leaf), level) for e in expr.values]
        return f" {expr.op} ".join(parts), level
    if isinstance(expr, IfExp):
        then, cond, orelse = (
            _wrap(format_expr(e, leaf), 1) for e in (expr.then, expr.cond, expr.orelse)
        )
        return f"{then} if {cond} else {orelse}", 0
    return leaf(expr)


def _wrap(formatted: tuple[str, int], level: int) -> str:
    text, precedence = formatted
    return f"({text})" if precedence < level else text


def format_kernel(kernel: Kernel) -> str:
    """The text form of ``kernel`` (see the module docstring)."""
    params = ", ".join(_name(p.var) for p in kernel.params)
    lines = [f"kernel {kernel.name}({params}):"]
    _block(kernel.entry + kernel.body, "  ", lines)
    return "\n".join(lines) + "\n"


def _block(stmts: tuple, indent: str, lines: list) -> None:
    for stmt in stmts:
        if isinstance(stmt, Loop):
            step = f", {format_value(Const(stmt.step))}" if stmt.step != 1 else ""
            start = "" if stmt.start == Const(0) and not step else f"{format_value(stmt.start)}, "
            loop = "prange" if stmt.parallel else "range"
            lines.append(
                f"{indent}for {_name(stmt.var)} in {loop}({start}{format_value(stmt.stop)}{step}) "
                f"[{stmt.kind}]:"
            )
            _block(stmt.body, indent + "  ", lines)
            if stmt.carried:
                targets = ", ".join(_name(var) for var, _ in stmt.carried)
                values = ", ".join(format_value(value) for _, value in stmt.carried)
                lines.append(f"{indent}  carry {targets} = {values}")
            if stmt.exit is not None:
                lines.append(f"{indent}  until {_name(stmt.exit)}")
        elif isinstance(stmt, While):
            lines.append(f"{indent}while:")
            _block(stmt.test, indent + "  ", lines)
            lines.append(f"{indent}  until not {format_value(stmt.cond)}")
            _block(stmt.body, indent + "  ", lines)
            if stmt.carried:
                targets = ", ".join(_name(var) for var, _ in stmt.carried)
                values = ", ".join(format_value(value) for _, value in stmt.carried)
                lines.append(f"{indent}  carry {targets} = {values}")
            if stmt.exit is not None:
                lines.append(f"{indent}  until {_name(stmt.exit)}")
        elif isinstance(stmt, If):
            _branch(stmt, indent, "if", lines)
        elif isinstance(stmt, ObjectMode):
            outputs = ", ".join(f"{_name(v)}: {t}" for v, t in stmt.outputs)
            lines.append(f"{indent}in python ({outputs}):")
            _block(stmt.body, indent + "  ", lines)
        else:
            lines.append(indent + _statement(stmt))


def _branch(stmt: If, indent: str, keyword: str, lines: list) -> None:
    lines.append(f"{indent}{keyword} {format_value(stmt.cond)}:")
    _block(stmt.body, indent + "  ", lines)
    if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], If):
        _branch(stmt.orelse[0], indent, "elif", lines)
    elif stmt.orelse:
        lines.append(f"{indent}else:")
        _block(stmt.orelse, indent + "  ", lines)


def _statement(stmt) -> str:
    if isinstance(stmt, Let):
        return f"{_name(stmt.var)} = {format_value(stmt.value)}"
    if isinstance(stmt, Update):
        return f"{_name(stmt.var)} {stmt.op}= {format_value(stmt.value)}"
    if isinstance(stmt, Store):
        return f"{_name(stmt.buffer)}[{_index(stmt.index)}] = {format_value(stmt.value)}"
    if isinstance(stmt, Init):
        if stmt.acc.kind == "arg":
            return f"init {_name(stmt.acc.var('best'))}, {_name(stmt.acc.var('at'))}"
        text = f"init {_name(stmt.acc.var(stmt.part))} = {format_value(stmt.acc.init)}"
        if stmt.acc.online and stmt.part == "acc":
            text += f"  (of exp(x - {stmt.acc.online[0].node.name}))"
        return text
    if isinstance(stmt, Accumulate):
        target = _name(stmt.acc.var(stmt.part))
        if stmt.acc.kind == "arg":
            kind = "argmax" if stmt.acc.high else "argmin"
            best, at = _name(stmt.acc.var("best")), _name(stmt.acc.var("at"))
            return f"{best}, {at} {kind}= {format_value(stmt.value)} at {_name(stmt.index)}"
        return f"{target} {_ACCUMULATE[stmt.acc.kind]} {format_value(stmt.value)}"
    if isinstance(stmt, Alloc):
        where = "stack" if stmt.stack else "alloc"
        fill = f" = {format_value(stmt.fill)}" if stmt.fill is not None else ""
        once = " once" if stmt.once else ""
        order = f" {stmt.order}" if isinstance(stmt.size, Tuple) else ""
        size = format_value(stmt.size)
        return f"{_name(stmt.var)} = {where}{once}[{size}] {_dtype(stmt.dtype)}{order}{fill}"
    if isinstance(stmt, Assign):
        return f"{format_value(stmt.target)} = {format_value(stmt.value)}"
    if isinstance(stmt, CallKernel):
        arguments = [
            format_value(v) if k is None else f"{k}={format_value(v)}" for k, v in stmt.arguments
        ]
        return f"call {_name(stmt.function)}({', '.join(arguments)})"
    if isinstance(stmt, Return):
        return f"return {', '.join(format_value(v) for v in stmt.values)}"
    if isinstance(stmt, Release):
        return f"del {', '.join(_name(v) for v in stmt.vars)}"
    if isinstance(stmt, Raise):
        return f"raise {stmt.exception}({stmt.message!r})"
    if isinstance(stmt, Eval):
        return format_value(stmt.value)
    if isinstance(stmt, Comment):
        if stmt.node is not None:
            return f"# {format_node(stmt.node)}"
        return "# " + stmt.text.format(*(_name(v) for v in stmt.names))
    raise TypeError(f"not a loop IR statement: {stmt!r}")


def format_value(expr) -> str:
    """The text of one expression of the loop IR."""
    return format_expr(expr, _leaf)[0]


def _leaf(expr) -> tuple[str, int]:
    if isinstance(expr, Var):
        return _name(expr), ATOM
    if isinstance(expr, Const):
        text = _const(expr)
        return text, UNARY if text.startswith("-") else ATOM
    if isinstance(expr, Load):
        return f"{_name(expr.buffer)}[{_index(expr.index)}]", ATOM
    if isinstance(expr, Cast):
        if expr.source == expr.target:
            return format_expr(expr.value, _leaf)
        return f"{_dtype(expr.target)}({format_value(expr.value)})", ATOM
    if isinstance(expr, Convert):
        return f"{_dtype(expr.dtype)}({format_value(expr.value)})", ATOM
    if isinstance(expr, Apply):
        flags = ".fast" * expr.fast + ".exact" * expr.exact
        args = ", ".join("None" if a is None else format_value(a) for a in expr.args)
        return f"{expr.op.name}{flags}({args})", ATOM
    if isinstance(expr, Intrinsic):
        return f"{expr.name}({', '.join(format_value(a) for a in expr.args)})", ATOM
    if expr is None or isinstance(expr, (bool, int, float, complex, np.generic)):
        return repr(expr), ATOM
    return _program_leaf(expr)


def _program_leaf(expr) -> tuple[str, int]:
    """The expressions of loop programs."""
    if isinstance(expr, Size):
        return size_text(str(expr.expr))
    if isinstance(expr, Name):
        return expr.text, ATOM
    if isinstance(expr, Call):
        arguments = [format_value(a) for a in expr.args]
        arguments += [f"{k}={format_value(v)}" for k, v in expr.keywords]
        return f"{format_expr(expr.function, _leaf)[0]}({', '.join(arguments)})", ATOM
    if isinstance(expr, Attr):
        return f"{format_value(expr.value)}.{expr.name}", ATOM
    if isinstance(expr, Item):
        items = ", ".join(_item(i) for i in expr.items) or "()"
        return f"{format_value(expr.value)}[{items}]", ATOM
    if isinstance(expr, Tuple):
        items = ", ".join(format_value(i) for i in expr.items)
        return f"({items}{',' if len(expr.items) == 1 else ''})", ATOM
    raise TypeError(f"not a loop IR expression: {expr!r}")


def size_text(text: str) -> tuple[str, int]:
    """``(text, precedence)`` of a size written as ``text``: a name or a number binds as an
    atom, anything else (``s0 - 2``, ``2 * s1``) as a sum."""
    return text, ATOM if text.isidentifier() or text.isdigit() else SUM


def _item(item) -> str:
    if item is None:
        return "None"
    if not isinstance(item, Slice):
        return format_value(item)
    start, stop = ("" if p is None else format_value(p) for p in (item.start, item.stop))
    return f"{start}:{stop}" + ("" if item.step is None else f":{format_value(item.step)}")


def _name(var: Var) -> str:
    return var.name + (var.node.name if var.node is not None else "") + var.suffix


def _const(const: Const) -> str:
    if const.dtype is None or const.dtype == np.bool_:
        return repr(const.value)
    kind = np.dtype(const.dtype).kind
    value = (
        float(const.value)
        if kind == "f"
        else complex(const.value)
        if kind == "c"
        else int(const.value)
    )
    return f"{_dtype(const.dtype)}({value!r})"


def _dtype(dtype) -> str:
    return dtype_abbrev(np.dtype(dtype))


def _index(index) -> str:
    if isinstance(index, Affine):
        terms = [] if index.offset is None else [_name(index.offset)]
        for coefficient, var in index.terms:
            if isinstance(coefficient, Var):
                terms.append(f"{_name(coefficient)}*{_name(var)}")
            else:
                terms.append(_name(var) if coefficient == 1 else f"-{_name(var)}")
        return " + ".join(terms).replace("+ -", "- ") or "0"
    return ", ".join("0" if v is None else _name(v) for v in index.items)
