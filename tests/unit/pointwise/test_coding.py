"""The one preparation of the bias analyses (evalcore.pointwise.coding) and the cells of scale and
self-consistency (evalcore.pointwise.cells), against pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import DataError
from evalcore.pointwise.cells import cell_items, cell_ratings
from evalcore.pointwise.coding import code_ratings


def _table(seed: int = 0, n_items: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        lang = [None, "en", "de"][i % 3]
        for crit in ("a", "b"):
            for h in range(2):
                for s in range(1 + (i % 2)):  # humans with repeats on odd items
                    rows.append((f"i{i}", f"h{h}", "human", crit, int(rng.integers(1, 6)), s, lang))
            for j in ("J1", "J2"):
                for s in range(3):
                    rows.append((f"i{i}", j, "judge", crit, int(rng.integers(1, 6)), s, lang))
    df = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "score", "sample", "language"])
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # rows in no particular order


@pytest.mark.parametrize("policy", ["every rater", "humans"])
def test_first_samples_are_kept_as_pandas_would(policy):
    df = _table()
    coded = code_ratings(df, by=["language"], first_sample=policy)
    first = df.groupby(["item_id", "criterion", "rater"])["sample"].transform("min")
    keep = (df["sample"] == first) | ((df["rater_kind"] == "judge") & (policy == "humans"))
    assert coded.row.tolist() == np.flatnonzero(keep.to_numpy()).tolist()
    kept = df[keep]
    assert (coded.item_ids[coded.item] == kept["item_id"].to_numpy()).all()
    assert (coded.raters[coded.rater] == kept["rater"].to_numpy()).all()
    assert (coded.criterion_names() == kept["criterion"].to_numpy()).all()
    assert (coded.score == kept["score"].to_numpy()).all() and (coded.sample == kept["sample"].to_numpy()).all()
    assert coded.judges == ("J1", "J2") and (coded.source[coded.human] == 0).all()
    # Groups per item: pandas' sorted groups, missing values last.
    assert coded.keys[:2] == [("de",), ("en",)] and len(coded.keys) == 3 and pd.isna(coded.keys[2][0])
    lang = kept.groupby("item_id")["language"].first().reindex(coded.item_ids)
    for g, (value,) in enumerate(coded.keys):
        members = lang[coded.group == g]
        assert members.isna().all() if pd.isna(value) else (members == value).all()


def test_judges_are_chosen_and_others_marked():
    coded = code_ratings(_table(), judges="J2")
    assert coded.judges == ("J2",)
    assert set(coded.source[coded.raters[coded.rater] == "J1"]) == {-1}
    assert set(coded.source[coded.raters[coded.rater] == "J2"]) == {1}
    with pytest.raises(DataError, match="no judge named 'J3'"):
        code_ratings(_table(), judges=["J3"])


def test_scores_missing_are_left_out_and_not_numbers_refused():
    df = _table().astype({"score": object})
    full = code_ratings(df, first_sample="humans").row.tolist()
    df.loc[0, "score"] = None
    assert code_ratings(df, first_sample="humans").row.tolist() == [r for r in full if r != 0]
    df.loc[1, "score"] = "good"
    with pytest.raises(DataError, match="not a number"):
        code_ratings(df)


def test_user_errors():
    df = _table()
    with pytest.raises(DataError, match="cannot group by 'country': the table has no such column"):
        code_ratings(df, by=["country"])
    with pytest.raises(DataError, match="not a segment"):
        code_ratings(df, by=["rater"])
    with pytest.raises(DataError, match="cannot be split by criterion"):
        code_ratings(df, by=["criterion"], criterion_in_by="error")
    assert code_ratings(df, by=["criterion", "language", "language"]).by == ["language"]
    with pytest.raises(DataError, match="different values within one item"):
        code_ratings(df.assign(language=np.arange(len(df)) % 2), by=["language"])
    with pytest.raises(DataError, match="rater_kind"):
        code_ratings(df.assign(rater_kind="robot"))
    with pytest.raises(DataError, match="lacks the column 'score'"):
        code_ratings(df.drop(columns="score"))
    loose = code_ratings(df.assign(rater_kind=df["rater_kind"].str.upper() + " "))  # spelled loosely
    assert (loose.human == code_ratings(df).human).all() and loose.human.any()


def test_cells_are_pandas_groups_of_the_kept_rows():
    df = _table(3)
    prep = cell_ratings(df, by=["language"], judges=["J1"])
    first = df.groupby(["item_id", "criterion", "rater"])["sample"].transform("min")
    kept = df[((df["rater_kind"] == "judge") | (df["sample"] == first)) & (df["rater"] != "J2")]
    groups = kept.groupby(["criterion", "language"], sort=True, dropna=False)
    assert len(prep.keys) == groups.ngroups
    for c, (key, sub) in enumerate(groups):
        assert prep.keys[c][0] == key[0] and (prep.keys[c][1] == key[1] or pd.isna(key[1]))
        assert sorted(prep.row[prep.rows(c)].tolist()) == sorted(df.index.get_indexer(sub.index).tolist())
        loc, n = cell_items(prep, prep.rows(c))
        assert n == sub["item_id"].nunique() and loc.max() == n - 1
    assert prep.scale == {"a": (1.0, 5.0), "b": (1.0, 5.0)}
    assert cell_ratings(df, by=[], judges=None, scale={"a": (0, 10)}).scale["a"] == (0.0, 10.0)
    with pytest.raises(DataError, match="outside the scale"):
        cell_ratings(df, by=[], judges=None, scale={"a": (2, 4)})
