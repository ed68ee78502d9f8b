"""The gate in front of every source a loaded archive runs: what gcompile's generators write,
and nothing else.

Two forms are accepted, checked on their syntax tree before anything runs (the writer checks
them too, so an archive it makes always passes):

* **Kernel modules** (kernels and loop programs, compiled by Numba in nopython mode, where no
  Python object can be reached): imports of the modules generated code uses only, globals bound
  to other kernel modules by key (``name = _dispatcher_of('<40 hex digits>')``), and functions
  under ``@njit(...)`` with literal options and no defaults; no call back into Python
  (``objmode``), no dunder attribute.
* **Host functions** (plain Python: the host calling kernels, the size check): one function of
  one parameter ``inputs``, whose names are its own variables, the globals the loader gives it
  and a few builtins, whose attributes are ``shape``, ``type`` and ``copy`` (``np.matmul``,
  ``np.dot`` and ``np.asarray`` on ``np``), with no import, class, nested function, lambda,
  ``with``, ``try``, ``global`` or comprehension. It runs with those builtins only.
"""

from __future__ import annotations

import ast
import re

# what kernel modules may import: module -> the names they may take from it (None: itself)
_KERNEL_IMPORTS = {
    "cmath": None,
    "math": None,
    "numpy": None,
    "numba": {"carray", "njit", "prange"},
    "gcompile.backends.numba": {
        "mathlib",
        "scalar",
        "memory",
        "copies",
        "histograms",
        "size_checks",
    },
    "gcompile.backends.numba.program_entry": {"GuardFailure"},
    "gcompile.ir.ops": {"RerunEagerly"},
    "gcompile.backends.numba.cache": {"dispatcher_of"},
    "gcompile.backends.numba.blas": {"matmul_into"},
    "gcompile.backends.numba.linking": {"KernelCompiler"},
}
KEY = re.compile(r"[0-9a-f]{40}")

HOST_BUILTINS = ("abs", "bool", "complex", "dict", "float", "int", "len", "list", "max", "min")
HOST_BUILTINS += ("range", "slice", "tuple", "zip")
_HOST_ATTRIBUTES = {"shape", "type", "copy"}
_NUMPY_ATTRIBUTES = {"matmul", "dot", "asarray"}
_HOST_FORBIDDEN = (
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.ClassDef,
    ast.Lambda,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.With,
    ast.Try,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.NamedExpr,
)


class SourceRefused(ValueError):
    """A source that is not of a form gcompile generates (see the module docstring)."""


def kernel_keys(text: str) -> list[str]:
    """The kernel modules a module binds by key (checked: only ``check_kernel_module``'s form)."""
    keys = []
    for statement in _parse(text).body:
        if isinstance(statement, ast.Assign):
            keys.append(_bound_key(statement))
    return keys


def check_kernel_module(text: str) -> None:
    """Raise ``SourceRefused`` unless ``text`` is a kernel module of the generated form."""
    tree = _parse(text)
    for position, statement in enumerate(tree.body):
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            _check_import(statement)
        elif isinstance(statement, ast.Assign):
            _bound_key(statement)
        elif isinstance(statement, ast.FunctionDef):
            _check_njit(statement)
        elif not (position == 0 and _is_docstring(statement)):
            raise SourceRefused(f"line {statement.lineno}: a {type(statement).__name__} statement")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            raise SourceRefused(f"line {node.lineno}: the attribute {node.attr}")
        if isinstance(node, ast.Name) and node.id in ("objmode", "_objmode", "__import__"):
            raise SourceRefused(f"line {node.lineno}: {node.id} (a call back into Python)")


def check_host_function(text: str, name: str, names: set) -> None:
    """Raise ``SourceRefused`` unless ``text`` defines only the host function ``name`` of the
    generated form, reading no global outside ``names`` (the loader's) and the builtins."""
    tree = _parse(text)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise SourceRefused("not one function")
    function = tree.body[0]
    arguments = function.args
    if function.name != name or function.decorator_list or function.returns:
        raise SourceRefused(f"not the function {name}")
    if [a.arg for a in arguments.args] != ["inputs"] or arguments.defaults:
        raise SourceRefused("not a function of inputs")
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
        raise SourceRefused("not a function of inputs")
    local = {"inputs"} | {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    known = local | names | set(HOST_BUILTINS)
    for node in ast.walk(function):
        if node is not function and isinstance(node, _HOST_FORBIDDEN):
            raise SourceRefused(f"line {node.lineno}: a {type(node).__name__}")
        if isinstance(node, ast.Name) and node.id not in known:
            raise SourceRefused(f"line {node.lineno}: the name {node.id}")
        if isinstance(node, ast.Attribute):
            numpy = isinstance(node.value, ast.Name) and node.value.id == "np"
            allowed = _NUMPY_ATTRIBUTES if numpy else _HOST_ATTRIBUTES
            if node.attr not in allowed:
                raise SourceRefused(f"line {node.lineno}: the attribute {node.attr}")


def _parse(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError) as error:
        raise SourceRefused(f"not Python: {error}") from None


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _check_import(statement: ast.Import | ast.ImportFrom) -> None:
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.name not in _KERNEL_IMPORTS or _KERNEL_IMPORTS[alias.name] is not None:
                raise SourceRefused(f"line {statement.lineno}: import {alias.name}")
        return
    allowed = _KERNEL_IMPORTS.get(statement.module or "")
    if statement.level or not allowed or any(a.name not in allowed for a in statement.names):
        raise SourceRefused(f"line {statement.lineno}: an import from {statement.module}")


def _bound_key(statement: ast.Assign) -> str:
    """The key of ``name = _dispatcher_of('<key>')``; ``SourceRefused`` for another assignment."""
    value = statement.value
    if (
        len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "_dispatcher_of"
        and not value.keywords
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Constant)
        and isinstance(value.args[0].value, str)
        and KEY.fullmatch(value.args[0].value)
    ):
        return value.args[0].value
    raise SourceRefused(f"line {statement.lineno}: an assignment of another form")


def _names(expression: ast.expr, name: str) -> bool:
    return isinstance(expression, ast.Name) and expression.id == name


def _check_njit(function: ast.FunctionDef) -> None:
    """A function compiled by ``@njit(<literal options>)``, without defaults."""
    decorators = function.decorator_list
    if len(decorators) != 1 or not isinstance(decorators[0], ast.Call):
        raise SourceRefused(f"line {function.lineno}: a function not under @njit(...)")
    call = decorators[0]
    if not isinstance(call.func, ast.Name) or call.func.id != "njit" or call.args:
        raise SourceRefused(f"line {function.lineno}: a function not under @njit(...)")
    for keyword in call.keywords:
        if keyword.arg == "pipeline_class" and _names(keyword.value, "KernelCompiler"):
            continue  # (gcompile's compiler: ``linking``)
        try:
            ast.literal_eval(keyword.value)
        except ValueError:
            raise SourceRefused(f"line {function.lineno}: @njit option {keyword.arg}") from None
    arguments = function.args
    if arguments.defaults or arguments.kw_defaults or function.returns:
        raise SourceRefused(f"line {function.lineno}: defaults or annotations")
