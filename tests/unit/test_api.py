"""The notebook API (docs/api.md): tables in, tables out; column names as arguments; one signature pattern.

Every analysis in ``evalcore.__all__`` is called twice on small slices of the sample data: on the canonical
table, and on the same table with every column it names renamed, the new names passed as column arguments.
The two tables must be equal.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.arguments import takes_table
from evalcore.columns import COMPARISONS, RATINGS
from evalcore.data.ingest import load, read
from evalcore.data.validation import validate
from evalcore.errors import DataError
from evalcore.pointwise.agreement.units import Units
from evalcore.pointwise.consistency import variants_from_rater
from evalcore.stats.bootstrap import root_seed
from tests.helpers import SAMPLE, SAMPLE_PAIRS

#: Names in ``evalcore.__all__`` that are not analyses of a table (the last two read a leaderboard, the result of
#: ``system_leaderboard``, as the page does).
NOT_ANALYSES = {"DataError", "Workspace", "load", "load_samples", "read", "read_table", "validate",
                "rank_moves", "ranking_agreement"}

#: Options that keep each call fast (and deterministic where the analysis allows it).
FAST = {
    "agreement": {"by": ["criterion"], "n_boot": 20},
    "class_distribution": {"by": ["criterion"]},
    "confusion_matrix": {"by": ["criterion"]},
    "rater_pair_matrix": {"n_boot": 20},
    "judge_leaderboard": {"n_boot": 20},
    "meta_correlations": {"n_boot": 20},
    "system_means": {"n_boot": 20},
    "bias_report": {"n_boot": 20},
    "familiarity": {"n_boot": 20},
    "perplexity_by_score": {"n_boot": 20},
    "anchoring": {"n_boot": 20},
    "criterion_correlations": {"n_boot": 20},
    "conditional_distribution": {"given": "LA", "target": "OCQ", "threshold": 1, "n_boot": 20},
    "scale_use": {"n_boot": 20},
    "round_number_bias": {"n_boot": 20},
    "self_consistency": {"n_boot": 20},
    "variant_agreement": {"variant_column": "prompt", "n_boot": 20},
    "superficial_correlation": {"judges": ["gpt-4/per-criterion"], "q": "perplexity", "alphas": [0, 0.5],
                                "folds": 2, "n_boot": 20},
    "judge_accuracy": {"n_boot": 20},
    "alt_test": {"n_boot": 20},
    "ppi_budget": {"half_width": 0.1},
    "win_rate_budget": {"half_width": 0.1},
    "ppi_what_if": {"shares": [0.5, 1.0], "repeats": 3},
    "win_rate_what_if": {"shares": [0.5, 1.0], "repeats": 3},
    "ppi_plan": {"m": 10, "by": ["language"]},
    "win_rate_plan": {"m": 10},
    "win_rates": {"method": "bwrs", "prior": "ratio:0.3", "n_samples": 500},
    "estimate_all": {"method": "bwrs", "prior": "ratio:0.3", "n_samples": 500},
    "position_report": {"methods": ["none", "pride"], "n_boot": 20},
    "fit_calibrations": {"methods": ["pride"]},
    "superficial_accuracy": {"q": "superficial", "alphas": [0, 0.5], "folds": 2, "n_boot": 20},
    "length_controlled": {"judges": "gpt-4/pairwise", "q": "superficial", "alpha": 0.5, "lc": False, "n_boot": 20},
}
#: Entry points too slow for this table-by-table check; tested on a tiny table below.
SLOW = {"html_report"}


def _analyses() -> list[str]:
    return sorted(set(evalcore.__all__) - NOT_ANALYSES)


@pytest.fixture(scope="module")
def ratings() -> pd.DataFrame:
    """Two languages of the sample ratings, validated: English and Swahili, 80 items each."""
    raw = pd.read_csv(SAMPLE)
    raw = raw[raw["language"].isin(["English", "Swahili"])]
    items = raw.groupby("language")["item_id"].unique().map(lambda s: list(s[:80])).sum()
    return validate(raw[raw["item_id"].isin(items)].reset_index(drop=True), table=RATINGS).frame


@pytest.fixture(scope="module")
def comparisons() -> pd.DataFrame:
    """Three system pairs of the sample comparisons, validated."""
    raw = pd.read_csv(SAMPLE_PAIRS)
    keep = raw["system_a"].isin(["atlas-7b", "cirrus-70b", "ember-34b"]) & \
        raw["system_b"].isin(["atlas-7b", "cirrus-70b", "ember-34b"])
    return validate(raw[keep].reset_index(drop=True), table=COMPARISONS).frame


def _table_of(fn, ratings, comparisons) -> pd.DataFrame:
    if fn.__name__ == "variant_agreement":
        # Two prompts of one judge; their samples numbered apart, as validation asks of repeated judgments.
        variants = variants_from_rater(ratings)
        single = variants["prompt"].eq("single-call").fillna(False).to_numpy(bool)
        return variants.assign(sample=variants["sample"] + np.where(single, 10, 0))
    return ratings if next(iter(inspect.signature(fn).parameters)) == "ratings" else comparisons


def _renamed(fn, table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """``table`` with every column ``fn`` names renamed, and the column arguments that name them again."""
    args = {arg: f"my_{col}" for arg, col in fn.column_arguments.items() if col in table.columns}
    return table.rename(columns={col: f"my_{col}" for col in fn.column_arguments.values()}), args


def _same(a, b) -> None:
    if isinstance(a, pd.DataFrame):
        drop = [c for c in ("seconds",) if c in a.columns]  # a sampler's wall time
        pd.testing.assert_frame_equal(a.drop(columns=drop), b.drop(columns=drop))
    elif isinstance(a, Units):
        assert a.judges == b.judges and np.array_equal(a.counts, b.counts) and np.array_equal(a.values, b.values)
    elif isinstance(a, list):  # estimate_all's WinRate objects
        assert [dataclasses.replace(r, seconds=0.0) for r in a] == [dataclasses.replace(r, seconds=0.0) for r in b]
    else:
        assert a == b


# --------------------------------------------------------------------------- everything exported


def test_every_name_in_all_imports_from_the_module_that_defines_it():
    for name in evalcore.__all__:
        value = getattr(evalcore, name)
        module = importlib.import_module(evalcore._WHERE[name])
        assert getattr(module, name) is value, name
        assert getattr(value, "__module__", module.__name__) == module.__name__, name


def test_all_covers_every_analysis_the_app_shows():
    shown = {"agreement", "count_units", "class_distribution", "judge_leaderboard", "meta_correlations",
             "system_means", "rater_pair_matrix", "bias_report", "familiarity", "anchoring", "scale_use",
             "round_number_bias", "self_consistency", "variant_agreement", "win_rates", "judge_accuracy",
             "position_report", "fit_calibrations", "superficial_accuracy", "superficial_correlation",
             "length_controlled", "html_report", "validate", "load", "read"}
    assert shown <= set(evalcore.__all__)


def test_import_evalcore_loads_no_analysis():
    import subprocess
    import sys

    # Only the cache folder's setting (a few lines, no dependency) runs at import: numba must see it first.
    code = "import sys, evalcore; print(sorted(m for m in sys.modules if m.startswith(('evalcore.', 'pandas'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['evalcore.cachedir']"


# --------------------------------------------------------------------------- one signature pattern


@pytest.mark.parametrize("name", sorted(set(evalcore.__all__) - {"DataError", "Workspace", "load_samples"}))
def test_every_entry_point_is_keyword_only_after_its_table(name):
    params = list(inspect.signature(getattr(evalcore, name)).parameters.values())
    assert params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in params[1:]), name


@pytest.mark.parametrize("name", _analyses())
def test_every_analysis_has_the_shared_options(name):
    fn = getattr(evalcore, name)
    params = inspect.signature(fn).parameters
    assert list(params)[0] in ("ratings", "comparisons", "table")
    assert fn.column_arguments and set(fn.column_arguments) <= set(params)
    assert all(params[a].default is None for a in fn.column_arguments)
    if "by" in params:
        assert params["by"].default == ()
    if "judges" in params:
        assert params["judges"].default is None
    if "seed" in params:
        assert "Generator" in str(params["seed"].annotation)
    if "level" in params:
        assert params["level"].default == 0.95
    doc = inspect.getdoc(fn)
    for section in ("Parameters", "Returns", "Examples"):
        assert f"\n{section}\n---" in doc, (name, section)


def test_a_column_argument_may_not_shadow_an_option():
    def f(ratings, *, score=None):
        return ratings

    with pytest.raises(TypeError, match="score"):
        takes_table(RATINGS)(f)


# --------------------------------------------------------------------------- column names as arguments


@pytest.mark.parametrize("name", sorted(set(_analyses()) - SLOW))
def test_a_table_with_other_column_names_gives_the_same_table(name, ratings, comparisons):
    fn = getattr(evalcore, name)
    table = _table_of(fn, ratings, comparisons)
    mine, args = _renamed(fn, table)
    assert args and set(mine.columns) != set(table.columns)
    opts = FAST.get(name, {})
    _same(fn(table, **opts), fn(mine, **args, **opts))


def test_the_html_report_of_a_table_with_other_column_names(tmp_path):
    mine = pd.DataFrame({"doc": [1, 1, 1, 2, 2, 2, 3, 3, 3], "who": ["h1", "h2", "gpt"] * 3,
                         "role": ["human", "human", "judge"] * 3, "grade": [1, 1, 2, 2, 2, 2, 3, 2, 3]})
    page = evalcore.html_report(mine, item="doc", rater="who", kind="role", score="grade", path=tmp_path / "r.html",
                                n_boot=0, name="mine")
    assert page.startswith("<!DOCTYPE html>") and "evalcore report: mine" in page
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == page


def test_a_name_that_is_not_a_column_says_which_columns_there_are(ratings):
    with pytest.raises(DataError) as err:
        evalcore.scale_use(ratings, score="rating", n_boot=0)
    assert "'rating'" in str(err.value) and "item_id, rater, rater_kind, criterion, score" in str(err.value)
    with pytest.raises(DataError, match="named by both"):
        evalcore.scale_use(ratings.rename(columns={"rater": "who"}), rater="who", kind="who", n_boot=0)


def test_a_renamed_table_is_validated(ratings):
    bad = ratings.rename(columns={"rater_kind": "role"}).assign(role="robot")
    with pytest.raises(DataError, match="rater_kind"):
        evalcore.scale_use(bad, kind="role", n_boot=0)


def test_column_arguments_name_the_columns_of_a_table_not_of_units(ratings):
    units = evalcore.count_units(ratings)
    with pytest.raises(DataError, match="pass the table itself"):
        evalcore.agreement(units, item="item_id")


# --------------------------------------------------------------------------- read


@pytest.mark.parametrize("table", [RATINGS, COMPARISONS])
def test_read_returns_the_frame_load_returns(table, ratings, comparisons, tmp_path):
    path = tmp_path / f"{table}.csv"
    (ratings if table == RATINGS else comparisons).to_csv(path, index=False)
    frame = read(path)
    assert isinstance(frame, pd.DataFrame)
    pd.testing.assert_frame_equal(frame, load(path).frame)
    assert load(path).table == table


# --------------------------------------------------------------------------- seeds


SEEDED = ["agreement", "scale_use", "judge_leaderboard", "judge_accuracy", "win_rates",
          "position_report", "superficial_accuracy", "length_controlled"]


@pytest.mark.parametrize("name", SEEDED)
def test_an_int_seed_and_a_generator_seed_give_reproducible_tables(name, ratings, comparisons):
    fn = getattr(evalcore, name)
    table = _table_of(fn, ratings, comparisons)
    opts = FAST[name]
    _same(fn(table, **opts, seed=3), fn(table, **opts, seed=3))
    by_generator = fn(table, **opts, seed=np.random.default_rng(7))
    _same(by_generator, fn(table, **opts, seed=np.random.default_rng(7)))
    # A Generator seeds the analysis with one integer drawn from it.
    _same(by_generator, fn(table, **opts, seed=root_seed(np.random.default_rng(7))))


def test_a_seed_that_is_not_a_whole_number_is_refused(ratings):
    with pytest.raises(DataError, match="seed"):
        evalcore.scale_use(ratings, n_boot=10, seed=1.5)
