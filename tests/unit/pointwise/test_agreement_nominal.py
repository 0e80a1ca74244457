"""Agreement on categories: text labels of nominal criteria, against independent libraries on real labels
(PandaLM's three annotators and its judge), mixed tables, numbers declared nominal, the confusion matrix and
the class distributions."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix as sk_confusion, f1_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from evalcore.data.scales import format_number
from evalcore.labels import strict_majority
from evalcore.pointwise.agreement.measures import HUMAN_MEASURES, JUDGE_MEASURES, ORDER_MEASURES
from evalcore.pointwise.agreement.table import agreement, scale_notes
from evalcore.pointwise.agreement.units import count_units
from evalcore.pointwise.confusion import confusion_matrix
from evalcore.pointwise.distributions import class_distribution
from tests.helpers import PANDALM, SAMPLE

TOL = 1e-9
LABELS = {0: "tie", 1: "first", 2: "second"}
needs_pandalm = pytest.mark.skipif(
    not PANDALM.exists(), reason="../shared/datasets/pandalm not found: these tests read PandaLM's real labels")


def _est(res: pd.DataFrame, measure: str, judge: str | None = None, **by) -> float:
    sel = (res["judge"].isna() if judge is None else res["judge"] == judge) & (res["measure"] == measure)
    for k, v in by.items():
        sel &= res[k] == v
    (v,) = res.loc[sel, "estimate"]
    return v


def pandalm_text() -> pd.DataFrame:
    """PandaLM's test set as text labels: three annotators and the PandaLM-7B judge, 'tie'/'first'/'second'."""
    items = json.loads((PANDALM / "testset-v1.json").read_text())
    judged = {r["idx"]: r["pandalm_result"] for r in json.loads((PANDALM / "pandalm-7b-testset-v1.json").read_text())}
    rows = []
    for it in items:
        for a in ("annotator1", "annotator2", "annotator3"):
            rows.append((f"p{it['idx']}", a, "human", LABELS[int(it[a])]))
        rows.append((f"p{it['idx']}", "pandalm-7b", "judge", LABELS[int(judged[it["idx"]])]))
    frame = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "category"])
    return frame.assign(criterion="preference", scale="nominal", score=np.nan)


@pytest.fixture(scope="module")
def pandalm() -> pd.DataFrame:
    if not PANDALM.exists():
        pytest.skip("../shared/datasets/pandalm not found: these tests read PandaLM's real labels")
    return pandalm_text()


def _wide(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.pivot(index="item_id", columns="rater", values="category")


@needs_pandalm
def test_human_measures_equal_statsmodels_krippendorff_and_the_formulas(pandalm):
    res = agreement(pandalm, n_boot=0)
    wide = _wide(pandalm)[["annotator1", "annotator2", "annotator3"]]
    codes = wide.apply(lambda c: c.map({"first": 0, "second": 1, "tie": 2}))
    table, _ = aggregate_raters(codes.to_numpy())
    assert _est(res, "fleiss_kappa") == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=TOL)
    alpha = krippendorff.alpha(reliability_data=codes.to_numpy().T.astype(float), level_of_measurement="nominal")
    assert _est(res, "krippendorff_alpha_nominal") == pytest.approx(alpha, abs=TOL)
    # Percent agreement, AC1 (Gwet 2008) and PABAK (Byrt et al. 1993) on the counts, written out.
    n = table.sum(axis=1)
    pa = ((table * (table - 1)).sum(axis=1) / (n * (n - 1))).mean()
    pi = (table / n[:, None]).mean(axis=0)
    q = table.shape[1]
    pe = (pi * (1 - pi)).sum() / (q - 1)
    assert _est(res, "percent_agreement") == pytest.approx(pa, abs=TOL)
    assert _est(res, "full_agreement") == pytest.approx((table.max(axis=1) == 3).mean(), abs=TOL)
    assert _est(res, "gwet_ac1") == pytest.approx((pa - pe) / (1 - pe), abs=TOL)
    assert _est(res, "pabak") == pytest.approx((q * pa - 1) / (q - 1), abs=TOL)


@needs_pandalm
def test_judge_measures_and_confusion_matrix_equal_sklearn(pandalm):
    res = agreement(pandalm, n_boot=0)
    wide = _wide(pandalm)
    order = ["first", "second", "tie"]  # text labels in code-point order
    counts = np.stack([(wide[["annotator1", "annotator2", "annotator3"]] == c).sum(axis=1) for c in order], axis=1)
    major = strict_majority(counts)
    ok = major >= 0
    y_true = np.asarray(order, dtype=object)[major[ok]]
    y_pred = wide["pandalm-7b"].to_numpy()[ok]
    assert _est(res, "cohen_kappa", "pandalm-7b") == pytest.approx(cohen_kappa_score(y_true, y_pred), abs=TOL)
    assert _est(res, "weighted_f1", "pandalm-7b") == pytest.approx(f1_score(y_true, y_pred, average="weighted"),
                                                                     abs=TOL)
    assert _est(res, "percent_agreement", "pandalm-7b") == pytest.approx((y_true == y_pred).mean(), abs=TOL)
    # The judge as a fourth rater: nominal alpha with it.
    codes = wide[["annotator1", "annotator2", "annotator3", "pandalm-7b"]].apply(
        lambda c: c.map({"first": 0, "second": 1, "tie": 2})).to_numpy().T.astype(float)
    assert _est(res, "krippendorff_alpha_nominal", "pandalm-7b") == pytest.approx(
        krippendorff.alpha(reliability_data=codes, level_of_measurement="nominal"), abs=TOL)
    # The humans' majority distribution the PandaLM authors publish: 105 ties, 422 and 472 wins.
    assert sorted(pd.Series(y_true).value_counts().tolist()) == [105, 422, 472]
    cm = confusion_matrix(pandalm)
    assert cm["human_category"].unique().tolist() == order and cm["judge_category"].unique().tolist() == order
    got = cm.pivot(index="human_category", columns="judge_category", values="count").loc[order, order].to_numpy()
    np.testing.assert_array_equal(got, sk_confusion(y_true, y_pred, labels=order))
    np.testing.assert_allclose(cm["row_share"], (got / got.sum(axis=1, keepdims=True)).ravel())
    assert (cm["n_units"] == ok.sum()).all()
    assert not (~ok).any() and set(cm["note"]) == {""}  # three annotators, three labels: one split has none


@needs_pandalm
def test_nominal_criteria_drop_the_measures_that_need_an_order(pandalm):
    res = agreement(pandalm, n_boot=50, seed=1)
    assert set(res["measure"]) == (set(HUMAN_MEASURES) | set(JUDGE_MEASURES)) - ORDER_MEASURES
    assert res["estimate"].notna().all() and res["ci_low"].notna().all()
    (note,) = res.attrs["notes"]
    assert note.startswith("preference is nominal (categories without an order): the measures that need an order")


def test_text_labels_are_kept_exactly_as_written():
    frame = pd.DataFrame({"item_id": [1, 1, 2, 2], "rater": ["a", "b", "a", "b"], "rater_kind": "human",
                          "criterion": "c", "scale": "nominal", "score": np.nan,
                          "category": ["Yes", "yes", "yes ", "yes "]})
    units = count_units(frame)
    assert units.category_labels == ("Yes", "yes", "yes ")
    res = agreement(frame, n_boot=0)
    assert _est(res, "percent_agreement") == 0.5  # 'Yes' and 'yes' disagree; never merged


def _mixed(seed: int = 3) -> pd.DataFrame:
    """Two criteria on the same items: 'fluency' (numbers 1-5) and 'stance' (text, nominal); three annotators and
    a judge."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(120):
        q, s = rng.integers(1, 6), rng.choice(["pro", "con", "neutral"])
        for r in ("h1", "h2", "h3", "bot"):
            kind = "judge" if r == "bot" else "human"
            score = int(np.clip(q + rng.integers(-1, 2), 1, 5))
            label = s if rng.random() < 0.7 else rng.choice(["pro", "con", "neutral"])
            rows.append((f"i{i}", r, kind, "fluency", "ordinal", float(score), None))
            rows.append((f"i{i}", r, kind, "stance", "nominal", np.nan, label))
    return pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "scale", "score", "category"])


def test_mixed_table_equals_each_scale_alone():
    mixed = _mixed()
    res = agreement(mixed, by=["criterion"], n_boot=100, seed=5)
    numeric = mixed[mixed["criterion"] == "fluency"].drop(columns=["scale", "category"])
    alone = agreement(numeric, by=["criterion"], n_boot=100, seed=5)
    # The q-values (and so the flags) run across the whole table: two tests here, one in each alone.
    fdr = ["q_value", "flagged"]
    got = res[res["criterion"] == "fluency"].reset_index(drop=True)
    pd.testing.assert_frame_equal(got.drop(columns=fdr), alone.drop(columns=fdr), check_dtype=False)
    nominal = agreement(mixed[mixed["criterion"] == "stance"], by=["criterion"], n_boot=100, seed=5)
    got = res[res["criterion"] == "stance"].reset_index(drop=True)
    pd.testing.assert_frame_equal(got.drop(columns=fdr), nominal.drop(columns=fdr), check_dtype=False)
    assert not (set(got["measure"]) & ORDER_MEASURES)
    assert set(res.loc[res["criterion"] == "fluency", "measure"]) >= ORDER_MEASURES


def test_mixed_table_is_never_pooled_across_scales():
    mixed = _mixed()
    res = agreement(mixed, by=[], n_boot=0)
    assert list(res.columns[:2]) == ["criterion", "judge"]  # grouped by criterion, and said so
    assert set(res["criterion"]) == {"fluency", "stance"}
    assert res.attrs["notes"][1] == ("Grouped by criterion too: nominal labels and numbers are never pooled in one "
                                     "measure.")
    assert scale_notes(count_units(mixed), ["criterion"]) == res.attrs["notes"][:1]
    cm = confusion_matrix(mixed)
    assert set(cm["criterion"]) == {"fluency", "stance"}
    assert cm.loc[cm["criterion"] == "stance", "human_category"].unique().tolist() == ["con", "neutral", "pro"]
    assert cm.loc[cm["criterion"] == "fluency", "human_category"].unique().tolist() == ["1", "2", "3", "4", "5"]


def test_numbers_declared_nominal_give_the_numeric_paths_nominal_measures():
    frame = pd.read_csv(SAMPLE).query("language == 'English'")
    declared = frame.assign(scale="nominal", category=frame["score"].map(format_number))
    before = agreement(frame, by=["criterion"], n_boot=200, seed=2)
    after = agreement(declared, by=["criterion"], n_boot=200, seed=2)
    keep = ~before["measure"].isin(ORDER_MEASURES)
    pd.testing.assert_frame_equal(after.reset_index(drop=True), before[keep].reset_index(drop=True),
                                  check_dtype=False)


def test_judge_label_the_humans_never_gave_and_units_without_majority():
    frame = pd.DataFrame({
        "item_id": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "rater": ["h1", "h2", "J"] * 3,
        "rater_kind": ["human", "human", "judge"] * 3, "criterion": "relation", "scale": "nominal", "score": np.nan,
        "category": ["cause", "cause", "other", "part", "part", "part", "cause", "part", "cause"]})
    cm = confusion_matrix(frame, by=["criterion"])
    assert cm["human_category"].unique().tolist() == ["cause", "other", "part"]
    cell = cm.set_index(["human_category", "judge_category"])
    assert cell.loc[("cause", "other"), "count"] == 1 and cell.loc[("part", "part"), "count"] == 1
    assert np.isnan(cell.loc[("other", "other"), "row_share"])  # the humans never gave it as a majority
    assert cm["note"].iloc[0] == "1 unit(s) without a strict human majority left out"


def test_class_distribution_on_categories():
    mixed = _mixed()
    dist = class_distribution(mixed, by=["criterion"])
    stance = dist[dist["criterion"] == "stance"]
    assert stance["score"].isna().all() and set(stance["category"]) == {"con", "neutral", "pro"}
    fluency = dist[dist["criterion"] == "fluency"]
    assert fluency["category"].tolist() == fluency["score"].map(format_number).tolist()
    # The humans' counts per label, by pandas.
    h = mixed[(mixed["criterion"] == "stance") & (mixed["rater_kind"] == "human")]
    expected = h["category"].value_counts().sort_index()
    got = stance[stance["source"] == "humans"].groupby("category")["count"].sum().sort_index()
    pd.testing.assert_series_equal(got, expected, check_names=False)
    # Pooled without a grouping, the criteria are kept apart.
    assert "criterion" in class_distribution(mixed).columns


def test_ordinal_text_labels_keep_the_users_order_and_every_measure():
    """Text declared ordinal with an order: ``score`` the position, ``category`` the label (evalcore.data.scales)."""
    order = ["bad", "ok", "good"]
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        q = rng.integers(0, 3)
        for r in ("h1", "h2", "h3", "J"):
            pos = int(np.clip(q + rng.integers(-1, 2), 0, 2))
            rows.append((f"i{i}", r, "judge" if r == "J" else "human", "quality", "ordinal", pos + 1.0, order[pos]))
    frame = pd.DataFrame(rows, columns=["item_id", "rater", "rater_kind", "criterion", "scale", "score", "category"])
    res = agreement(frame, by=["criterion"], n_boot=0)
    assert set(res["measure"]) >= ORDER_MEASURES and res.attrs["notes"] == []
    numeric = agreement(frame.drop(columns=["scale", "category"]), by=["criterion"], n_boot=0)
    pd.testing.assert_frame_equal(res, numeric)
    cm = confusion_matrix(frame, by=["criterion"])
    assert cm["human_category"].unique().tolist() == order and cm["judge_category"].unique().tolist() == order
    dist = class_distribution(frame, by=["criterion"])
    assert dist["category"].unique().tolist() == order and dist["score"].unique().tolist() == [1.0, 2.0, 3.0]
