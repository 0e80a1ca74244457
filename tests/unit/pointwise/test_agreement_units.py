"""`agreement.units.count_units` against a plain pandas reference, over the file layouts its fast paths depend on.

On large tables count_units hashes only the rows that differ from an earlier row (a file sorted by
item, raters in the same order in every unit) and counts in compiled passes; on small ones it
uses numpy. These tests run both ways and check that the result does not depend on the layout:
sorted, periodic, shuffled, several Arrow chunks, object columns, missing values.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import DataError
from evalcore.data import hashing as H
from evalcore.pointwise.agreement import passes as P, table as T, units as U

CRITERIA = ("OCQ", "H", "LA", "TQ", "PC", "F")


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def passes(request, monkeypatch):
    """Run every test with numba's passes (and the repeat detection) and with numpy's.

    A test that sets the passes itself, or runs in another process, names one value instead
    (``@pytest.mark.parametrize("passes", [...])`` replaces this fixture): running it twice would test the
    same thing twice."""
    monkeypatch.setattr(P, "COMPILED_FROM", 0 if request.param == "compiled" else 10**12)
    monkeypatch.setattr(P, "LOAD_FROM", 0)  # a process that has not loaded numba loads it for the compiled run
    return request.param


def _ratings(seed: int, *, n_items: int = 300, langs=("en", "hi", "sw", None)) -> pd.DataFrame:
    """1-3 humans and two judges per unit, three criteria, a per-item language (sometimes missing)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        lang = langs[rng.integers(0, len(langs))]
        task = ["qa", "summ"][i % 2]
        for c in CRITERIA:
            raters = [("a1", "human"), ("a2", "human"), ("a3", "human")][: rng.integers(1, 4)]
            raters += [("gpt-4", "judge"), ("llama", "judge")]
            for r, kind in raters:
                if kind == "judge" and rng.random() < 0.1:
                    continue  # a judge that skipped this unit
                rows.append((f"it{i:04d}", c, r, kind, int(rng.choice([0, 1, 2, 5])), lang, task))
    df = pd.DataFrame(rows, columns=["item_id", "criterion", "rater", "rater_kind", "score", "language", "task"])
    df["language"] = df["language"].astype("str")
    return df


def _reference(df: pd.DataFrame) -> dict:
    """Per (item, criterion): human counts per score value, each judge's score, language and task (of the
    unit's first row), counted row by row in plain Python (a pandas group loop took 4 s)."""
    values = {v: k for k, v in enumerate(sorted(df["score"].unique()))}
    cols = ["item_id", "criterion", "rater", "rater_kind", "score", "language", "task"]
    units: dict = {}
    for item, crit, rater, kind, score, lang, task in df[cols].itertuples(index=False):
        counts, judges, first = units.setdefault((item, crit), ([0] * len(values), [], (lang, task)))
        if kind == "human":
            counts[values[score]] += 1
        elif kind == "judge":
            judges.append((rater, float(score)))
    return {key: (tuple(counts), tuple(sorted(judges)), None if pd.isna(lang) else lang, task)
            for key, (counts, judges, (lang, task)) in units.items()}


@functools.lru_cache(maxsize=None)
def _reference_of(seed: int) -> dict:
    """:func:`_reference` of ``_ratings(seed)``, computed once: every layout holds the same rows."""
    return _reference(_ratings(seed))


def _from_units(units: U.Units, df: pd.DataFrame) -> dict:
    items = pd.unique(df["item_id"])
    crits = units.codes["criterion"][1]
    # plain lists: a pandas lookup per unit took most of the time of each test
    langs, tasks = units.segments["language"].tolist(), units.segments["task"].tolist()
    item, crit, counts, codes = units.item.tolist(), units.codes["criterion"][0].tolist(), units.counts.tolist(), \
        units.judge_codes.T.tolist()
    values = units.values.tolist()
    out = {}
    for u in range(len(item)):
        judges = tuple(sorted((name, float(values[c])) for name, c in zip(units.judges, codes[u]) if c >= 0))
        lang = langs[u]
        out[(items[item[u]], crits[crit[u]])] = (
            tuple(int(c) for c in counts[u]), judges, None if pd.isna(lang) else lang, tasks[u])
    return out


@functools.lru_cache(maxsize=None)
def _layouts_of(seed: int) -> dict[str, pd.DataFrame]:
    """:func:`_layouts` of ``_ratings(seed)``, made once: the tests only read them."""
    return _layouts(_ratings(seed))


def _layouts(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    half = len(df) // 2
    chunked = pd.concat([df.iloc[:half], df.iloc[half:]], ignore_index=True)  # two Arrow chunks per column
    return {
        "sorted by item": df,
        "sorted by rater": df.sort_values(["rater", "item_id"], kind="stable", ignore_index=True),
        "shuffled": df.sample(frac=1, random_state=1, ignore_index=True),
        "two chunks": chunked,
        "object columns": df.astype({c: object for c in ("item_id", "criterion", "rater", "rater_kind", "language",
                                                          "task")}),
        "an item in two places": pd.concat([df.iloc[5:], df.iloc[:5]], ignore_index=True),
        "float scores": df.assign(score=df["score"].astype(float)),
        "random blocks": pd.concat([df.iloc[i:i + 97] for i in rng.permutation(np.arange(0, len(df), 97))],
                                   ignore_index=True),
    }


# Which fast path each layout must take: the lag at which item_id repeats, and whether the
# per-item language is checked by comparing neighbours (so that the equality below tests it).
PATHS = {"sorted by item": 1, "sorted by rater": 0, "shuffled": 0, "two chunks": 1, "object columns": None,
         "an item in two places": 1, "float scores": 1, "random blocks": 1}


@pytest.mark.parametrize("layout", list(PATHS))
def test_prepare_matches_pandas_groupby_in_every_layout(layout, monkeypatch, passes):
    df = _layouts_of(0)[layout]
    if layout == "two chunks":
        assert df["item_id"].array._pa_array.num_chunks == 2
    lags, compared = [], []
    best_lag, segment = U.best_lag, U._segment
    monkeypatch.setattr(U, "best_lag", lambda arr, **kw: lags.append(best_lag(arr, **kw)) or lags[-1])
    monkeypatch.setattr(U, "_segment", lambda df, s, items, bits, known=None: compared.append(bits is not None)
                        or segment(df, s, items, bits, known))
    units = U.count_units(df)
    if PATHS[layout] is None or passes == "numpy":
        assert lags == [] and compared == [False, False]
    else:
        assert lags[0] == PATHS[layout]
        assert compared == [PATHS[layout] == 1] * 2
    assert _from_units(units, df) == _reference_of(0)
    assert list(units.values) == [0.0, 1.0, 2.0, 5.0]
    assert units.judges == ("gpt-4", "llama")
    assert units.scale == {c: int(df.loc[(df["criterion"] == c) & (df["rater_kind"] == "human"), "score"].nunique())
                           for c in CRITERIA}
    # Units come in order of the items' (then the criteria's) first appearance, as before.
    order = units.item * 10 + units.codes["criterion"][0]
    assert np.all(np.diff(order) > 0)
    # The segments keep the ratings' dtypes.
    for c in ("criterion", "language", "task"):
        assert units.segments[c].dtype == df[c].dtype


@pytest.mark.parametrize("layout", list(PATHS))
def test_columns_validation_factorised_give_the_same_units(layout):
    """The CLI counts inside the block where validation factorised the columns (evalcore.data.codes):
    count_units takes those codes instead of hashing again, where they are its own, and the units
    are the same as counted from scratch."""
    from evalcore.data import codes, validation

    df = _layouts_of(0)[layout]
    with codes.shared_codes():
        frame = validation.validate(df, table="ratings").frame
        taken = {c: H.known_codes(frame[c]) is not None for c in ("item_id", "criterion", "rater", "language")}
        inside = U.count_units(frame)
    fresh = U.count_units(frame)  # the block is closed: every column hashed
    if layout == "sorted by item":  # a language is missing on some items: that column is hashed again
        assert taken == {"item_id": True, "criterion": True, "rater": True, "language": False}
    assert inside.values.tolist() == fresh.values.tolist() and inside.judges == fresh.judges
    for a in ("counts", "judge_codes", "item"):
        np.testing.assert_array_equal(getattr(inside, a), getattr(fresh, a))
    assert inside.scale == fresh.scale and inside.codes.keys() == fresh.codes.keys()
    for c in inside.codes:
        np.testing.assert_array_equal(inside.codes[c][0], fresh.codes[c][0])
        assert inside.codes[c][1] == fresh.codes[c][1]
    pd.testing.assert_frame_equal(inside.segments, fresh.segments)
    assert _from_units(inside, frame) == _reference_of(0)


@pytest.mark.parametrize("passes", ["none: the codes are validation's"])
def test_codes_in_another_order_are_not_taken():
    """Codes carried over a reordering (validation's canonical layout) do not number the values in order of
    first appearance: count_units hashes such a column itself."""
    from evalcore.data import codes

    s = pd.Series(pd.array(["b", "a", "b", "c"], dtype=pd.StringDtype("pyarrow", na_value=np.nan)))
    with codes.shared_codes():
        codes.remember(s, np.array([1, 0, 1, 2], dtype=np.int32), pd.Index(["a", "b", "c"]))
        assert H.known_codes(s) is None
        codes.remember(s, np.array([0, 1, 0, 2], dtype=np.int32), pd.Index(["b", "a", "c"]))
        got = H.known_codes(s)
        assert got is not None and got[0].tolist() == [0, 1, 0, 2] and got[1].to_pylist() == ["b", "a", "c"]
    assert H.known_codes(s) is None  # outside the block nothing is known


@pytest.mark.parametrize("case", ["runs", "period 7", "shuffled", "nulls in runs", "nulls scattered", "all null",
                                  "one value", "one row", "two rows", "three chunks", "long strings"])
def test_codes_match_pandas_factorize(case):
    rng = np.random.default_rng(3)
    words = np.array([f"w{k}" for k in range(50)], dtype=object)
    make = {
        "runs": lambda: np.repeat(words[rng.integers(0, 50, 400)], rng.integers(1, 30, 400)),
        "period 7": lambda: np.tile(words[:7], 3000),
        "shuffled": lambda: words[rng.integers(0, 50, 20_000)],
        "nulls in runs": lambda: np.repeat(np.append(words[:20], [None] * 5)[rng.integers(0, 25, 400)], 9),
        "nulls scattered": lambda: np.where(rng.random(20_000) < 0.2, None, words[rng.integers(0, 3, 20_000)]),
        "all null": lambda: np.array([None] * 1000, dtype=object),
        "one value": lambda: np.array(["x"] * 5000, dtype=object),
        "one row": lambda: np.array(["x"], dtype=object),
        "two rows": lambda: np.array(["x", None], dtype=object),
        "three chunks": lambda: np.tile(words[:4], 6000),
        "long strings": lambda: np.repeat(np.array([("item-" * 9) + str(k) for k in range(300)], dtype=object), 13),
    }
    s = pd.Series(make[case](), dtype="str")
    if case == "three chunks":
        s = pd.concat([s.iloc[:7000], s.iloc[7000:15000], s.iloc[15000:]], ignore_index=True)
        assert s.array._pa_array.num_chunks == 3
    codes, uniques = U._codes(s)
    want_codes, want_uniques = pd.factorize(s, use_na_sentinel=False)
    np.testing.assert_array_equal(codes, want_codes)
    got = H.distinct(uniques)
    want = tuple(np.nan if pd.isna(v) else v for v in want_uniques)
    assert len(got) == len(want) and all((pd.isna(a) and pd.isna(b)) or a == b for a, b in zip(got, want))


@pytest.mark.parametrize("layout", ["sorted", "shuffled"])
def test_a_segment_that_changes_within_an_item_is_refused(layout):
    df = _ratings(1, n_items=40)
    bad = df.copy()
    rows = np.flatnonzero(bad["item_id"] == "it0007")
    bad.loc[rows[-1], "language"] = "fr"  # the last rating of one item says another language
    if layout == "shuffled":
        bad = bad.sample(frac=1, random_state=2, ignore_index=True)
    with pytest.raises(DataError, match=r"column 'language' has different values within one item \('it0007'\)"):
        U.count_units(bad, segments=["language"])  # a named segment is checked per item
    # A missing value within an otherwise labelled item is a difference too.
    gap = df.copy()
    labelled = gap.index[gap["language"].notna()]
    item = gap.loc[labelled[0], "item_id"]
    gap.loc[np.flatnonzero(gap["item_id"] == item)[1], "language"] = None
    with pytest.raises(DataError, match=f"'{item}'"):
        U.count_units(gap, segments=["language"])


def test_an_item_sorted_in_two_places_must_agree_with_itself():
    df = _ratings(2, n_items=40)
    first = df[df["item_id"] == "it0003"]
    moved = pd.concat([df[df["item_id"] != "it0003"], first.assign(language="zz")], ignore_index=True)
    split = pd.concat([first.iloc[:2], moved], ignore_index=True)  # it0003 starts with its own language, ends with zz
    with pytest.raises(DataError, match="'it0003'"):
        U.count_units(split, segments=["language"])


@pytest.mark.parametrize("scores, values", [
    ([3, 1, 7, 1, 3], [1, 3, 7]),
    ([-2, 0, 5, -2], [-2, 0, 5]),
    ([0.5, 1.0, 0.5, 2.5], [0.5, 1.0, 2.5]),
    ([0, 10**6, 3], [0, 3, 10**6]),
    ([1.0, 2.0, 4.0], [1, 2, 4]),
])
def test_scale_maps_scores_to_sorted_categories(scores, values):
    x, lo, table, got = U._scale(pd.Series(scores))
    np.testing.assert_array_equal(got, np.asarray(values, dtype=float))
    cats = table[np.asarray(x) - lo]
    np.testing.assert_array_equal(got[cats], np.asarray(scores, dtype=float))


@pytest.mark.parametrize("passes", ["both, set by the test"])
def test_the_table_is_the_same_with_either_passes(monkeypatch):
    """numba's and numpy's passes give the same table, intervals included (the resampling is seeded)."""
    df = _ratings(5)
    out = {}
    for mode, threshold in (("compiled", 0), ("numpy", 10**12)):
        monkeypatch.setattr(P, "COMPILED_FROM", threshold)
        monkeypatch.setattr(P, "LOAD_FROM", 0)
        out[mode] = T.agreement(df, by=["language", "criterion"], n_boot=30, seed=2)
    assert len(out["numpy"]) > 500
    pd.testing.assert_frame_equal(out["compiled"], out["numpy"])


@pytest.mark.parametrize("passes", ["those of a fresh process"])
def test_a_one_shot_process_loads_numba_only_where_it_pays(monkeypatch):
    """A long-lived process (the app, a notebook) loads the compiled passes from COMPILED_FROM rows on; a
    one-shot process (the CLI) counts with numpy below ONE_SHOT_LOAD_FROM rows, since loading numba would cost
    more than it saves there, and uses the passes anyway once they are loaded."""
    import subprocess
    import sys

    code = ("import sys; from evalcore.pointwise.agreement import passes as P; "
            "print(P.compiled(1_000_000), P.compiled(100)); P.one_shot(); "
            "print(P.compiled(1_000_000), P.compiled(P.ONE_SHOT_LOAD_FROM), 'numba' in sys.modules); "
            "P.kernel(); print(P.compiled(1_000_000), P.compiled(100))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False", "False", "True", "False", "True", "False"]
