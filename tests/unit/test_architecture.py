"""The shape of the code, as docs/architecture.md promises it.

- no function in ``evalcore/`` is longer than :data:`MAX_LINES` lines of code (docstrings,
  comments and blank lines excepted), except those in :data:`LONG_FUNCTIONS` with a reason;
- no module imports another module's private (``_name``) attribute; private *modules* are
  imported only inside their own subpackage;
- only ``evalcore.ui`` imports streamlit;
- pages hold no statistics: no pandas or numpy, no groupby or counting.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "evalcore"
MAX_LINES = 80
#: Functions allowed to be longer, with the reason (also stated in docs/architecture.md).
LONG_FUNCTIONS: dict[str, str] = {}


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
        src = path.read_text()
        lines = src.split("\n")
        tree = ast.parse(src)
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


def _imports(path: Path):
    """(imported module, names) for every import in ``path``, modules resolved to dotted names."""
    mod = _dotted(path)
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


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
    """Issue 23: a file watcher on the checkout (and the .venv inside it) flooded the server log with
    "Inotify queue overflowed"; the shipped config turns the watcher off."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"
