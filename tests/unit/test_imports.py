"""How the modules import each other, as docs/architecture.md promises it.

- no import cycle between evalcore's modules, counting the imports inside functions (a cycle hidden behind a
  function-level import still ties two modules into one: neither can be understood, tested or moved alone);
- one import path per name: ``from evalcore.m import name`` only where ``m`` defines ``name`` (or ``name`` is a
  submodule of ``m``). The two facades are the exceptions: ``evalcore`` (the notebook API) and ``evalcore.ui``
  (what the pages use);
- no module-level ``__getattr__`` (a re-export shim) outside the notebook API's lazy loader.

The rules are checked on the source (``ast``), so a test fails on a bad import even in code no test runs.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.helpers import ROOT

PACKAGE = ROOT / "evalcore"
#: Modules that may re-export names defined elsewhere: the notebook API and the pages' facade.
FACADES = {"evalcore", "evalcore.ui"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


MODULES = _package_modules()


def _sources() -> list[Path]:
    """Every Python file that imports evalcore: the package, the app and its pages, tests and benchmarks."""
    out = list(MODULES.values())
    for extra in ("app.py", "Home.py"):
        if (ROOT / extra).exists():
            out.append(ROOT / extra)
    for folder in ("app_pages", "tests", "benchmarks"):
        out += [p for p in sorted((ROOT / folder).rglob("*.py")) if "__pycache__" not in p.parts]
    return out


def _absolute(path: Path, node: ast.ImportFrom) -> str | None:
    """The absolute module name of ``from ... import``, resolving relative imports inside the package."""
    if node.level == 0:
        return node.module
    if PACKAGE not in path.parents:
        return None
    here = _module_name(path).split(".")
    is_package = path.name == "__init__.py"
    base = here if is_package else here[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path):
    """(module, [names] or None, line) for every import in the file, at any depth."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            if module:
                yield module, [a.name for a in node.names], node.lineno


def _graph() -> dict[str, set[str]]:
    """evalcore module -> the evalcore modules it imports (a name that is a submodule counts as that module)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in MODULES.items():
        for module, names, _ in _imports(path):
            if module not in MODULES:
                continue
            targets = [module]
            if names:
                subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
                # ``from pkg import submodule`` imports the submodule; the package's __init__ as well
                targets = subs + ([module] if len(subs) < len(names) else [])
            edges[name].update(t for t in targets if t != name)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    # The rule's own check: a two-module cycle, one side hidden in a function, is found; a chain is not.
    edges = {name: set() for name in MODULES}
    first, second, third = sorted(MODULES)[:3]
    edges[first] = {second}
    edges[second] = {third}
    assert _cycles(edges) == []
    edges[third] = {first}
    assert _cycles(edges) == [sorted([first, second, third])]


def test_no_import_cycles_counting_imports_inside_functions():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (break them by moving the shared names to a module both import):\n" + \
        "\n".join(" <-> ".join(c) for c in cycles)


def _defined(path: Path) -> set[str]:
    """Names a module binds at its top level (also inside top-level if/try blocks)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.If, ast.Try)):
            pending += node.body + node.orelse + getattr(node, "finalbody", [])
            for handler in getattr(node, "handlers", []):
                pending += handler.body
        elif isinstance(node, ast.Import):
            # ``import x.y as z`` binds a module, not a re-exported name; only modules are allowed that way
            names.update(a.asname for a in node.names if a.asname and a.name.startswith("evalcore."))
    return names


def test_every_name_is_imported_from_the_module_that_defines_it():
    defined = {name: _defined(path) for name, path in MODULES.items()}
    wrong = []
    for path in _sources():
        for module, names, line in _imports(path):
            if not names or module not in MODULES or module in FACADES:
                continue
            for name in names:
                if name == "*" or f"{module}.{name}" in MODULES or name in defined[module]:
                    continue
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {name} from {module}")
    assert not wrong, "names imported from a module that does not define them (import them from where they " \
        "are defined):\n" + "\n".join(wrong)


def test_no_module_level_getattr_shim():
    shims = [f"{name}:{node.lineno}" for name, path in MODULES.items() if name != "evalcore"
             for node in ast.parse(path.read_text()).body
             if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"]
    assert not shims, f"module __getattr__ shims (import the name from its module instead): {shims}"
