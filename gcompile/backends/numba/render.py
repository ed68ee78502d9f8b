"""The renderer: a loop IR kernel as the source of one Numba function.

Two forms: the canonical text (values named ``v0, v1, ...`` in the order the lowering met them,
no comments), which is the kernel's cache key, so equal kernels share it; and the readable text
(node names, each IR line as a comment above what it became), which ``explain`` and ``fn.code``
show. The ``Namespace`` hands out the identifiers: legal, unique, and never one the generated
code uses itself.
"""

from __future__ import annotations

import keyword
import re

import numpy as np

from ...ir.graph import Node
from ...ir.printer import format_node
from ...ir.shape_env import source_of
from ...loops.nodes import (
    Accumulate,
    Affine,
    Alloc,
    Apply,
    Assign,
    Attr,
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
    Release,
    Return,
    Size,
    Slice,
    Store,
    Tuple,
    Update,
    Var,
    While,
    typed,
)
from ...loops.printer import ATOM, UNARY, format_expr, size_text
from ...loops.reductions import better
from . import mathlib
from .rules import NoTemplate, rule_of
from .syntax import cast, literal, type_name, untyped_literal

INDENT = "    "
# names the generated code uses: its globals and builtins, and its own variables
_RESERVED = {
    "np",
    "math",
    "cmath",
    "_s",
    "_m",
    "carray",
    "prange",
    "range",
    "kernel",
    "_matmul_into",
    "_dispatcher_of",
    "_objmode",
    "abs",
    "bool",
    "complex",
    "min",
    "max",
}
_GENERATED = re.compile(
    r"^(i|n|o|s|st|b|e|lo|hi|c|ld|out)\d*$|^a\d+$"
    r"|^(acc|mid|blk|cnt|buf|part|best|at|rowlen|lane|bad|blocks|dev|mean|ref|top|shrink|nd)_?"
)
_ACCUMULATE = {"sum": "{t} += {v}", "prod": "{t} *= {v}", "any": "{t} = {t} | {v}"}
_ACCUMULATE.update(all="{t} = {t} & {v}", max="{t} = _s.maximum({t}, {v})")
_ACCUMULATE.update(min="{t} = _s.minimum({t}, {v})")


def identifier(name: str) -> str:
    """A graph node's name as a legal identifier that no generated name can take."""
    name = re.sub(r"\W", "_", name)
    if (
        keyword.iskeyword(name)
        or name in _RESERVED
        or _GENERATED.match(name)
        or name[0].isdigit()
        or name.startswith("out_")
    ):
        return f"{name}_v"
    return name


class Namespace:
    """Identifiers of graph nodes: ``v<k>`` in the canonical form, the node's name (made legal
    and unique) in the readable one, handed out in the order of ``values`` first."""

    def __init__(self, readable: bool, values: tuple):
        self.readable = readable
        self.names: dict[Node, str] = {}
        for node in values:
            self.name(node)

    def name(self, node: Node) -> str:
        if node not in self.names:
            if not self.readable:
                self.names[node] = f"v{len(self.names)}"
            else:
                taken = set(self.names.values())
                base = identifier(node.name)
                name, k = base, 1
                while name in taken:
                    k += 1
                    name = f"{base}_{k}"
                self.names[node] = name
        return self.names[node]

    def var(self, var: Var) -> str:
        """The identifier of a loop IR variable."""
        node = "" if var.node is None else self.name(var.node)
        return f"{var.name}{node}{var.suffix}"


def render(
    kernel: Kernel, readable: bool, names: Namespace | None = None, function: str = "kernel"
) -> tuple[str, list]:
    """``(source, parameter names)`` of ``kernel`` (a fused kernel, a loop program or the host)
    as the function ``function``, its identifiers from ``names`` (by default a new namespace);
    raises ``NoTemplate`` for an element no rule writes."""
    names = Namespace(readable, kernel.values) if names is None else names
    renderer = _Renderer(names, readable, kernel.symbols)
    params = [renderer.names.var(p.var) for p in kernel.params]
    lines = renderer.block(kernel.entry + kernel.body, INDENT)
    header = f"def {function}({', '.join(params)}):"
    return "\n".join([header, *lines]) + "\n", params


class _Renderer:
    def __init__(self, names: Namespace, readable: bool, symbols: tuple = ()):
        self.readable = readable
        self.names = names
        self.symbols = {symbol: names.var(var) for symbol, var in symbols}

    # -- statements ---------------------------------------------------------------------------
    def block(self, stmts: tuple, indent: str, carried: tuple = ()) -> list:
        lines: list = []
        for stmt in stmts:
            lines += self.statement(stmt, indent)
        if carried:
            targets = ", ".join(self.names.var(var) for var, _ in carried)
            lines.append(f"{indent}{targets}, = {', '.join(self.expr(v) for _, v in carried)},")
        if all(isinstance(stmt, Comment) for stmt in stmts) and not carried:
            lines.append(f"{indent}pass")
        return lines

    def statement(self, stmt, indent: str) -> list:
        if isinstance(stmt, Loop):
            body = self.block(stmt.body, indent + INDENT, stmt.carried)
            if stmt.exit is not None:
                inner = indent + INDENT
                body += [f"{inner}if {self.names.var(stmt.exit)}:", f"{inner}{INDENT}break"]
            return [f"{indent}{self.loop_header(stmt)}:", *body]
        if isinstance(stmt, If):
            return self.branch(stmt, indent, "if")
        if isinstance(stmt, While):
            inner = indent + INDENT
            test = self.block(stmt.test, inner) if stmt.test else []
            stop = [f"{inner}if not {self.expr(stmt.cond)}:", f"{inner}{INDENT}break"]
            body = self.block(stmt.body, inner, stmt.carried)
            return [f"{indent}while True:", *test, *stop, *body]
        if isinstance(stmt, ObjectMode):
            outputs = ", ".join(f"{self.names.var(v)}={t!r}" for v, t in stmt.outputs)
            return [f"{indent}with _objmode({outputs}):", *self.block(stmt.body, indent + INDENT)]
        if isinstance(stmt, Comment):
            return [f"{indent}# {self.comment(stmt)}"] if self.readable else []
        if isinstance(stmt, Init):
            return [indent + line for line in self.init(stmt)]
        if isinstance(stmt, Accumulate):
            return self.accumulate(stmt, indent)
        return [indent + self.simple(stmt)]

    def loop_header(self, loop: Loop) -> str:
        start, stop = self.expr(loop.start), self.expr(loop.stop)
        if loop.step != 1:
            bounds = f"{start}, {stop}, {loop.step}"
        else:
            bounds = stop if loop.start == Const(0) else f"{start}, {stop}"
        function = "prange" if loop.parallel else "range"
        return f"for {self.names.var(loop.var)} in {function}({bounds})"

    def branch(self, stmt: If, indent: str, keyword_: str) -> list:
        lines = [
            f"{indent}{keyword_} {self.expr(stmt.cond)}:",
            *self.block(stmt.body, indent + INDENT),
        ]
        if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], If):
            return lines + self.branch(stmt.orelse[0], indent, "elif")
        if stmt.orelse:
            lines += [f"{indent}else:", *self.block(stmt.orelse, indent + INDENT)]
        return lines

    def comment(self, stmt: Comment) -> str:
        if stmt.node is None:
            return stmt.text.format(*(self.names.var(v) for v in stmt.names))
        text = format_node(stmt.node)
        if stmt.node.source:
            text += f"    # {stmt.node.source}"
        return text

    def init(self, stmt: Init) -> list:
        acc = stmt.acc
        if acc.kind == "arg":  # at = -1: no element seen yet
            best, at = self.names.var(acc.var("best")), self.names.var(acc.var("at"))
            return [f"{best} = {literal(0, acc.dtype)}", f"{at} = -1"]
        return [f"{self.names.var(acc.var(stmt.part))} = {self.expr(acc.init)}"]

    def accumulate(self, stmt: Accumulate, indent: str) -> list:
        acc = stmt.acc
        value = typed(stmt.value, stmt.source, acc.dtype)
        if acc.kind != "arg":
            target = self.names.var(acc.var(stmt.part))
            return [indent + _ACCUMULATE[acc.kind].format(t=target, v=self.expr(value))]
        best, at = acc.var("best"), acc.var("at")
        wins = BoolOp("or", (Compare(("<",), (at, Const(0))), better(acc, value)))
        record = (Let(best, value), Let(at, stmt.index))
        return self.branch(If(wins, record), indent, "if")

    def simple(self, stmt) -> str:
        if isinstance(stmt, Let):
            return f"{self.names.var(stmt.var)} = {self.expr(stmt.value)}"
        if isinstance(stmt, Update):
            return f"{self.names.var(stmt.var)} {stmt.op}= {self.expr(stmt.value)}"
        if isinstance(stmt, Store):
            return (
                f"{self.names.var(stmt.buffer)}[{self.index(stmt.index)}] = {self.expr(stmt.value)}"
            )
        if isinstance(stmt, Alloc):
            return f"{self.names.var(stmt.var)} = {self.alloc(stmt)}"
        if isinstance(stmt, Eval):
            return self.expr(stmt.value)
        if isinstance(stmt, Assign) and isinstance(stmt.target, Tuple):  # unpacking
            targets = [self.expr(item) for item in stmt.target.items]
            comma = "," if len(targets) == 1 else ""
            return f"{', '.join(targets)}{comma} = {self.expr(stmt.value)}"
        if isinstance(stmt, Assign):
            return f"{self.expr(stmt.target)} = {self.expr(stmt.value)}"
        if isinstance(stmt, CallKernel):
            arguments = [
                self.expr(v) if k is None else f"{k}={self.expr(v)}" for k, v in stmt.arguments
            ]
            return f"{self.names.var(stmt.function)}({', '.join(arguments)})"
        if isinstance(stmt, Return):
            if stmt.bare and not stmt.values:
                return "return"
            return f"return {self.expr(stmt.values[0] if stmt.bare else Tuple(stmt.values))}"
        if isinstance(stmt, Release):
            return f"del {', '.join(self.names.var(v) for v in stmt.vars)}"
        if isinstance(stmt, Raise):
            argument = "" if stmt.message is None else repr(stmt.message)
            return f"raise {stmt.exception}({argument})"
        raise TypeError(f"not a loop IR statement: {stmt!r}")

    def alloc(self, stmt: Alloc) -> str:
        if isinstance(stmt.size, Tuple) and stmt.order == "F":  # the transpose of a C array
            reverse = Alloc(stmt.var, Tuple(stmt.size.items[::-1]), stmt.dtype, stmt.fill)
            return f"{self.alloc(reverse)}.T"
        size = self.expr(stmt.size)
        if stmt.stack:
            return f"carray(_s.block_buffer({literal(0, stmt.dtype)}, {size}), {size})"
        # an array of a shape (a program's) is made as NumPy makes it (``memory``)
        module = "_memory" if isinstance(stmt.size, Tuple) else "np"
        if stmt.fill is not None:
            return f"{module}.full({size}, {self.expr(stmt.fill)}, {type_name(stmt.dtype)})"
        return f"{module}.empty({size}, {type_name(stmt.dtype)})"

    # -- expressions ----------------------------------------------------------------------------
    def expr(self, expr) -> str:
        return format_expr(expr, self.leaf)[0]

    def leaf(self, expr) -> tuple[str, int]:
        if isinstance(expr, Var):
            return self.names.var(expr), ATOM
        if isinstance(expr, Const):
            text = (
                untyped_literal(expr.value)
                if expr.dtype is None
                else literal(expr.value, expr.dtype)
            )
            return text, UNARY if text.startswith("-") else ATOM
        if isinstance(expr, Load):
            return f"{self.names.var(expr.buffer)}[{self.index(expr.index)}]", ATOM
        if isinstance(expr, Cast):
            if np.dtype(expr.source) == np.dtype(expr.target):
                return format_expr(expr.value, self.leaf)
            return cast(self.expr(expr.value), expr.source, expr.target), ATOM
        if isinstance(expr, Convert):
            return f"{type_name(expr.dtype)}({self.expr(expr.value)})", ATOM
        if isinstance(expr, Apply):
            return self.apply(expr), ATOM
        if isinstance(expr, Intrinsic):
            return self.intrinsic(expr), ATOM
        return self.program_leaf(expr)

    def program_leaf(self, expr) -> tuple[str, int]:
        """The expressions of loop programs: sizes, globals, calls, attributes, subscripts."""
        if isinstance(expr, Size):
            return size_text(source_of(expr.expr, self.symbols))
        if isinstance(expr, Name):
            return expr.text, ATOM
        if isinstance(expr, Call):
            arguments = [self.expr(a) for a in expr.args]
            arguments += [f"{k}={self.expr(v)}" for k, v in expr.keywords]
            return f"{self.atom(expr.function)}({', '.join(arguments)})", ATOM
        if isinstance(expr, Attr):
            return f"{self.atom(expr.value)}.{expr.name}", ATOM
        if isinstance(expr, Item):
            items = ", ".join(self.item(i) for i in expr.items) or "()"
            return f"{self.atom(expr.value)}[{items}]", ATOM
        if isinstance(expr, Tuple):
            items = ", ".join(self.expr(i) for i in expr.items)
            return f"({items}{',' if len(expr.items) == 1 else ''})", ATOM
        raise TypeError(f"not a loop IR expression: {expr!r}")

    def atom(self, expr) -> str:
        text, level = format_expr(expr, self.leaf)
        return text if level >= ATOM else f"({text})"

    def item(self, item) -> str:
        if item is None:
            return "None"
        if not isinstance(item, Slice):
            return self.expr(item)
        start, stop = ("" if p is None else self.expr(p) for p in (item.start, item.stop))
        return f"{start}:{stop}" + ("" if item.step is None else f":{self.expr(item.step)}")

    def index(self, index) -> str:
        if not isinstance(index, Affine):
            return ", ".join("0" if v is None else self.names.var(v) for v in index.items)
        terms = [] if index.offset is None else [self.names.var(index.offset)]
        for coefficient, var in index.terms:
            name = self.names.var(var)
            if isinstance(coefficient, Var):
                terms.append(f"{self.names.var(coefficient)} * {name}")
            else:
                terms.append(name if coefficient == 1 else f"-{name}")
        if not terms:
            return "0"
        # Unsigned, so Numba does not test for negative indices (that test stops LLVM
        # from vectorising the loop); the index of a valid view is never negative.
        return f"np.uint64({' + '.join(terms).replace('+ -', '- ')})"

    def apply(self, apply: Apply) -> str:
        op = apply.op
        if isinstance(op.impl, np.ufunc):
            if apply.loop is None:
                raise NoTemplate(f"{op.name}: no NumPy loop for these operand types")
            if any(d == np.float16 for d in apply.loop):
                raise NoTemplate(f"float16 (NumPy's loop for {op.name} here; Numba has no float16)")
        args = [None if a is None else self.expr(a) for a in apply.args]
        rule = rule_of(op)
        text = None if rule is None else rule.write(args, apply)
        if text is None:
            kinds = ", ".join(str(k) for k in apply.kinds)
            raise NoTemplate(f"no template for {op.name} on ({kinds})")
        if rule.typed_by_numba(apply):
            return text  # (a conversion per element costs Numba typing time: ~25% of a kernel's)
        return f"{type_name(apply.node.meta.dtype)}({text})"

    def intrinsic(self, call: Intrinsic) -> str:
        args = ", ".join(self.expr(a) for a in call.args)
        name = call.name
        if name.startswith("lane_"):
            kind = name[len("lane_") :]
            floats = call.dtype.kind == "f" and kind in ("sum", "max", "min")
            return f"_s.{'float_lane' if floats else 'lane'}_{kind}({args})"
        if name in ("flat_C", "flat_F"):  # an array's memory as one axis (no copy: contiguous)
            return f"_s.flat({args})"
        if name == "shifted_exp":
            return f"_s.shifted_{mathlib.TEMPLATES['exp'].function(call.dtype)}({args})"
        functions = {"rescaled_total": "_s.rescaled_total", "exp": "math.exp", "sqrt": "np.sqrt"}
        return f"{functions.get(name, name)}({args})"
