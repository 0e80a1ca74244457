"""Odd values in the analyses, on files generated here from the bundled sample.

Defect 1: a per-row column (a timing, an annotation round, a free-text comment) is no segment; it must
not stop an analysis that does not group by it, and grouping by it must say what is wrong, naming an item.

Defect 5: one score far outside the scale must not make ``bias`` or ``report`` hang, run out of memory or
crash; the analyses say which score it is, and their cost does not depend on the range of the scores.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.errors import DataError
from tests.helpers import SAMPLE

#: The per-row columns of defect 1, each with different values within one item.
EXTRAS = ("duration_ms", "annotation_round", "comment")


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    """Three languages of the bundled sample (every criterion, judge and layout of it; fewer rows)."""
    df = pd.read_csv(SAMPLE)
    return df[df["language"].isin(["English", "Hindi", "Swahili"])].reset_index(drop=True)


def _with_extras(df: pd.DataFrame) -> pd.DataFrame:
    rng = np.random.default_rng(24)
    n = len(df)
    return df.assign(duration_ms=rng.integers(200, 90_000, n), annotation_round=rng.integers(1, 4, n),
                     comment=np.where(rng.random(n) < 0.3, "looks fine, one typo", ""))


@pytest.fixture(scope="module")
def files(sample, tmp_path_factory) -> dict[str, str]:
    """The sample as CSV, plain and with the per-row columns."""
    folder = tmp_path_factory.mktemp("odd_values")
    out = {}
    for name, frame in (("plain", sample), ("extras", _with_extras(sample))):
        out[name] = str(folder / f"{name}.csv")
        frame.to_csv(out[name], index=False)
    return out


# --------------------------------------------------------------------------- defect 1: the library


def test_count_units_leaves_per_row_columns_out_and_grouping_by_one_names_the_item(sample):
    from evalcore.pointwise.agreement.filter import filter_units
    from evalcore.pointwise.agreement.table import agreement
    from evalcore.pointwise.agreement.units import count_units
    from evalcore.pointwise.distributions import class_distribution

    extras = _with_extras(sample)
    units = count_units(extras)
    assert units.columns == ["criterion", "language", "task"]
    first_item = sample["item_id"].iloc[0]
    assert dict(units.varying) == {c: first_item for c in EXTRAS}
    plain = agreement(sample, by=["language"], n_boot=20, seed=1)
    pd.testing.assert_frame_equal(agreement(extras, by=["language"], n_boot=20, seed=1), plain)
    pd.testing.assert_frame_equal(agreement(units, by=["language"], n_boot=20, seed=1), plain)
    for col in EXTRAS:
        want = rf"column '{col}' has different values within one item \('{first_item}'\)"
        with pytest.raises(DataError, match=want) as err:
            agreement(units, by=["language", col], n_boot=0)
        assert err.value.fix == f"'{col}' must describe the item; group by another column"
        with pytest.raises(DataError, match=want):
            class_distribution(units, by=[col])
        with pytest.raises(DataError, match=want):
            filter_units(units, min_raters=2).unit_filter.summary([col])
    # Named segments are checked as before: a column the caller asks for must describe the item.
    with pytest.raises(DataError, match="column 'duration_ms' has different values within one item"):
        count_units(extras, segments=["language", "duration_ms"])


def test_bias_and_meta_group_only_by_what_they_are_asked(sample):
    from evalcore.pointwise.bias_report import bias_report
    from evalcore.pointwise.meta import meta_correlations

    extras = _with_extras(sample)
    pd.testing.assert_frame_equal(bias_report(extras, by=["language"], n_boot=0),
                                  bias_report(sample, by=["language"], n_boot=0))
    systems = {"system": sample["item_id"].str.len() % 3}
    pd.testing.assert_frame_equal(meta_correlations(extras.assign(**systems), by=["language"], n_boot=0),
                                  meta_correlations(sample.assign(**systems), by=["language"], n_boot=0))
    with pytest.raises(DataError, match="column 'annotation_round' has different values within one item"):
        bias_report(extras, by=["annotation_round"], n_boot=0)


def test_engine_counts_leave_per_row_columns_out(sample, tmp_path):
    pytest.importorskip("duckdb")
    pytest.importorskip("ibis")
    from evalcore.engines.agreement import agreement as eagreement, count_units_engine
    from evalcore.engines.engine import connect, read

    con = connect("duckdb")
    plain, extras = tmp_path / "plain.parquet", tmp_path / "extras.parquet"
    sample.to_parquet(plain)
    _with_extras(sample).to_parquet(extras)
    units = count_units_engine(read(con, extras), by=["language", "criterion"])
    assert units.columns == ["criterion", "language", "task"]
    assert sorted(dict(units.varying)) == sorted(EXTRAS)
    for by in (["language", "criterion"], ["task"]):
        pd.testing.assert_frame_equal(eagreement(read(con, extras), by=by, n_boot=20, seed=2),
                                      eagreement(read(con, plain), by=by, n_boot=20, seed=2))
    with pytest.raises(DataError, match="column 'duration_ms' has different values within one item"):
        eagreement(read(con, extras), by=["language", "duration_ms"], n_boot=0)


# --------------------------------------------------------------------------- defect 1: the commands


def _json(capsys, argv: list[str]):
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize("command", [["agreement", "--by", "language"], ["bias", "--by", "language"],
                                     ["report"]], ids=lambda c: c[0])
def test_commands_with_per_row_columns_give_the_plain_results(files, capsys, command):
    name, *opts = command
    argv = [name, "{}", *opts, "--boot", "20", "--json"]
    got = _json(capsys, [a.replace("{}", files["extras"]) for a in argv])
    want = _json(capsys, [a.replace("{}", files["plain"]) for a in argv])
    assert got == want and len(got) > 0


@pytest.mark.parametrize("name", ["agreement", "bias"])
@pytest.mark.parametrize("col", EXTRAS)
def test_grouping_by_a_per_row_column_is_one_clear_error(files, capsys, name, col):
    assert main([name, files["extras"], "--by", "language", col, "--boot", "0"]) == 1
    err = capsys.readouterr().err
    assert f"column '{col}' has different values within one item" in err and "Traceback" not in err
    assert err.count("\n") == 1


# --------------------------------------------------------------------------- defect 5: one stray score

#: The rating given the stray score: a judge's, on the first item (its row in the generated file).
STRAY_RATER, STRAY_ITEM = "gpt-4/per-criterion", "en-open_prompt-00"


def _on_100(sample: pd.DataFrame) -> pd.DataFrame:
    """The sample's scores spread over a 0-100 scale (whole numbers), as judges asked for 1-100 give them."""
    rng = np.random.default_rng(5)
    top = sample.groupby("criterion")["score"].transform("max")
    score = np.clip(np.round(sample["score"] / top * 80 + rng.normal(10, 8, len(sample))), 0, 100) + 0.0
    return sample.assign(score=score)


def _stray(sample: pd.DataFrame, value: float) -> tuple[pd.DataFrame, str]:
    df = _on_100(sample)
    at = np.flatnonzero((df["rater"] == STRAY_RATER) & (df["item_id"] == STRAY_ITEM) & (df["criterion"] == "TQ"))[0]
    df.loc[at, "score"] = value
    return df, "TQ"


def test_round_number_weights_cost_the_distinct_scores_not_the_range(sample, monkeypatch):
    """The round-number weights are computed on the scores given: one 1e10 on a 0-100 scale costs one more
    value, not a grid of 1e10 (the old code allocated ``np.arange(lo, hi + 1)``)."""
    from evalcore.pointwise import scale_use as scale

    sizes = []
    real = scale._round_weights

    def spy(values, lo, hi, base):
        out = real(values, lo, hi, base)
        sizes.append((len(out[0]), hi - lo))
        return out

    monkeypatch.setattr(scale, "_round_weights", spy)
    df, crit = _stray(sample, 1e10)
    res = scale.round_number_bias(df, n_boot=10)
    distinct = df.groupby("criterion")["score"].nunique()
    assert sizes and all(n <= distinct.max() for n, _ in sizes)
    assert max(span for _, span in sizes) == 10**10  # the scale read from the data does reach the stray score
    assert res["estimate"].notna().any()


def test_round_number_weights_match_the_grid_they_replace():
    """At every whole number of a scale, the weights are those of the dense grid over it (the old definition)."""
    from evalcore.pointwise.scale_use import _reference_weights, _round_weights

    for lo, hi, base in ((0, 100, 5), (1, 10, 5), (1, 100, 10), (-7, 12, 3), (0, 6, 2)):
        grid = np.arange(lo, hi + 1)
        ind, c = np.zeros(len(grid)), np.zeros(len(grid))
        for v in grid[(grid % base == 0) & (grid > lo) & (grid < hi)]:
            ind[v - lo] = 1.0
            c[v - lo] += 1.0
            nb = [u for u in range(v - 2, v + 3) if u != v and lo < u < hi]
            c[np.asarray(nb) - lo] -= _reference_weights([u - v for u in nb])
        got_ind, got_c = _round_weights(grid.astype(float), lo, hi, base)
        assert np.array_equal(got_ind, ind) and np.array_equal(got_c, c)
        some = grid[::3].astype(float)  # only some scores given: the same weights at those
        sub_ind, sub_c = _round_weights(some, lo, hi, base)
        assert np.array_equal(sub_ind, ind[::3]) and np.array_equal(sub_c, c[::3])


#: ``bias --json`` on the sample's English rows on 0-100 without a stray score (filled by the first test below).
_PLAIN_BIAS: list[pd.DataFrame] = []


@pytest.mark.slow
@pytest.mark.parametrize("value", [1e6, 1e10, 1e308], ids=["1e6", "1e10", "1e308"])
def test_bias_and_report_finish_with_a_note_on_the_stray_score(sample, tmp_path, capsys, value):
    import warnings

    # One language of the three (every criterion, judge and layout; the stray score's item is English): the note
    # and the overflow depend on one score, not on how many others there are.
    sample = sample[sample["language"] == "English"].reset_index(drop=True)
    df, crit = _stray(sample, value)
    path = tmp_path / "stray.csv"
    df.to_csv(path, index=False)
    note = (f"score {value:g} by '{STRAY_RATER}' on item '{STRAY_ITEM}' lies far outside the other scores of "
            f"'{crit}' (0 to 100) and looks like a typo; the analyses use it as given")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning printed to the terminal fails the command
        assert main(["bias", str(path), "--boot", "20"]) == 0
        out = capsys.readouterr()
        assert "note: " + note[:60] in out.out and out.err == ""
        got = pd.DataFrame(_json(capsys, ["bias", str(path), "--boot", "0", "--json"]))
        if not _PLAIN_BIAS:  # the file without the stray score: the same for every value, computed once
            plain = tmp_path / "plain.csv"
            _on_100(sample).to_csv(plain, index=False)
            _PLAIN_BIAS.append(pd.DataFrame(_json(capsys, ["bias", str(plain), "--boot", "0", "--json"])))
        want = _PLAIN_BIAS[0]
        assert main(["report", str(path), "--boot", "20", "--json"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    # Every row of the criterion carries the note; no other criterion's does.
    tq = got["criterion"] == crit
    assert got.loc[tq, "note"].str.contains(note, regex=False).all()
    assert not got.loc[~tq, "note"].fillna("").str.contains("far outside").any()
    # No false note elsewhere: the sections that do not read the scale's ends say what they said without it.
    keys = ["section", "judge", "criterion", "measure"]
    for section in ("anchoring", "self_consistency"):
        a = got[got["section"] == section].set_index(keys)["note"].fillna("")
        a = a.str.replace(r"(; )?score \S+ by '[^']*' on item '[^']*' lies far outside .*? in the file", "", regex=True)
        b = want[want["section"] == section].set_index(keys)["note"].fillna("")
        pd.testing.assert_series_equal(a.sort_index(), b.sort_index(), check_names=False)


def test_stray_scores_name_only_scores_far_outside_the_bulk(sample):
    from evalcore.pointwise.scale_use import stray_scores

    assert stray_scores(_on_100(sample)) == {}  # a 0-100 scale used in full: nothing stray
    assert stray_scores(pd.read_csv(SAMPLE)) == {}
    df, crit = _stray(sample, -5e4)
    (only,) = stray_scores(df).items()
    assert only[0] == crit and only[1].startswith(f"score -50000 by '{STRAY_RATER}' on item '{STRAY_ITEM}'")
