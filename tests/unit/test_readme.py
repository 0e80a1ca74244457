"""The README is a working entry point: its first Python example runs as written, it stays short, and no
relative link in it or in ``docs/`` points at a file (or a heading) that does not exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_LINES = 300

FENCE = re.compile(r"^```.*?^```", re.M | re.S)
# [text](target) and ![alt](target); the text may not span a blank line.
LINK = re.compile(r"!?\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _first_python_block(text: str) -> str:
    m = re.search(r"^```python\n(.*?)^```", text, re.M | re.S)
    assert m, "the README has no ```python block"
    return m.group(1)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def _relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code is not a link
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I)]


def test_the_first_python_example_runs_as_written_and_prints_a_table():
    code = _first_python_block(README.read_text(encoding="utf-8"))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines() if line.strip()]
    # A table: a header and several rows of the same width, of at least three columns.
    widths = [len(r) for r in rows]
    assert len(rows) >= 5 and max(widths) >= 3, done.stdout
    assert any(widths.count(w) >= 4 and w >= 3 for w in set(widths)), done.stdout


def test_the_readme_is_short_and_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES
    quick = re.search(r"^## Quickstart\n(.*?)(?=^## )", text, re.M | re.S)
    assert quick, "the README has no '## Quickstart' section"
    assert "python3 dev.py app" in quick.group(1) and "python3 dev.py test" in quick.group(1)
    # The Quickstart comes before the Python example, which comes before the reference sections.
    assert text.index("## Quickstart") < text.index("```python")


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file_and_heading(path):
    links = _relative_links(path)
    broken = []
    for target in links:
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    assert not broken, f"{path.name}: links to nothing: {broken}"


def test_the_link_check_sees_links_and_catches_a_broken_one(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A `title`\n\nSee [here](page.md#a-title), [gone](missing.md), ![img](pic.png),\n"
                    "[a heading](#no-such-heading) and [web](https://example.org).\n\n```\n[code](x.md)\n```\n")
    assert _relative_links(page) == ["page.md#a-title", "missing.md", "pic.png", "#no-such-heading"]
    assert _anchors(page) == {"a-title"}
    assert len(_relative_links(README)) >= 10  # the README's links are seen, so the check above means something
