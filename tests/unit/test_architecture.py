"""The shape of the code, as docs/architecture.md promises it.

- no function in ``evalcore/`` is longer than :data:`MAX_LINES` lines of code (docstrings,
  comments and blank lines excepted), except those in :data:`LONG_FUNCTIONS` with a reason;
- no module imports another module's private (``_name``) attribute; private *modules* are
  imported only inside their own subpackage;
- only ``evalcore.ui`` imports streamlit;
- pages hold no statistics: no pandas or numpy, no groupby or counting;
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
import functools
import re
from collections import defaultdict
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "evalcore"
MAX_LINES = 80
#: Functions allowed to be longer, with the reason (also stated in docs/architecture.md).
LONG_FUNCTIONS: dict[str, str] = {}


@functools.cache
def _parsed(path: Path) -> tuple[str, ast.Module]:
    """The file's text and syntax tree, read and parsed once per session: every rule walks the same files."""
    text = path.read_text()
    return text, ast.parse(text, filename=str(path))


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _code_lines(node: ast.AST, source_lines: list[str]) -> int:
    """Lines of code of a function: without its docstring, blank lines and comment-only lines."""
    skip: set[int] = set()
    body = getattr(node, "body", [])
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        skip.update(range(body[0].lineno, body[0].end_lineno + 1))
    count = 0
    for ln in range(node.lineno, node.end_lineno + 1):
        text = source_lines[ln - 1].strip()
        if ln in skip or not text or text.startswith("#"):
            continue
        count += 1
    return count


def _functions():
    for path in _modules():
        src, tree = _parsed(path)
        lines = src.split("\n")
        stack = [(tree, _dotted(path))]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = f"{prefix}.{child.name}"
                    if not isinstance(child, ast.ClassDef):
                        yield name, _code_lines(child, lines)
                    stack.append((child, name))


def test_no_function_is_longer_than_80_lines_of_code():
    long = {name: n for name, n in _functions() if n > MAX_LINES and name not in LONG_FUNCTIONS}
    assert not long, "functions over %d lines of code: %s" % (MAX_LINES, ", ".join(
        f"{k} ({v})" for k, v in sorted(long.items(), key=lambda kv: -kv[1])))


def test_long_functions_allowlist_is_current():
    present = dict(_functions())
    stale = [k for k in LONG_FUNCTIONS if present.get(k, 0) <= MAX_LINES]
    assert not stale, f"no longer long (remove them from LONG_FUNCTIONS and docs/architecture.md): {stale}"


@functools.cache
def _imports(path: Path) -> tuple[tuple[str, list[str]], ...]:
    """(imported module, names) for every import in ``path``, modules resolved to dotted names (found once per
    session)."""
    mod = _dotted(path)
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(_parsed(path)[1]):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((target, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
    return tuple(found)


def _subpackage(dotted: str) -> str:
    parts = dotted.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else parts[0]


def _is_module(dotted: str) -> bool:
    p = ROOT.joinpath(*dotted.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def test_no_import_of_another_modules_private_names():
    bad = []
    for path in _modules():
        here = _dotted(path)
        for target, names in _imports(path):
            if not target.startswith("evalcore"):
                continue
            for name in names:
                if not name.startswith("_"):
                    continue
                full = f"{target}.{name}"
                if _is_module(full):  # a private module: only from inside its subpackage
                    if _subpackage(full) != _subpackage(here):
                        bad.append(f"{here} imports private module {full}")
                else:
                    bad.append(f"{here} imports {target}.{name}")
            leaf = target.rsplit(".", 1)[-1]
            if leaf.startswith("_") and _subpackage(target) != _subpackage(here):
                bad.append(f"{here} imports from private module {target}")
    assert not bad, "\n".join(bad)


def test_only_the_ui_imports_streamlit():
    offenders = [str(p.relative_to(ROOT)) for p in _modules()
                 if "ui" not in p.relative_to(PACKAGE).parts[:1]
                 and any(t.split(".")[0] == "streamlit" for t, _ in _imports(p))]
    assert not offenders, offenders


_STATISTICS = re.compile(r"\b(import (numpy|pandas)|from (numpy|pandas)|groupby|value_counts|\.unique\(|\.mean\(|"
                         r"\.sum\(|\.loc\[|np\.|pd\.)")


@pytest.mark.parametrize("page", sorted([*(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"]), ids=lambda p: p.name)
def test_pages_hold_no_statistics(page):
    hits = [f"{page.name}:{i}: {line.strip()}" for i, line in enumerate(page.read_text().split("\n"), 1)
            if _STATISTICS.search(line) and not line.strip().startswith("#")]
    assert not hits, "\n".join(hits)


def test_streamlit_watches_no_files():
    """A file watcher on the checkout (and the .venv inside it) floods the server log with
    "Inotify queue overflowed"; the shipped config turns the watcher off."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"


# -- imports: no cycles, one path per name, no shims --------------------------------------------------
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
    out.append(ROOT / "app.py")
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


@functools.cache
def _import_lines(path: Path) -> tuple[tuple[str, list[str] | None, int], ...]:
    """(module, [names] or None, line) for every import in the file, at any depth (found once per session)."""
    found = []
    for node in ast.walk(_parsed(path)[1]):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            if module:
                found.append((module, [a.name for a in node.names], node.lineno))
    return tuple(found)


def _graph() -> dict[str, set[str]]:
    """evalcore module -> the evalcore modules it imports (a name that is a submodule counts as that module)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in MODULES.items():
        for module, names, _ in _import_lines(path):
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
    names: set[str] = set()
    pending = list(_parsed(path)[1].body)
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
        for module, names, line in _import_lines(path):
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
             for node in _parsed(path)[1].body
             if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"]
    assert not shims, f"module __getattr__ shims (import the name from its module instead): {shims}"
