"""The text form of a graph (``printer``) read back: ``Graph.parse(str(graph))``.

Each line is read with Python's own parser after two rewrites that make it Python: ``%name``
becomes a name of its own, and ``index=[1:, k0]`` a subscript ``_index[1:, k0]``. The syntax
tree is then evaluated by a small evaluator of its own (never ``eval``): numbers, strings,
``None``/``True``/``False``, ``inf``/``nan``, tuples, lists and dicts, symbolic sizes
(``s0``, ``k0``: symbols; ``+ - * // %``, ``min``, ``max``), dtypes by name (``float64``),
NumPy scalars (``f64(1.0)``), ufuncs (``np.add``), the table's named records (``ViewStep``)
and slices. A node's op is the table's op of its name, its meta the printed one (an array's
layout and flags are not printed: C and writeable).

What the text does not hold cannot be read back: ops holding graphs (fused kernels, loops,
branches, library calls, callbacks) and constants of more than 8 elements (printed without
their values) raise ``ParseError`` naming them.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np

from . import externs, ops
from .graph import Graph, Node
from .meta import _WEAK_NAMES, TensorMeta, TupleMeta, dtype_abbrev
from .pytree import flatten
from .symbolic import Symbol, sym_max, sym_min

_DTYPES = {
    dtype_abbrev(np.dtype(name)): np.dtype(name)
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")
    + ("uint64", "float16", "float32", "float64", "complex64", "complex128")
}
_WEAK = {
    name: {"b": np.bool_, "i": np.int64, "f": np.float64, "c": np.complex128}[kind]
    for kind, name in _WEAK_NAMES.items()
    if kind != "u"
}
_NODE = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)")
_OPERAND = re.compile(r"#([0-9]+)")
_LIBRARIES = ("np", "np.linalg", "np.fft")
_HEADER = re.compile(r"graph ([A-Za-z_][A-Za-z0-9_]*)\((.*)\):$")
_LINE = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s+=\s+(.*)$")
_BINARY = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__"}
_BINARY.update({ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__"})


class ParseError(ValueError):
    """Text that is not a graph's text form, or holds what the text form cannot give back."""


def parse_graph(text: str) -> Graph:
    """The graph whose text form (``str(graph)``) is ``text``."""
    lines = text.rstrip("\n").split("\n")
    header = _HEADER.match(lines[0])
    if header is None:
        raise ParseError(f"not a graph's first line: {lines[0]!r}")
    reader = _Reader(Graph(header.group(1)))
    for parameter in _split(header.group(2)):
        name, _, meta = parameter.partition(":")
        reader.record(reader.graph.placeholder(name.strip(), reader.meta(meta.strip())))
    for number, line in enumerate(lines[1:], 2):
        reader.line(line, number)
    return reader.graph


class _Reader:
    """Reads the lines of one graph into it."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.symbols: dict[str, Symbol] = {}
        self.nodes: dict[str, Node] = {}  # (by name: a graph's own lookup walks its nodes)
        self.done = False

    def record(self, node: Node) -> None:
        self.nodes[node.name] = node

    def line(self, line: str, number: int) -> None:
        if not line.startswith("  ") or line.startswith("    ") or self.done:
            what = "a graph held by an op" if line.startswith("    ") else "a line"
            raise ParseError(f"line {number}: {what} the text form cannot give back: {line!r}")
        body = line.strip()
        if body.startswith("return "):
            structure = self.value(body[len("return ") :])
            leaves, spec = flatten(structure)
            self.graph.output(tuple(value for _, value in leaves), spec)
            self.done = True
            return
        match = _LINE.match(body)
        if match is None:
            raise ParseError(f"line {number}: not a node: {line!r}")
        name, meta, rhs = match.groups()
        self.node(name, self.meta(meta), rhs, number)

    def node(self, name: str, meta: Any, rhs: str, number: int) -> None:
        if rhs.startswith("const<"):
            value = self.constant(rhs, meta, number)
            node = self.graph.constant(value, meta, name=name)
            node.name = name
            self.record(node)
            return
        op = ops._BY_NAME.get(rhs.partition("(")[0])
        if op is None:
            raise ParseError(
                f"line {number}: {rhs.partition('(')[0]} is no op of the table (an op "
                "holding graphs, a library call or a callback cannot be read back)"
            )
        call = self.expression(rhs)
        if not isinstance(call, ast.Call):
            raise ParseError(f"line {number}: not an op call: {rhs!r}")
        args = tuple(self.evaluate(a) for a in call.args)
        kwargs = {k.arg: self.evaluate(k.value) for k in call.keywords}
        self.record(self.graph.call(op, args, kwargs, meta=meta, name=name))

    def constant(self, rhs: str, meta: Any, number: int) -> np.ndarray:
        values = rhs[rhs.index(">") + 1 :]
        if not values:
            raise ParseError(f"line {number}: a constant printed without its values")
        return np.array(self.value(values), dtype=meta.dtype).reshape(meta.shape)

    def meta(self, text: str) -> Any:
        if text.startswith("("):
            return TupleMeta(tuple(self.meta(item) for item in _split(text[1:-1])))
        if text in _WEAK:
            return TensorMeta((), _WEAK[text], weak=True, scalar=True)
        dtype, _, shape = text.partition("[")
        if dtype not in _DTYPES or not shape.endswith("]"):
            raise ParseError(f"not a meta: {text!r}")
        sizes = tuple(self.value(size) for size in _split(shape[:-1]))
        return TensorMeta(sizes, _DTYPES[dtype])

    def value(self, text: str) -> Any:
        return self.evaluate(self.expression(text))

    def expression(self, text: str) -> ast.expr:
        python = _NODE.sub(r"_node_\1", text).replace("index=[]", "index=()")
        python = _OPERAND.sub(r"_operand(\1)", python.replace("index=[", "index=_index["))
        try:
            return ast.parse(python, mode="eval").body
        except SyntaxError as error:
            raise ParseError(f"not the text form: {text!r} ({error.msg})") from None

    def evaluate(self, tree: ast.expr) -> Any:
        """The value of one printed literal (see the module docstring)."""
        if isinstance(tree, ast.Constant):
            return tree.value
        if isinstance(tree, (ast.Tuple, ast.List)):
            items = [self.evaluate(item) for item in tree.elts]
            return tuple(items) if isinstance(tree, ast.Tuple) else items
        if isinstance(tree, ast.Dict):
            return {self.evaluate(k): self.evaluate(v) for k, v in zip(tree.keys, tree.values)}
        if isinstance(tree, ast.Name):
            return self.name(tree.id)
        if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, (ast.USub, ast.UAdd)):
            operand = self.evaluate(tree.operand)
            if isinstance(operand, complex) and isinstance(tree.op, ast.USub):
                return complex(operand.real, -operand.imag)  # (-2j prints a real part of +0)
            return -operand if isinstance(tree.op, ast.USub) else operand
        if isinstance(tree, ast.BinOp) and type(tree.op) in _BINARY:
            number = _complex_literal(tree)
            if number is not None:
                return number
            left, right = self.evaluate(tree.left), self.evaluate(tree.right)
            result = getattr(left, _BINARY[type(tree.op)])(right)
            if result is NotImplemented:
                result = getattr(right, "__r" + _BINARY[type(tree.op)][2:])(left)
            return result
        if isinstance(tree, ast.Subscript) and _is_name(tree.value, "_index"):
            return self.index(tree.slice)
        if isinstance(tree, ast.Attribute) and _is_name(tree.value, "np"):
            function = getattr(np, tree.attr, None)
            if isinstance(function, np.ufunc):
                return function
        if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name):
            return self.call(tree)
        if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute):
            return self.library_call(tree)
        raise ParseError(f"not a literal of the text form: {ast.unparse(tree)!r}")

    def index(self, tree: ast.expr) -> tuple:
        items = tree.elts if isinstance(tree, ast.Tuple) else [tree]
        return tuple(
            self.slice(item) if isinstance(item, ast.Slice) else self.evaluate(item)
            for item in items
        )

    def slice(self, tree: ast.Slice) -> slice:
        parts = (tree.lower, tree.upper, tree.step)
        return slice(*(None if p is None else self.evaluate(p) for p in parts))

    def call(self, tree: ast.Call) -> Any:
        name = tree.func.id
        args = [self.evaluate(a) for a in tree.args]
        kwargs = {k.arg: self.evaluate(k.value) for k in tree.keywords}
        if name in _DTYPES and len(args) == 1 and not kwargs:
            return _DTYPES[name].type(args[0])
        if name in ("min", "max") and not kwargs:
            return (sym_min if name == "min" else sym_max)(*args)
        if name == "ViewStep":
            return ops.ViewStep(*args, **kwargs)
        if name == "_operand" and len(args) == 1 and not kwargs:
            return externs.Operand(args[0])
        raise ParseError(f"not a literal of the text form: {name}(...)")

    def library_call(self, tree: ast.Call) -> externs.ExternCall:
        """An extern's ``call=np.sort(a=#0, axis=None)``: a function with a rule (a probed one's
        results are not in the text)."""
        name = ast.unparse(tree.func)
        library, _, attribute = name.rpartition(".")
        function = (
            getattr(eval_library(library), attribute, None) if library in _LIBRARIES else None
        )
        if function is None or function not in externs.RULES:
            raise ParseError(
                f"{name}: no library call with a rule (a probed one cannot be read back)"
            )
        arguments = [(f"#{i}", self.evaluate(a)) for i, a in enumerate(tree.args)]
        arguments += [(k.arg, self.evaluate(k.value)) for k in tree.keywords]
        return externs.ExternCall(name, function, tuple(arguments), len(tree.args))

    def name(self, name: str) -> Any:
        if name.startswith("_node_"):
            node = self.nodes.get(name[len("_node_") :])
            if node is None:
                raise KeyError(
                    f"no node named {name[len('_node_') :]!r} in graph {self.graph.name}"
                )
            return node
        if name in ("inf", "nan"):
            return float(name)
        if name == "Ellipsis":
            return Ellipsis
        if re.fullmatch(r"[sk][0-9]+", name):
            return self.symbols.setdefault(name, Symbol(name, 2 if name[0] == "s" else 0))
        try:
            dtype = np.dtype(name)
        except TypeError:
            raise ParseError(f"an unknown name: {name}") from None
        return dtype


def eval_library(name: str) -> Any:
    """``np``, ``np.linalg`` or ``np.fft`` by its printed name."""
    return {"np": np, "np.linalg": np.linalg, "np.fft": np.fft}[name]


def _complex_literal(tree: ast.BinOp) -> complex | None:
    """``(-0-1j)`` as Python prints it, signed zeros kept (``-0`` is an int there: no sign)."""
    right = tree.right
    if not (isinstance(right, ast.Constant) and isinstance(right.value, complex)):
        return None
    left, sign = tree.left, 1.0
    if isinstance(left, ast.UnaryOp) and isinstance(left.op, ast.USub):
        left, sign = left.operand, -1.0
    if not isinstance(left, ast.Constant) or not isinstance(left.value, (int, float)):
        return None
    imaginary = right.value.imag if isinstance(tree.op, ast.Add) else -right.value.imag
    return (
        complex(sign * float(left.value), imaginary)
        if type(tree.op) in (ast.Add, ast.Sub)
        else None
    )


def _is_name(tree: ast.expr, name: str) -> bool:
    return isinstance(tree, ast.Name) and tree.id == name


def _split(text: str) -> list[str]:
    """``text`` split at its commas outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for position, char in enumerate(text):
        depth += char in "([{" and 1 or (char in ")]}" and -1 or 0)
        if char == "," and depth == 0:
            parts.append(text[start:position].strip())
            start = position + 1
    last = text[start:].strip()
    return parts + [last] if last or parts else parts
