"""Who may import whom (docs/architecture.md): ir imports only ir; passes import ir; loops (the
loop IR) imports ir; backends import ir and loops, never passes; the front end (``frontend/``:
the traced array, the recorder, NumPy patching, loop tracing, sizes, complex parts,
decompositions) imports ir and capture; capture (loop conversion) imports nothing else of
gcompile; interop (other libraries' arrays) imports only errors, and guards may use it; ``dask/``
(compiled functions over dask arrays) sits beside api, which calls it, and imports the front end,
guards and passes to trace; tools and cli sit on top; nothing imports cli. ``errors`` and ``config`` are leaves
that any layer may use."""

from __future__ import annotations

import ast
from pathlib import Path

import gcompile

PACKAGE = Path(gcompile.__file__).parent

ALLOWED = {
    "ir": {"ir"},
    "passes": {"ir", "passes", "errors", "config"},
    "loops": {"ir", "loops"},
    "backends": {"ir", "loops", "backends", "errors", "config"},
    "frontend": {"ir", "errors", "frontend", "capture"},
    "guards": {"ir", "errors", "interop"},
    "interop": {"interop", "errors"},
    "capture": {"capture"},
    "dask": {"ir", "frontend", "guards", "passes", "errors", "api", "dask"},
    "errors": set(),
    "config": set(),
}


def gcompile_imports(path: Path) -> set[str]:
    """First-level gcompile modules imported by the file at ``path``."""
    tree = ast.parse(path.read_text())
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(parts[: len(parts) - node.level])
                target = base + (node.module.split(".") if node.module else [])
                names = [target[0]] if target else [alias.name for alias in node.names]
                found.update(names)
            elif node.module and node.module.startswith("gcompile."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("gcompile."):
                    found.add(alias.name.split(".")[1])
    return found


def test_import_layers():
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        imports = gcompile_imports(path)
        if "cli" in imports and layer != "cli":
            violations.append(f"{path.name} imports cli")
        if layer in ALLOWED and not imports <= ALLOWED[layer]:
            violations.append(
                f"{path.relative_to(PACKAGE)} ({layer}) imports {sorted(imports - ALLOWED[layer])}"
            )
    assert not violations, "\n".join(violations)


def test_the_checker_sees_imports():
    assert gcompile_imports(PACKAGE / "frontend" / "function.py") == {
        "errors",
        "ir",
        "frontend",
        "capture",
    }
    assert gcompile_imports(PACKAGE / "backends" / "interpreter.py") == {"errors", "ir"}
    assert gcompile_imports(PACKAGE / "loops" / "lower.py") == {"ir", "loops"}
