"""Converting a Python function: its loops and ``if`` statements become runtime calls (see
``transform``).

``convert(fn)`` reads the function's source, rewrites it and compiles it into a new function
sharing ``fn``'s globals dict (module globals stay live) and closure cells. The runtime, the
``LoopInfo`` and ``BranchInfo`` objects and the call router reach the new code through closure
cells of their own, so the user's globals are not touched. Conversions are cached: the compiled
code per code object, the function per function object.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import copy
import dataclasses
import functools
import inspect
import linecache
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from . import runtime
from .runtime import BranchInfo, LoopInfo
from .transform import CALL, RUNTIME, rewrite, uses_reserved

_FACTORY = "__gc_factory"
_CONVERTED = "__gc_converted"
_FUTURE_FLAGS = functools.reduce(
    lambda a, b: a | b, (getattr(__future__, f).compiler_flag for f in __future__.all_feature_names)
)
UNCONVERTIBLE_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


@dataclass
class Converted:
    """A converted function.

    Attributes:
        function: the new function (same globals, closure cells, defaults and name).
        loops: a ``LoopInfo`` per converted loop, outer loops before the loops nested in them.
        notes: ``(line, reason)`` per loop left as a Python loop.
        source: the rewritten function as text (for debugging; line numbers differ).
        branches: a ``BranchInfo`` per converted ``if`` statement, an ``if`` before those
            nested in it.
        branch_notes: ``(line, reason)`` per ``if`` statement left as written.
    """

    function: Callable
    loops: list[LoopInfo] = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)
    source: str = ""
    branches: list[BranchInfo] = field(default_factory=list)
    branch_notes: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class _Template:
    """What every function of one code object shares."""

    code: types.CodeType  # the rewritten function's code
    cells: dict[str, Any]  # values of its reserved free names
    loops: list[LoopInfo]
    notes: list[tuple[int, str]]
    source: str
    branches: list[BranchInfo]
    branch_notes: list[tuple[int, str]]


_TEMPLATES: dict[tuple[types.CodeType, str], _Template | str] = {}
_FUNCTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def convert(fn: Callable) -> Converted | None:
    """``fn`` with its loops and ``if`` statements converted, or None when it is not converted (see
    ``convert_or_reason`` for why)."""
    return convert_or_reason(fn)[0]


def convert_or_reason(fn: Callable) -> tuple[Converted | None, str]:
    """``(Converted, "")``, or ``(None, why fn is not converted)``.

    Not converted: objects other than plain Python functions, lambdas, generators and
    coroutines, functions without source (builtins, ``exec``, the REPL) or whose source does
    not match their code, functions using a reserved name (``__gc_...``, ``_loop_body_...``),
    methods naming a private name where it is not mangled here (``_private_elsewhere``), and
    functions with neither a ``for`` loop nor a call of a function defined in their module
    (``if`` statements alone do not count).
    """
    if type(fn) is types.MethodType and type(fn.__func__) is types.FunctionType:
        converted, why = convert_or_reason(fn.__func__)  # (a bound method: its function's)
        if converted is None:
            return None, why
        bound = types.MethodType(converted.function, fn.__self__)
        return dataclasses.replace(converted, function=bound), ""
    if type(fn) is not types.FunctionType:
        return None, f"{fn!r} is not a plain Python function"
    known = _FUNCTIONS.get(fn)
    if known is not None and known[0] is fn.__code__ and known[1] is fn.__defaults__:
        return known[2], ""
    key = (fn.__code__, fn.__code__.co_filename)
    template = _TEMPLATES.get(key)
    if template is None:
        template = _TEMPLATES[key] = _template_or_reason(fn)
    if isinstance(template, str):
        return None, template
    converted = Converted(
        _build(fn, template),
        template.loops,
        template.notes,
        template.source,
        template.branches,
        template.branch_notes,
    )
    _FUNCTIONS[fn] = (fn.__code__, fn.__defaults__, converted)
    _FUNCTIONS[converted.function] = (converted.function.__code__, fn.__defaults__, converted)
    return converted, ""


def _template_or_reason(fn: types.FunctionType) -> _Template | str:
    code = fn.__code__
    if code.co_flags & UNCONVERTIBLE_FLAGS:
        return "generators and coroutines are not converted"
    if code.co_name == "<lambda>":
        return "lambdas are not converted"
    found = parse_function(fn)
    if isinstance(found, str):
        return found
    function, lines, first = found
    if _in_class(fn):
        private = _private_elsewhere(function)
        if private:
            return f"a method naming `{private}` where gcompile does not mangle it as Python does"
        _Mangled(fn.__qualname__.split(".")[-2]).visit(function)
    why = _source_problem(fn, function)
    if why:
        return why
    function.decorator_list = []
    function.name = _CONVERTED  # inside the factory, the function's own name stays global
    done = rewrite(function, _router(fn), _module_names(fn))
    decides = done.loops or done.notes or done.branches or done.expressions or done.comprehensions
    decides = decides or done.effects or done.raises
    offered = done.calls & {*runtime.OFFERED_BUILTINS, runtime.MATH_MODULE}  # (``int(x)``...)
    methods = _in_class(fn) and bool(done.methods)  # (``self.step(x)``: perhaps one to convert)
    calls = _calls_module_function(fn, done.calls) or _reads_library(fn)
    if not (decides or offered or methods or calls):
        return "nothing to convert (no loop, comprehension of an array, `if`, `and`, `or`, `not`, conditional expression or call of a function of its module)"
    loops = [_site_info(LoopInfo, code.co_filename, lines, first, p) for _, p in done.loops]
    branches = [_site_info(BranchInfo, code.co_filename, lines, first, p) for _, p in done.branches]
    source = ast.unparse(function).replace(_CONVERTED, code.co_name, 1)
    cells = {RUNTIME: runtime, CALL: functools.partial(runtime.call, fn.__module__)}
    cells.update((name, info) for (name, _), info in zip(done.loops, loops))
    cells.update((name, info) for (name, _), info in zip(done.branches, branches))
    cells.update(
        (name, _site_info(BranchInfo, code.co_filename, lines, first, plan))
        for name, plan in done.expressions
    )
    cells.update(
        (name, _site_info(LoopInfo, code.co_filename, lines, first, plan))
        for name, plan in done.comprehensions
    )
    compiled = _compile(fn, function, list(cells))
    return _Template(compiled, cells, loops, done.notes, source, branches, done.branch_notes)


def register_source(code: types.CodeType, function: ast.FunctionDef) -> None:
    """Record the definition of a function made from a part of another's source (a graph
    break's region, ``breaks``), whose own source lines are not a ``def`` of it."""
    _REGISTERED[code] = function


_REGISTERED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def parse_function(fn: types.FunctionType) -> tuple[ast.FunctionDef, list[str], int] | str:
    """The function's definition with the line numbers of its file, its source lines and
    the number of the first one; or why there is none."""
    registered = _REGISTERED.get(fn.__code__)
    if registered is not None:
        return copy.deepcopy(registered), linecache.getlines(fn.__code__.co_filename), 1
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as error:
        return f"its source is not available ({error})"
    text = "".join(lines)
    indented = text[:1].isspace()
    if indented:  # keeps columns and multi-line strings as written (dedent would not)
        text = "if 1:\n" + text
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        return f"its source does not parse ({error.msg})"
    ast.increment_lineno(tree, first - 1 - indented)
    node = tree.body[0].body[0] if indented else tree.body[0]
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__code__.co_name:
        return "its source is not a `def` statement of that name"
    return node, lines, first


def _source_problem(fn: types.FunctionType, function: ast.FunctionDef) -> str:
    code = fn.__code__
    params = function.args
    names = [a.arg for a in params.posonlyargs + params.args + params.kwonlyargs]
    names += [a.arg for a in (params.vararg, params.kwarg) if a is not None]
    if tuple(names) != code.co_varnames[: len(names)]:
        return "its source does not match its code (was the file edited?)"
    reserved = uses_reserved(function)
    if reserved:
        return f"it uses the name `{reserved}`, reserved for converted code"
    return ""


def _in_class(fn: types.FunctionType) -> bool:
    parts = fn.__qualname__.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"


class _Mangled(ast.NodeTransformer):
    """A method's private names (``self.__x``) spelled as Python's compiler mangles them in
    the body of class ``owner`` (``self._KNN__x``): the converted function is compiled outside
    the class, where they would not be."""

    def __init__(self, owner: str):
        self.prefix = f"_{owner.lstrip('_')}" if owner.strip("_") else ""

    def mangled(self, name: str | None) -> str | None:
        return self.prefix + name if self.prefix and _is_private(name) else name

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.mangled(node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        node.attr = self.mangled(node.attr)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        self.generic_visit(node)
        node.arg = self.mangled(node.arg)
        return node


def _is_private(name: str | None) -> bool:
    return name is not None and name.startswith("__") and not name.endswith("__")


def _private_elsewhere(function: ast.FunctionDef) -> str | None:
    """A private name where ``_Mangled`` does not spell it (a nested ``def`` or ``class``,
    ``except ... as``, ``global``, ``nonlocal``, an import), if the method has one."""
    for node in ast.walk(function):
        if node is not function and isinstance(node, _NAMED) and _is_private(node.name):
            return node.name
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            found = [n for n in node.names if _is_private(n)]
            if found:
                return found[0]
        if isinstance(node, ast.alias) and (_is_private(node.asname) or _is_private(node.name)):
            return node.asname or node.name
    return None


_NAMED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)


def _router(fn: types.FunctionType) -> Callable[[str], bool]:
    """Which non-local call names go through ``runtime.call``: all but the builtins that the
    module does not shadow, except ``max`` and ``min`` (a handler may take them over)."""
    globals_ = fn.__globals__
    return lambda name: (
        name in globals_ or not hasattr(builtins, name) or name in runtime.OFFERED_BUILTINS
    )


def _module_names(fn: types.FunctionType) -> Callable[[str], bool]:
    """Which names ``fn`` reads from its globals or closure are modules (``np``, ``math``) but
    a library's (``scipy.linalg``: its functions' calls are routed, ``runtime.call``)."""
    read = _reader(fn)
    return lambda name: isinstance(read(name), types.ModuleType) and not _library(read(name))


def _reads_library(fn: types.FunctionType) -> bool:
    """Whether ``fn`` names a library's module or function (SciPy's), whose calls on traced
    values are library calls (``runtime.call``)."""
    read = _reader(fn)
    return any(_library(read(name)) for name in fn.__code__.co_names + fn.__code__.co_freevars)


def _library(value: Any) -> bool:
    """Whether ``value`` is SciPy's module or function."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] == "scipy"
    module = getattr(value, "__module__", None) if callable(value) else None
    return isinstance(module, str) and module.split(".")[0] == "scipy"


def _calls_module_function(fn: types.FunctionType, names: set[str]) -> bool:
    """Whether one of ``names`` is now a function or class of ``fn``'s module (a class: its
    methods called after may be converted)."""
    read = _reader(fn)
    return any(
        type(value) in (types.FunctionType, type) and value.__module__ == fn.__module__
        for value in map(read, names)
    )


def _reader(fn: types.FunctionType) -> Callable[[str], Any]:
    """The value ``fn`` now reads for a name it does not bind: its closure's, else its
    global (None: neither)."""
    free = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    return lambda name: _cell_value(free[name]) if name in free else fn.__globals__.get(name)


def _cell_value(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _site_info(kind: type, filename: str, lines: list[str], first: int, plan):
    """The ``LoopInfo`` or ``BranchInfo`` of a converted statement's ``plan``."""
    node = plan.node
    extra = {}
    if kind is LoopInfo:
        extra = {"target": node.target.id if plan.kind != "while" else "", "kind": plan.kind}
    return kind(
        filename=filename,
        line=node.lineno,
        end_line=node.end_lineno,
        carried=plan.carried,
        source=lines[node.lineno - first].strip(),
        effects=plan.effects,
        calls_on=plan.calls_on,
        **extra,
    )


def _compile(fn: types.FunctionType, function: ast.FunctionDef, names: list[str]) -> types.CodeType:
    """The code of ``function`` (named ``_CONVERTED``) compiled as ``fn``'s (``compile_function``)."""
    code = fn.__code__
    inner = compile_function(fn, function, names).replace(co_name=code.co_name)
    if hasattr(code, "co_qualname"):  # Python 3.11+
        inner = inner.replace(co_qualname=code.co_qualname)
    return inner


def compile_function(
    fn: types.FunctionType, function: ast.FunctionDef, names: list[str]
) -> types.CodeType:
    """The code of ``function`` compiled inside a factory function whose parameters are
    ``names`` and ``fn``'s free names, so that all of them are free names of the result (in
    ``fn``'s file, with its future flags)."""
    code = fn.__code__
    free = names + [name for name in code.co_freevars if name not in names]  # (a converted
    # function's nested one, converted in turn, reads the runtime's names as free names too)
    params = [ast.arg(name) for name in free]
    args = ast.arguments(posonlyargs=[], args=params, kwonlyargs=[], kw_defaults=[], defaults=[])
    # (the def would make its own name a local of the factory, and a recursive call of the
    # module's function a closure variable; the factory is never run)
    own_name = [] if function.name in free else [ast.Global([function.name])]
    factory = ast.FunctionDef(
        _FACTORY, args, [*own_name, function], decorator_list=[], returns=None
    )
    if "type_params" in ast.FunctionDef._fields:
        factory.type_params = []
    module = ast.Module([ast.copy_location(factory, function)], type_ignores=[])
    ast.fix_missing_locations(module)
    flags = code.co_flags & _FUTURE_FLAGS
    compiled = compile(module, code.co_filename, "exec", flags=flags, dont_inherit=True)
    return _nested_code(_nested_code(compiled, _FACTORY), function.name)


def _nested_code(code: types.CodeType, name: str) -> types.CodeType:
    return next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == name)


def _build(fn: types.FunctionType, template: _Template) -> types.FunctionType:
    """A function of the template's code with ``fn``'s globals, cells and attributes."""
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells = {name: types.CellType(value) for name, value in template.cells.items()}
    cells.update(own)
    closure = tuple(cells[name] for name in template.code.co_freevars)
    new = types.FunctionType(template.code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    return functools.update_wrapper(new, fn)
