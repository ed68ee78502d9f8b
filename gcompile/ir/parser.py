"""The text form of a graph (``printer``) read back: ``Graph.parse(str(graph))``.

Each line is read with Python's own parser after two rewrites that make it Python: ``%name``
becomes a name of its own, and ``index=[1:, k0]`` a subscript ``_index[1:, k0]``. The syntax
tree is then evaluated by a small evaluator of its own (never ``eval``): numbers, strings,
``None``/``True``/``False``, ``inf``/``nan``, tuples, lists and dicts, symbolic sizes
(``s0``, ``k0``: symbols; ``+ - * // %``, ``min``, ``max``), dtypes by name (``float64``),
NumPy scalars (``f64(1.0)``), ufuncs (``np.add``), views (``transpose(axes=(1, 0))``: an
``update``'s ``ViewStep``) and slices; a record returned (a namedtuple, a dataclass instance,
``namespace(...)``: a name called with keywords alone) reads back as a record of that name and
fields (``_Record``; a ``SimpleNamespace`` for ``namespace``), which prints the same. A node's op is the table's op of its name, its meta the printed one (an array's
layout and flags are not printed: C and writeable). A constant's values are read as numbers
one by one (Python's ``int``, ``float``, ``complex``), in the shape of its meta.

The graphs an op holds follow its line, indented, each headed by its role and the op's note
(``region_note``): a loop's index and interval (``k0 in [1, s0-1]``, the symbol its body's
sizes use), what it carries (``carried s <- %add_2, x <- %x (in place)``: each carried
placeholder and the output feeding it), a branch's or test's operands, a branch's outputs'
names and updates, a fused kernel's style and space. A loop's ``names`` are its carried
placeholders'; a kernel's ``members`` the ops of its graph; no op has a ``source``. A
library call names a function of ``np``, ``np.linalg`` or ``np.fft`` (no other module is
looked at): one with a rule, or one a probe may stand for, whose results are the line's
meta. The top graph's sizes are read from the axes of its placeholders where they first
appear, so that the graph runs.

What the text does not hold cannot be read back, and raises ``ParseError`` naming it: a
callback (a Python function called for its effect), and a constant printed without its
values (``str`` prints those of at most 8 elements; ``format_graph(graph, values=True)``
prints all).
"""

from __future__ import annotations

import ast
import importlib
import re
import types
from dataclasses import replace
from typing import Any

import numpy as np

from . import externs, ops
from .control import Cond, ForRange, WhileLoop
from .graph import Graph, Node
from .kernel import FusedKernel
from .meta import _WEAK_NAMES, TensorMeta, TupleMeta, dtype_abbrev
from .printer import format_literal
from .pytree import RowsOf, SliceOf, flatten
from .shape_env import data_size_bindings
from .subgraph import regions_of
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
_LIBRARIES = {"np": np, "np.linalg": np.linalg, "np.fft": np.fft}


def _scipy_module(name: str) -> Any:
    """The public SciPy module ``name`` (``scipy.linalg``), imported; else None."""
    if not name.startswith("scipy.") or any(p.startswith("_") for p in name.split(".")):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_HEADER = re.compile(r"(?:([A-Za-z_]\w*): )?graph ([A-Za-z_]\w*)\((.*?)\):(?:    # (.*))?$")
_LINE = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s+=\s+(.*)$")
_INTERVAL = re.compile(r"([a-z][0-9]+) in \[(.*)\]$")
_CARRIED = re.compile(r"([A-Za-z_]\w*) <- (.*?)( \(in place\))?$")
_UPDATE = re.compile(r"argument ([0-9]+) <- output ([0-9]+)( \(in place\))?$")
_SPACE = re.compile(r"([a-z]+) over (\[.*\])$")
_BINARY = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__"}
_BINARY.update({ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__", ast.Pow: "__pow__"})
_NUMBERS = {"b": {"True": True, "False": False}.__getitem__, "i": int, "u": int}
_NUMBERS.update({"f": float, "c": complex})


class ParseError(ValueError):
    """Text that is not a graph's text form, or holds what the text form cannot give back."""


def parse_graph(text: str) -> Graph:
    """The graph whose text form (``str(graph)``) is ``text``."""
    lines = _Lines(text)
    graph, _ = _read_graph(lines, 0, None)
    if lines.position < len(lines.lines):
        number = lines.position + 1
        raise ParseError(f"line {number}: a line out of place: {lines.lines[number - 1]!r}")
    _bind_sizes(graph)
    _mark_repeated(graph)
    return graph


class _Lines:
    """The text's lines, read in order, and the symbols its graphs share."""

    def __init__(self, text: str):
        self.lines = text.rstrip("\n").split("\n")
        self.position = 0
        self.symbols: dict[str, Symbol] = {}

    def peek(self, indent: int) -> str | None:
        """The next line without its indent when it is indented by ``indent`` spaces, else None."""
        if self.position == len(self.lines):
            return None
        line = self.lines[self.position]
        body = line[indent:]
        return body if line[:indent] == " " * indent and not body.startswith(" ") else None

    def take(self) -> int:
        """Pass the next line; its number (1 for the first)."""
        self.position += 1
        return self.position


def _read_graph(lines: _Lines, indent: int, outer: Graph | None) -> tuple[Graph, dict]:
    """The graph whose header is the next line (at ``indent``) and its header's note (with
    ``role``); ``outer``: the graph holding the op that holds it (None for the top graph)."""
    text, number = lines.peek(indent) or "", lines.take()
    header = _HEADER.match(text)
    if header is None or (header.group(1) or header.group(4)) and outer is None:
        raise ParseError(f"line {number}: not a graph's first line: {text!r}")
    role, name, parameters, note = header.groups()
    reader = _Reader(Graph(name, None if outer is None else outer.shape_env), lines)
    for parameter in _split(parameters):
        placeholder, _, meta = parameter.partition(":")
        reader.record(reader.graph.placeholder(placeholder.strip(), reader.meta(meta.strip())))
    notes = {"role": role, **reader.note(note or "", number)}
    while (body := lines.peek(indent + 2)) is not None:
        number = lines.take()
        if body.startswith("return "):
            reader.output(body[len("return ") :], nested=outer is not None)
            break
        match = _LINE.match(body)
        if match is None:
            raise ParseError(f"line {number}: not a node: {body!r}")
        regions = []
        while _HEADER.match(lines.peek(indent + 4) or ""):
            regions.append(_read_graph(lines, indent + 4, reader.graph))
        reader.node(*match.groups(), number, regions)
    return reader.graph, notes


class _Record(types.SimpleNamespace):
    """A record returned (a namedtuple, a dataclass instance) read back: its class's name and
    its fields, any names (``_w`` too), printed as the original prints."""

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class _Reader:
    """Reads the lines of one graph into it."""

    def __init__(self, graph: Graph, lines: _Lines):
        self.graph = graph
        self.symbols = lines.symbols
        self.nodes: dict[str, Node] = {}  # (by name: a graph's own lookup walks its nodes)

    def record(self, node: Node) -> None:
        self.nodes[node.name] = node

    def output(self, text: str, nested: bool) -> None:
        """The ``return`` line; a held graph returns a flat tuple without a structure."""
        leaves, spec = flatten(self.value(text))
        flat = nested and spec.kind == "tuple" and all(c.kind == "leaf" for c in spec.children)
        self.graph.output(tuple(value for _, value in leaves), None if flat else spec)

    def note(self, text: str, number: int) -> dict:
        """The clauses of a held graph's header note (``printer``), by name; an interval
        (``k0 in [1, s0-1]``) defines its symbol, as ``index``."""
        notes: dict[str, Any] = {}
        for clause in filter(None, text.split("; ")):
            key, _, rest = clause.partition(" ")
            if (interval := _INTERVAL.match(clause)) is not None:
                notes["index"] = self.define(interval.group(1), interval.group(2), number)
            elif (space := _SPACE.match(clause)) is not None:
                notes["style"], notes["space"] = space.group(1), tuple(self.value(space.group(2)))
            elif key in ("carried", "updates", "outputs"):
                notes[key] = [] if rest == "nothing" else _split(rest)
            elif key == "operands":
                notes[key] = tuple(self.value(rest))
            elif key == "until":
                notes[key] = rest
            elif clause.startswith("result into argument "):
                notes["result"] = int(clause.rpartition(" ")[2])
            else:
                raise ParseError(f"line {number}: not a note of the text form: {clause!r}")
        return notes

    def define(self, name: str, interval: str, number: int) -> Symbol:
        """The symbol ``name`` in ``[lo, hi]`` (``interval``: ``lo, hi``), known from here on."""
        lo, hi = (self.value(end) for end in _split(interval))
        symbol = Symbol(name, lo, hi)
        if self.symbols.setdefault(name, symbol) != symbol:
            raise ParseError(f"line {number}: {name} in [{interval}] is used before, otherwise")
        return symbol

    def node(self, name: str, meta: str, rhs: str, number: int, regions: list) -> None:
        meta = self.meta(meta)
        if rhs.startswith("const<"):
            node = self.graph.constant(self.constant(rhs, meta, number), meta, name=name)
            node.name = name
            self.record(node)
            return
        what = rhs.partition("(")[0]
        if what == "callback":
            raise ParseError(
                f"line {number}: %{name} calls back into Python ({rhs}): the text form cannot "
                "hold a Python function"
            )
        op = _held(what, regions, number) if regions else ops._BY_NAME.get(what)
        if op is None:
            raise ParseError(f"line {number}: {what} is no op of the table")
        call = self.expression(rhs)
        if not isinstance(call, ast.Call):
            raise ParseError(f"line {number}: not an op call: {rhs!r}")
        args = tuple(self.evaluate(a) for a in call.args)
        kwargs = {k.arg: self.evaluate(k.value) for k in call.keywords}
        library = kwargs.get("call")
        if isinstance(library, externs.ExternCall) and library.function not in externs.RULES:
            several = isinstance(meta, TupleMeta)  # (a probed call's results: the line's meta)
            probed = externs.Probed(meta.items if several else (meta,), several)
            kwargs["call"] = replace(library, probed=probed)
        elif isinstance(library, externs.ExternCall) and library.function in externs.DATA_SIZED:
            lengths = tuple(symbol for symbol, _, _ in data_size_bindings(meta))
            kwargs["call"] = replace(library, lengths=lengths)  # (the line's meta has them)
        self.record(self.graph.call(op, args, kwargs, meta=meta, name=name))

    def constant(self, rhs: str, meta: Any, number: int) -> np.ndarray:
        """A constant's values, read as numbers one by one into its meta's shape."""
        values = rhs[rhs.index(">") + 1 :]
        if not values:
            raise ParseError(
                f"line {number}: a constant printed without its values (all of them print "
                "with format_graph(graph, values=True))"
            )
        words = values.replace("[", "").replace("]", "").replace(" ", "").split(",")
        try:
            numbers = [_NUMBERS[meta.dtype.kind](word) for word in words if word]
            return np.array(numbers, dtype=meta.dtype).reshape(meta.shape)
        except (KeyError, ValueError) as error:
            raise ParseError(f"line {number}: not the values of a {meta}: {error}") from None

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
        if name in ops._BY_NAME and not args:  # a view on the way to an update's region
            return ops.ViewStep(ops._BY_NAME[name], tuple(kwargs.items()))
        if name == "rows" and len(args) == 2 and not kwargs:  # (a list returned as rows)
            return RowsOf(*args)
        if name == "sliced" and len(args) == 3 and not kwargs:  # (a slice the data bound)
            return SliceOf(*args)
        if name == "_operand" and len(args) == 1 and not kwargs:
            return externs.Operand(args[0])
        if kwargs and not args:  # (a record returned)
            if name == "namespace":
                return types.SimpleNamespace(**kwargs)
            return type(name, (_Record,), {})(**kwargs)
        raise ParseError(f"not a literal of the text form: {name}(...)")

    def library_call(self, tree: ast.Call) -> externs.ExternCall:
        """An extern's ``call=np.sort(a=#0, axis=None)``: a function of an allowed library with a
        rule, or one a probe may stand for (its results are the node's meta)."""
        name = ast.unparse(tree.func)
        library, _, attribute = name.rpartition(".")
        module = _LIBRARIES.get(library) or _scipy_module(library)
        function = getattr(module, attribute, None) if module is not None else None
        if function is None or not (function in externs.RULES or externs.probeable(function)):
            raise ParseError(f"{name}: no library call of NumPy's")
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
        if re.fullmatch(r"[sku][0-9]+", name):
            return self.symbols.setdefault(name, Symbol(name, 2 if name[0] == "s" else 0))
        try:
            dtype = np.dtype(name)
        except TypeError:
            raise ParseError(f"an unknown name: {name}") from None
        return dtype


def _held(name: str, regions: list, number: int) -> Any:
    """The op ``name`` holding ``regions`` (``(graph, notes)`` pairs, read from the text)."""
    try:
        if name == "for_range":
            return _for_range(regions)
        if name == "while_loop":
            return _while_loop(regions)
        if name == "cond":
            return _cond(regions)
        ((graph, notes),) = regions
        members = tuple(n.target.name for n in graph.nodes if n.op == "call")
        kernel = (notes["style"], notes["space"], graph, members, notes.get("result"))
        return FusedKernel(name, *kernel)
    except (KeyError, ValueError) as error:
        raise ParseError(
            f"line {number}: {name}'s graphs and notes are not an op's: {error}"
        ) from None


def _by_role(regions: list, *roles: str) -> list:
    """The ``(graph, notes)`` of each role, in the order of ``roles``."""
    found = {notes["role"]: (graph, notes) for graph, notes in regions}
    if sorted(found) != sorted(roles) or len(regions) != len(roles):
        raise ValueError(f"the roles {sorted(found)}, not {list(roles)}")
    return [found[role] for role in roles]


def _for_range(regions: list) -> ForRange:
    ((body, notes),) = regions
    carries, names, in_place = _carried(body, notes["carried"])
    flag = dict(zip(names, (output for _, output in carries))).get(notes.get("until"), None)
    if "until" in notes and flag is None:
        raise ValueError(f"no carried {notes['until']} for until")
    return ForRange(body, notes["index"], carries, names, in_place=in_place, exit=flag)


def _while_loop(regions: list) -> WhileLoop:
    (body, notes), (test, checked) = _by_role(regions, "body", "test")
    carries, names, in_place = _carried(body, notes["carried"])
    return WhileLoop(body, test, checked["operands"], carries, names, in_place=in_place)


def _cond(regions: list) -> Cond:
    (then, notes), (orelse, other) = _by_role(regions, "then", "else")
    carries, in_place = [], set()
    for entry in notes.get("updates", ()):
        argument, output, mark = _matched(_UPDATE, entry).groups()
        carries.append((int(argument), int(output)))
        in_place |= {int(argument)} if mark else set()
    names = tuple(notes.get("outputs", ()))
    operands = (notes["operands"], other["operands"])
    return Cond(then, orelse, *operands, tuple(carries), names, in_place=frozenset(in_place))


def _carried(body: Graph, entries: list) -> tuple:
    """``(carries, names, in_place)`` of a loop from its note's ``carried`` entries (``x <- %y
    (in place)``), in the order of the outputs: the output each names is the next one showing
    that value."""
    placeholders = [p.name for p in body.placeholders]
    outputs = [format_literal(v) for v in body.output_node.args[0]]
    carries, names, in_place = [], [], set()
    for entry in entries:
        name, shown, mark = _matched(_CARRIED, entry).groups()
        taken = {output for _, output in carries}
        output = next(i for i, text in enumerate(outputs) if text == shown and i not in taken)
        carries.append((placeholders.index(name), output))
        names.append(name)
        in_place |= {placeholders.index(name)} if mark else set()
    return tuple(carries), tuple(names), frozenset(in_place)


def _matched(pattern: re.Pattern, text: str) -> re.Match:
    match = pattern.match(text)
    if match is None:
        raise ValueError(f"not a note's entry: {text!r}")
    return match


def _bind_sizes(graph: Graph) -> None:
    """Each size symbol of the top graph read from the first placeholder axis it is, so that the
    graph runs (``ShapeEnv.bind``)."""
    env = graph.shape_env
    for i, placeholder in enumerate(graph.placeholders):
        for axis, size in enumerate(getattr(placeholder.meta, "shape", ())):
            if isinstance(size, Symbol) and size not in env.sources:
                env.sources[size] = (i, axis)
                env.symbols.append(size)


def _mark_repeated(graph: Graph) -> None:
    """Mark the graphs that run many times per call (``Graph.repeated``): a loop's body, and
    the graphs of loops and branches inside it (a fused kernel's graph is not)."""
    for node in graph.nodes:
        for region in regions_of(node):
            body = getattr(node.target, "repeats", False) and region.role == "body"
            kept = not isinstance(node.target, FusedKernel)
            region.graph.repeated = kept and (body or graph.repeated)
            _mark_repeated(region.graph)


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
