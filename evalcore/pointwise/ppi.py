"""The humans' mean score and pass rate from a few human labels: prediction-powered estimates on ratings.

The judge rated every item, the humans a random sample of them. Per criterion (and ``by`` group, and judge),
prediction-powered inference (PPI, Angelopoulos et al., *Science* 2023; its power-tuned form PPI++, Angelopoulos,
Duchi & Zrnic 2023; for LLM evaluation, Boyeau et al. 2024) estimates what the humans would say on average over
**all** items, with an interval that holds whatever the judge's bias: the judge's answers on the unlabelled
items, corrected by its errors on the labelled ones (:mod:`evalcore.stats.ppi`).

What Y and :math:`\\hat Y` are, per item:

``mean_score`` (a numeric criterion)
    Y is the mean of the humans' scores on the item (each annotator's own mean over their samples first), and
    :math:`\\hat Y` the judge's score, its mean over samples. The estimand is the mean human score.
``pass_rate`` with ``pass_at`` X (a numeric criterion)
    Y = 1 when the humans' mean score on the item is at least X, else 0; :math:`\\hat Y` = 1 when the judge's
    is. The estimand is the share of items the humans pass. ``outcome`` reads ``>= X``.
``pass_rate`` of a category (a nominal criterion)
    Y is the share of the item's annotators who chose the category, :math:`\\hat Y` the share of the judge's
    samples that did. The estimand is the share of the category among the humans' labels. ``outcome`` is the
    category; every category of the criterion gets its cells, or only ``category``.

An item is **labelled** when the humans rated it on the criterion. The intervals hold when the labelled items are
a random sample of the items: :func:`ppi_label_check` tests the judge's mean on labelled against unlabelled items,
and the estimates' notes carry its warnings.

Every function builds the items frame (:func:`ppi_items`) and hands it to :mod:`evalcore.stats.ppi_table`:
estimates (:func:`ppi_estimates`), the label budget (:func:`ppi_budget`), the "what if" curve for fully labelled
files (:func:`ppi_what_if`), the allocation of more labels (:func:`ppi_plan`) and the check.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..arguments import takes_table
from ..columns import HUMAN, JUDGE, RATINGS
from ..data.scales import NOMINAL, category_of, format_number, scale_by_criterion
from ..errors import DataError
from ..stats.ppi_table import (MIN_LABELED, LabelPlan, allocation_plan, budget_table, estimate_table,
                               label_check_table, what_if_table)
from ..stats.results import ALPHA

__all__ = ["ppi_items", "ppi_estimates", "ppi_budget", "ppi_what_if", "ppi_plan", "ppi_label_check"]

_NEEDS = ("item_id", "rater", "rater_kind", "score")


def _strata(by) -> list[str]:
    """The ``by`` columns as a list; ``criterion`` is always a key, never a stratum."""
    return [c for c in dict.fromkeys([by] if isinstance(by, str) else (by or ())) if c != "criterion"]


def _check(ratings: pd.DataFrame, by, judges) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The rows to read, the ``by`` columns and the judges."""
    missing = [c for c in _NEEDS if c not in ratings.columns]
    if missing:
        raise DataError("prediction-powered estimates of scores need a ratings table, and this one has no "
                        + ", ".join(f"'{c}'" for c in missing) + " column",
                        fix="give a ratings table (item_id, rater, rater_kind, criterion, score)")
    by = _strata(by)
    unknown = [c for c in by if c not in ratings.columns]
    if unknown:
        raise DataError(f"cannot group by '{unknown[0]}': there is no such column",
                        fix="group by columns of the table: " + ", ".join(map(str, ratings.columns[:12])))
    df = ratings if "criterion" in ratings.columns else ratings.assign(criterion="overall")
    kind = df["rater_kind"].astype(str)
    have = [str(r) for r in pd.unique(df.loc[kind == JUDGE, "rater"].astype(str))]
    if not have:
        raise DataError("prediction-powered estimates correct a judge's answers, and the table has no judge's "
                        "ratings", fix="give the judge's rows rater_kind 'judge' (CLI: --judge-rater NAME)")
    if judges is not None:
        judges = [judges] if isinstance(judges, str) else list(dict.fromkeys(map(str, judges)))
        unknown = [j for j in judges if j not in have]
        if unknown:
            raise DataError(f"{', '.join(unknown)} is not a judge in this table", fix="pick from: " + ", ".join(have))
        have = judges
    keep = (kind == HUMAN) | df["rater"].astype(str).isin(have)
    return df[keep.to_numpy()], by, have


def _values(df: pd.DataFrame, pass_at: float | None, category: str | None) -> pd.DataFrame:
    """One row per rating and outcome: ``criterion, outcome, measure, item_id, rater, rater_kind, value``."""
    scales = scale_by_criterion(df)
    nominal = df["criterion"].astype(str).map(scales).eq(NOMINAL).to_numpy()
    base = pd.DataFrame({"criterion": df["criterion"].astype(str).to_numpy(), "item_id": df["item_id"].to_numpy(),
                         "rater": df["rater"].astype(str).to_numpy(),
                         "rater_kind": df["rater_kind"].astype(str).to_numpy()})
    parts = []
    if (~nominal).any():
        num = base[~nominal].assign(value=pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=float)[~nominal])
        label = None if pass_at is None else f">= {format_number(pass_at)}"
        parts.append(num.assign(outcome=label, measure="mean_score" if pass_at is None else "pass_rate"))
    if nominal.any():
        labels = category_of(df).to_numpy(dtype=object, na_value=None)[nominal]
        nom = base[nominal].assign(_label=labels).dropna(subset=["_label"])
        cats = nom[["criterion", "_label"]].drop_duplicates().rename(columns={"_label": "outcome"})
        if category is not None:
            cats = cats[cats["outcome"] == str(category)]
            if cats.empty:
                raise DataError(f"no nominal criterion has the category '{category}'",
                                fix="pick one of: " + ", ".join(map(str, pd.unique(labels[pd.notna(labels)])[:20])))
        cats = cats.sort_values(["criterion", "outcome"], kind="stable")
        nom = nom.merge(cats, on="criterion")
        parts.append(nom.assign(value=(nom["_label"] == nom["outcome"]).astype(float), measure="pass_rate")
                     .drop(columns="_label"))
    return pd.concat(parts, ignore_index=True)


@takes_table(RATINGS)
def ppi_items(ratings: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
              pass_at: float | None = None, category: str | None = None) -> pd.DataFrame:
    """The humans' answer Y and each judge's answer :math:`\\hat Y` per item, criterion and outcome (module
    docstring): the items frame of :mod:`evalcore.stats.ppi_table`.

    Parameters
    ----------
    ratings
        A validated ratings table.
    by
        Per-item columns to group by (``system``, ``language``, ...): the strata.
    judges
        The judges (default: every judge).
    pass_at
        Numeric criteria: estimate the share of items whose humans' mean score is at least this, not the mean.
    category
        Nominal criteria: only this category's share (default: every category's).
    item, rater, kind, criterion, score, sample
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        ``criterion, outcome, <by>, judge, measure, item_id, y, yhat``: one row per item of the criterion
        (rated by the humans or by any judge) and judge; ``y`` NaN where the humans did not rate it, ``yhat``
        where the judge did not.

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv")
    >>> items = ppi_items(ratings, judges=["gpt-4/single-call"])
    >>> items.columns.tolist()
    ['criterion', 'outcome', 'judge', 'measure', 'item_id', 'y', 'yhat']
    """
    df, by, judges = _check(ratings, by, judges)
    values = _values(df, pass_at, category)
    keys = ["criterion", "outcome", "item_id"]
    per_rater = values.groupby([*keys, "rater", "rater_kind", "measure"], sort=False, dropna=False)["value"].mean()
    per_rater = per_rater.reset_index()
    human = per_rater[per_rater["rater_kind"] == HUMAN].groupby(keys, sort=False, dropna=False)["value"].mean()
    judge = per_rater[per_rater["rater_kind"] != HUMAN].rename(columns={"rater": "judge", "value": "yhat"})
    cells = per_rater[[*keys, "measure"]].drop_duplicates([*keys])
    grid = cells.merge(judge[["criterion", "outcome", "judge"]].drop_duplicates(), on=["criterion", "outcome"])
    out = grid.merge(judge[[*keys, "judge", "yhat"]], on=[*keys, "judge"], how="left")
    out = out.merge(human.rename("y").reset_index(), on=keys, how="left")
    if pass_at is not None:
        numeric = out["outcome"].notna() & out["measure"].eq("pass_rate") & out["outcome"].str.startswith(">= ")
        for c in ("y", "yhat"):
            v = out[c].to_numpy(dtype=float)
            out[c] = np.where(numeric & np.isfinite(v), (v >= pass_at).astype(float), v)
    if by:
        segs = df[["item_id", *by]].drop_duplicates("item_id")
        out = out.merge(segs, on="item_id", how="left")
    out["judge"] = pd.Categorical(out["judge"], categories=judges)
    out = out.sort_values(["criterion", "outcome", *by, "judge"], kind="stable", na_position="first")
    out["judge"] = out["judge"].astype(str)
    order = list(dict.fromkeys(df["criterion"].astype(str)))
    out = out.sort_values("criterion", key=lambda s: s.map({c: i for i, c in enumerate(order)}), kind="stable")
    return out[["criterion", "outcome", *by, "judge", "measure", "item_id", "y", "yhat"]].reset_index(drop=True)


@takes_table(RATINGS)
def ppi_estimates(ratings: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                  pass_at: float | None = None, category: str | None = None, plain: bool = False,
                  level: float = 0.95, min_labeled: int = MIN_LABELED) -> pd.DataFrame:
    """The humans' mean score (or pass rate) per criterion, ``by`` group and judge: humans only, the judge only
    (biased), and prediction-powered (PPI++, tuned :math:`\\lambda`; plain PPI with ``plain``), each with its
    interval; with ``by``, the stratified overall estimate too.

    PPI++ is :math:`\\hat\\theta = \\lambda \\overline{\\hat Y}_U + \\overline{(Y - \\lambda\\hat Y)}_L` with
    :math:`\\hat\\lambda = \\widehat{Cov}(Y, \\hat Y) / ((1 + n/N) \\widehat{Var}(\\hat Y))` clipped to [0, 1], and
    the interval :math:`\\hat\\theta \\pm z \\sqrt{\\widehat{Var}(\\lambda \\hat Y_U)/N +
    \\widehat{Var}(Y - \\lambda \\hat Y)_L / n}`, as ``ppi_py.ppi_mean_ci`` (Angelopoulos, Duchi & Zrnic 2023).
    The intervals hold when the labelled items are a random sample of the items.

    Parameters
    ----------
    ratings
        A validated ratings table.
    by, judges, pass_at, category
        As :func:`ppi_items`.
    plain
        Also plain PPI (:math:`\\lambda = 1`).
    level
        The confidence level.
    min_labeled
        Groups with fewer labelled items get a point estimate and no interval.

    Returns
    -------
    pandas.DataFrame
        ``criterion, outcome, <by>, stratified, judge, measure, method, estimate, ci_low, ci_high, std_error,
        n_labeled, n_unlabeled, lambda, effective_labels, note``
        (:func:`evalcore.stats.ppi_table.estimate_table`).

    Raises
    ------
    DataError
        No item has human labels, or no judge rated any.

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv")
    >>> table = ppi_estimates(ratings, judges=["gpt-4/single-call"])
    >>> table.columns[:4].tolist()
    ['criterion', 'outcome', 'stratified', 'judge']
    >>> table["method"].unique().tolist()
    ['human_only', 'judge_only', 'ppi++']
    """
    items = ppi_items(ratings, by=by, judges=judges, pass_at=pass_at, category=category)
    return estimate_table(items, by=_strata(by), plain=plain, level=level, min_labeled=min_labeled)


@takes_table(RATINGS)
def ppi_budget(ratings: pd.DataFrame, *, half_width: float, by: Sequence[str] = (),
               judges: Sequence[str] | None = None, pass_at: float | None = None, category: str | None = None,
               level: float = 0.95, cost_label: float | None = None, cost_judge: float | None = None) -> pd.DataFrame:
    """How many human labels reach the interval half-width ``half_width``, with PPI++ and with the humans
    alone, per criterion, ``by`` group and judge (:func:`evalcore.stats.ppi_table.budget_table`; ``ppi_py``'s
    power analysis). With both costs, the cheapest (labels, judged items).

    Parameters
    ----------
    ratings
        A validated ratings table.
    half_width
        The target half-width W of the intervals (estimate +- W).
    by, judges, pass_at, category
        As :func:`ppi_items`.
    level
        The confidence level.
    cost_label, cost_judge
        The cost of one human label and of one judge label (both or neither).

    Returns
    -------
    pandas.DataFrame
        ``criterion, outcome, <by>, judge, measure, target_half_width, n_items, n_labeled, half_width_human_only,
        half_width_ppi, ppi_corr, labels_human_only, labels_ppi, more_labels_human_only, more_labels_ppi,
        effective_labels, cheapest_labeled, cheapest_unlabeled, cheapest_cost, note``.

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv")
    >>> b = ppi_budget(ratings, half_width=0.05, judges=["gpt-4/single-call"])
    >>> bool((b["labels_ppi"] <= b["labels_human_only"]).all())
    True
    """
    items = ppi_items(ratings, by=by, judges=judges, pass_at=pass_at, category=category)
    return budget_table(items, half_width=half_width, level=level, cost_label=cost_label, cost_judge=cost_judge)


@takes_table(RATINGS)
def ppi_what_if(ratings: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                pass_at: float | None = None, category: str | None = None, shares: Sequence[float] | None = None,
                repeats: int = 20, level: float = 0.95, seed: int | np.random.Generator = 0) -> pd.DataFrame:
    """What if only a share of the human labels existed? The PPI++ and humans-only interval widths against
    the share of labels kept (seeded random subsets), whether PPI++ still holds the full-data value, and the
    share at which PPI++ is as narrow as the humans with every label
    (:func:`evalcore.stats.ppi_table.what_if_table`).

    Parameters
    ----------
    ratings
        A validated ratings table.
    by, judges, pass_at, category
        As :func:`ppi_items`.
    shares
        The shares of the labels to keep (default 0.05, 0.1, ..., 1).
    repeats
        Random subsets per share.
    level
        The confidence level.
    seed
        Seeds the subsets (a whole number or a Generator).

    Returns
    -------
    pandas.DataFrame
        ``criterion, outcome, <by>, judge, measure, share, n_labeled, width_ppi, width_human_only, covered_ppi,
        covered_human_only, full_estimate, full_width_human_only, matching_share, repeats, note``.

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv")
    >>> w = ppi_what_if(ratings, judges=["gpt-4/single-call"], shares=[0.2, 1.0], repeats=5, seed=0)
    >>> w[["share", "n_labeled"]].head(2).values.tolist()
    [[0.2, 240.0], [1.0, 1200.0]]
    """
    items = ppi_items(ratings, by=by, judges=judges, pass_at=pass_at, category=category)
    return what_if_table(items, shares=shares, repeats=repeats, level=level, seed=seed)


@takes_table(RATINGS)
def ppi_plan(ratings: pd.DataFrame, *, m: int, by: Sequence[str] = (), judge: str | None = None,
             pass_at: float | None = None, category: str | None = None,
             seed: int | np.random.Generator = 0) -> LabelPlan:
    """Where to spend ``m`` more human labels: Neyman allocation across the ``by`` strata on each stratum's
    residual spread (given the labels it has), and a seeded random draw of that many unlabelled items within
    each stratum, never chosen by the judge's answers (:func:`evalcore.stats.ppi_table.allocation_plan`).

    Parameters
    ----------
    ratings
        A validated ratings table.
    m
        How many more items to label.
    by
        The strata (per-item columns); none: the m items drawn from all.
    judge
        The judge whose residual spread guides the split (default: the first).
    pass_at, category
        As :func:`ppi_items`.
    seed
        Seeds the draw (a whole number or a Generator).

    Returns
    -------
    evalcore.stats.ppi_table.LabelPlan
        ``allocation`` (one row per stratum: ``<by>, n_items, n_labeled, n_unlabeled, weight, spread,
        new_labels, note``) and ``items`` (``<by>, item_id``: the items to send to the annotators).

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv")
    >>> few = ratings[(ratings["rater_kind"] == "judge") | ratings["item_id"].str.endswith("0")]  # a tenth labelled
    >>> plan = ppi_plan(few, m=30, by=["language"], seed=0)
    >>> int(plan.allocation["new_labels"].sum()), plan.items.columns.tolist()
    (30, ['language', 'item_id'])
    """
    items = ppi_items(ratings, by=by, judges=None if judge is None else [judge], pass_at=pass_at, category=category)
    return allocation_plan(items, m=m, by=_strata(by), unit=("item_id",), judge=judge, seed=seed)


@takes_table(RATINGS)
def ppi_label_check(ratings: pd.DataFrame, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                    pass_at: float | None = None, category: str | None = None, alpha: float = ALPHA) -> pd.DataFrame:
    """Are the labelled items a random sample? The judge's mean on labelled against unlabelled items per
    criterion, group and judge, Welch's z-test with Benjamini-Hochberg q-values; ``warning`` where q is at
    most ``alpha`` (:func:`evalcore.stats.ppi_table.label_check_table`).

    Parameters
    ----------
    ratings
        A validated ratings table.
    by, judges, pass_at, category
        As :func:`ppi_items`.
    alpha
        The false discovery rate of the warnings.

    Returns
    -------
    pandas.DataFrame
        ``criterion, outcome, <by>, judge, measure, n_labeled, n_unlabeled, judge_mean_labeled,
        judge_mean_unlabeled, difference, p_value, q_value, warning, note``.

    Examples
    --------
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv")
    >>> ppi_label_check(ratings, judges=["gpt-4/single-call"])["warning"].dtype
    dtype('bool')
    """
    items = ppi_items(ratings, by=by, judges=judges, pass_at=pass_at, category=category)
    return label_check_table(items, alpha=alpha)
