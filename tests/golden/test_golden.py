"""Golden outputs: every CLI command's JSON on the sample and the real datasets, pinned.

Recorded by ``tests/golden/cases.py`` before the code moved. A refactor must leave
them identical; a deliberate change re-records the affected file and names the change and its
reason in the commit message.
"""

from __future__ import annotations

import json
import math

import pytest

from .cases import CASES, DATASETS, HERE, run

#: Float tolerances: the last digits a new library version may move, nothing a method change could hide in.
REL_TOL = 1e-12
ABS_TOL = 1e-14


def _diff(a, b, path: str = "") -> str | None:
    """The first place where two JSON values differ.

    Floats are compared with ``math.isclose(rel_tol=1e-12, abs_tol=1e-14)`` (NaN equals NaN): a fresh
    machine resolves newer numpy/scipy/pandas whose summation order moves the last digit; anything
    larger is a real change. Everything else (ints, strings, booleans, keys, lengths) is exact.
    """
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
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return None
        return None if math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL) else f"{path}: {a!r}, golden {b!r}"
    return None if (a == b and type(a) is type(b)) else f"{path}: {a!r}, golden {b!r}"


#: The cases on the real datasets are marked slow (``dev.py test --fast`` leaves them out): HANNA's agreement
#: alone takes 15 s; the sample's cases stay in the fast run.
_PARAMS = [pytest.param(name, marks=pytest.mark.slow) if CASES[name][0] else name for name in sorted(CASES)]


@pytest.mark.parametrize("name", _PARAMS)
def test_cli_json_matches_golden(name):
    needs, argv = CASES[name]
    if needs and not DATASETS.exists():
        pytest.skip(f"{DATASETS} not found: the real-data golden outputs need ../shared/datasets")
    golden = json.loads((HERE / f"{name}.json").read_text())
    got = json.loads(json.dumps(run(argv), sort_keys=True))  # the same JSON round trip as the recording
    d = _diff(got, golden)
    assert d is None, f"{name} differs from its golden output at {d}"


@pytest.mark.parametrize(("got", "golden", "same"), [
    (0.28786626530357173, 0.2878662653035719, True),   # the last-digit change seen on a fresh clone
    (0.2878662653, 0.2878662654, False),                # a real change
    (1e-15, 0.0, True),
    (1, 1.0, False),                                    # an int where a float was recorded is a change
    (float("nan"), float("nan"), True),
    ({"a": [1.0, "x"]}, {"a": [1.0 + 1e-13, "x"]}, True),
    ({"a": [1.0, "x"]}, {"a": [1.0, "y"]}, False),
])
def test_diff_tolerates_only_the_last_digits(got, golden, same):
    assert (_diff(got, golden) is None) is same
