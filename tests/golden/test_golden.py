"""Golden outputs: every CLI command's JSON on the sample and the real datasets, pinned.

Recorded by ``tests/golden/cases.py`` before the code moved (issue 11). A refactor must leave
them identical; a deliberate change re-records the affected file and names the change and its
reason in the commit message.
"""

from __future__ import annotations

import json
import math

import pytest

from .cases import CASES, DATASETS, HERE, run


def _diff(a, b, path: str = "") -> str | None:
    """The first place where two JSON values differ (floats compared exactly; NaN equals NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(a.keys() ^ b.keys())} differ"
        for k in a:
            d = _diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries, golden {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    return None if (a == b and type(a) is type(b)) else f"{path}: {a!r}, golden {b!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_json_matches_golden(name):
    needs, argv = CASES[name]
    if needs and not DATASETS.exists():
        pytest.skip(f"{DATASETS} not found: the real-data golden outputs need ../shared/datasets")
    golden = json.loads((HERE / f"{name}.json").read_text())
    got = json.loads(json.dumps(run(argv), sort_keys=True))  # the same JSON round trip as the recording
    d = _diff(got, golden)
    assert d is None, f"{name} differs from its golden output at {d}"
