"""Familiarity bias of LLM judges, against human annotators (Stureborg et al. 2024, Sec. 3.1, Table 1, Fig. 2).

A judge with familiarity bias prefers text that is *familiar* to a language model, i.e. of low
perplexity. Each rating is paired with the perplexity of the judged item, and the association of
score with perplexity is compared between the judge and the humans on the same items
(:func:`familiarity`; the mean perplexity per score for plots: :func:`perplexity_by_score`).
Perplexity comes from a ``perplexity`` column. Where only ``text`` is given,
:func:`perplexity_proxy` computes a **proxy** locally (a character trigram model fitted on the
file's other texts); it is labelled as such everywhere (:data:`PROXY_LABEL`).

On a nominal criterion (categories without an order, :mod:`evalcore.data.scales`) the association
becomes the mean perplexity of the items given each category, judge against humans.

The conventions of the summary table (layout, item bootstrap, flags) are those of
:mod:`evalcore.pointwise.bias`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from ..arguments import takes_table
from ..columns import HUMANS_LABEL, RATINGS
from ..errors import DataError, varying_within_item
from ..stats.bootstrap import cell_rng, check_level, check_resamples, item_weights, percentile_interval, root_seed
from ..stats.numeric import codes, join_notes, safe_div, zero_div
from ..stats.results import SPARSE_NOTE
from ..stats.kendall import tau_b
from ..data.scales import CATEGORY
from .cells import ScaleSplit, split_scales
from .coding import CodedRatings, code_ratings
from .sections import BiasNotApplicable, SectionTable, category_untested, join_tables, not_applicable

FAMILIARITY = "familiarity"
#: The rows of :func:`familiarity` that are tests (``tau_difference``, "less": see
#: :data:`evalcore.pointwise.sections.TESTS`); the other rows are descriptive.
TESTED = ("tau_difference",)
#: Shown wherever :func:`perplexity_proxy` stands in for a real perplexity.
PROXY_LABEL = (
    "perplexity is a PROXY computed locally: a character-trigram language model fitted on the other "
    "texts of this file (leave-one-out, Jelinek-Mercer smoothing); it measures how typical a text's "
    "character sequences are of this file, not an LLM's perplexity"
)
_PROXY_WEIGHTS = (0.6, 0.3, 0.1)  # Jelinek-Mercer weights of the trigram, bigram and unigram estimates


# --------------------------------------------------------------------------- perplexity


def perplexity_proxy(texts: pd.Series) -> pd.Series:
    """A local stand-in for perplexity when only the texts are given: **a proxy, not an LLM's perplexity**.

    Each distinct text is scored by a character-trigram language model fitted on all the
    *other* distinct texts of the series (leave-one-out), so a text never makes itself
    familiar. Probabilities are Jelinek-Mercer interpolations

    .. math:: P(c_t \\mid c_{t-2} c_{t-1}) = \\lambda_3 \\frac{N(c_{t-2}c_{t-1}c_t)}{N(c_{t-2}c_{t-1}\\cdot)}
              + \\lambda_2 \\frac{N(c_{t-1}c_t)}{N(c_{t-1}\\cdot)} + \\lambda_1 \\frac{N(c_t) + 1}{N + V}

    with :math:`(\\lambda_3, \\lambda_2, \\lambda_1) = (0.6, 0.3, 0.1)` (an order whose context
    was never seen gives its weight to the others), counts N over the other texts, each text
    padded with two start symbols and one end symbol, and V the number of distinct
    characters plus the end symbol. The proxy perplexity is
    :math:`\\exp(-\\frac{1}{L+1}\\sum_t \\log P(c_t \\mid \\cdot))` over the text's L characters and its end.

    What it measures: how typical a text's character sequences are *of this file*. Low
    values mean "written like the other texts". This is only a rough stand-in for the
    perplexity under the judge's own language model that Stureborg et al. 2024 (Sec. 3.1)
    use (they computed it with text-davinci-003); nothing is downloaded and no neural model
    is used. Prefer a real ``perplexity`` column whenever you can compute one.

    Parameters
    ----------
    texts
        One text per row; missing or empty texts get NaN. Identical texts are scored once
        and count once in the model.

    Returns
    -------
    pandas.Series
        Proxy perplexity per row (same index), named ``perplexity_proxy``.
    """
    s = pd.Series(texts)
    valid = (s.notna() & s.astype(str).str.len().gt(0)).to_numpy()
    out = np.full(len(s), np.nan)
    if valid.any():
        codes, uniq = pd.factorize(s[valid].astype(str))
        out[valid] = _char_trigram_loo([str(u) for u in uniq])[codes]
    return pd.Series(out, index=s.index, name="perplexity_proxy")


def _loo_counts(keys: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Count of each position's key over all documents minus its count in its own document."""
    inv, uk = pd.factorize(keys)  # hashing: faster than sorting for millions of characters
    cnt = np.bincount(inv)
    pinv, _ = pd.factorize(doc * len(uk) + inv)
    return (cnt[inv] - np.bincount(pinv)[pinv]).astype(float)


def _char_trigram_loo(docs: list[str]) -> np.ndarray:
    D = len(docs)
    lengths = np.array([len(d) for d in docs], dtype=np.int64)
    cps = np.frombuffer("".join(docs).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    uchars, cid = np.unique(cps, return_inverse=True)
    cid = cid.ravel() + 2  # 0 = start, 1 = end, characters from 2
    Z = len(uchars) + 2
    V = len(uchars) + 1  # predictable symbols: the characters and the end symbol
    L = lengths + 3
    starts = np.concatenate([[0], np.cumsum(L)[:-1]])
    seq = np.empty(int(L.sum()), dtype=np.int64)
    doc_of_char = np.repeat(np.arange(D), lengths)
    offset = np.arange(len(cid)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    seq[starts[doc_of_char] + 2 + offset] = cid
    seq[starts] = 0
    seq[starts + 1] = 0
    seq[starts + L - 1] = 1
    pred = np.ones(len(seq), dtype=bool)
    pred[starts] = False
    pred[starts + 1] = False
    idx = np.flatnonzero(pred)
    w0, w1, w2 = seq[idx], seq[idx - 1], seq[idx - 2]
    doc = np.repeat(np.arange(D), lengths + 1)
    tri = _loo_counts((w2 * Z + w1) * Z + w0, doc)
    ctx2 = _loo_counts(w2 * Z + w1, doc)
    bi = _loo_counts(w1 * Z + w0, doc)
    ctx1 = _loo_counts(w1, doc)
    uni = _loo_counts(w0, doc)
    total = len(idx) - (lengths + 1)[doc]
    l3, l2, l1 = _PROXY_WEIGHTS
    h3, h2 = (ctx2 > 0).astype(float), (ctx1 > 0).astype(float)
    p = (l3 * h3 * zero_div(tri, ctx2) + l2 * h2 * zero_div(bi, ctx1) + l1 * (uni + 1) / (total + V))
    p /= l3 * h3 + l2 * h2 + l1
    logp = np.bincount(doc, weights=np.log(p), minlength=D)
    return np.exp(-logp / (lengths + 1))


def _item_perplexity(prep: CodedRatings, perplexity: str | None) -> tuple[np.ndarray, str]:
    """Perplexity per item code, and a note ('' or the proxy label)."""
    df = prep.frame
    has = {c: c in df.columns and df[c].notna().any() for c in ("perplexity", "text")}
    if perplexity is None:
        perplexity = "perplexity" if has["perplexity"] else "proxy" if has["text"] else None
    if perplexity is None:
        raise BiasNotApplicable(
            "familiarity bias needs the perplexity of each item, or its text to compute a proxy, and this table has "
            "neither a 'perplexity' nor a 'text' column with values",
            fix="add a 'perplexity' column (e.g. computed with the judge's own model) or a 'text' column with the "
                "judged text")
    item = prep.item
    if perplexity == "proxy":
        if not has["text"]:
            raise BiasNotApplicable("the perplexity proxy needs the judged text, and this table has no 'text' column "
                                    "with values", fix="add a 'text' column, or give a perplexity column")
        text = df["text"]
        first = np.full(len(prep.item_ids), -1, dtype=np.int64)
        ok = text.notna().to_numpy()
        rows = np.flatnonzero(ok)
        first[item[rows][::-1]] = rows[::-1]
        codes, _ = pd.factorize(text.astype(str))
        wrong = ok & (first[item] >= 0) & (codes != codes[np.maximum(first[item], 0)])
        if wrong.any():
            it = prep.item_ids[item[int(np.flatnonzero(wrong)[0])]]
            raise DataError(f"column 'text' has different texts within one item ('{it}')", column="text",
                            fix="the text must be the judged output of the item, the same on each of its rows")
        texts = pd.Series([df["text"].iloc[r] if r >= 0 else None for r in first], dtype=object)
        return perplexity_proxy(texts).to_numpy(), PROXY_LABEL
    if perplexity not in df.columns:
        raise DataError(f"there is no column '{perplexity}' to take the perplexity from", column=perplexity,
                        fix="name a numeric column holding each item's perplexity, or use perplexity='proxy'")
    vals = pd.to_numeric(df[perplexity], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    given = df[perplexity].notna().to_numpy()
    if (given & ~np.isfinite(vals)).any():
        value = df[perplexity].iloc[int(np.flatnonzero(given & ~np.isfinite(vals))[0])]
        raise DataError(f"perplexity '{value}' is not a finite number", column=perplexity,
                        fix="give a number per item, or leave the cell empty")
    per_item = np.full(len(prep.item_ids), np.nan)
    fin = np.isfinite(vals)
    rows = np.flatnonzero(fin)
    per_item[item[rows][::-1]] = vals[rows][::-1]
    ref = per_item[item]
    wrong = fin & ~np.isclose(vals, ref, rtol=1e-9, atol=0.0)
    if wrong.any():
        it = prep.item_ids[item[int(np.flatnonzero(wrong)[0])]]
        raise varying_within_item(perplexity, it,
                                  fix="perplexity describes the judged text: give the same value on every row of an item")
    return per_item, ""


# --------------------------------------------------------------------------- familiarity


def _cells(prep: CodedRatings, mask: np.ndarray):
    """Yield (criterion code, group code, row indices) for rows in ``mask``, by criterion then group."""
    G = len(prep.keys)
    rows = np.flatnonzero(mask)
    cell = prep.crit[rows] * G + prep.group[prep.item[rows]]
    order = np.argsort(cell, kind="stable")
    rows, cell = rows[order], cell[order]
    bounds = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1], True])
    for a, b in zip(bounds[:-1], bounds[1:]):
        c, g = divmod(int(cell[a]), G)
        yield c, g, rows[a:b]


@dataclass(frozen=True)
class _Obs:
    """A source's ratings in one cell as observations: (item, score category) with a count."""

    local: np.ndarray  # item index within the cell
    code: np.ndarray  # index into values
    count: np.ndarray  # ratings with this (item, score)
    values: np.ndarray  # sorted distinct scores

    def keep(self, mask: np.ndarray) -> "_Obs":
        m = mask[self.local]
        return _Obs(self.local[m], self.code[m], self.count[m], self.values)

    def items(self, n: int) -> np.ndarray:
        return np.bincount(self.local, minlength=n) > 0


def _obs(local: np.ndarray, score: np.ndarray) -> _Obs:
    if len(score) == 0:
        return _Obs(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    code, values = codes(score)
    q = len(values)
    key, cnt = np.unique(local * q + code, return_counts=True)
    return _Obs(key // q, key % q, cnt.astype(float), values)


class _Cell:
    """One criterion and group: its items (numbered ``0..n-1``), their perplexities and item weights."""

    def __init__(self, item: np.ndarray, ppl: np.ndarray, top: float, n_boot: int, rng: np.random.Generator):
        items, local = np.unique(item, return_inverse=True)
        self.local = local.ravel()
        self.n = len(items)
        self.p = ppl[items]
        self.yrank = codes(self.p)[0]
        self.top = top
        self.W = item_weights(rng, self.n, n_boot)
        self.Wt = np.ascontiguousarray(self.W.T)

    def stats(self, o: _Obs) -> tuple[np.ndarray, np.ndarray]:
        """Kendall's tau of score with perplexity, and the perplexity gap top vs rest, per resample."""
        tau = tau_b(self.Wt, o.local, o.code, self.yrank[o.local], o.count)
        top_w = o.count * (o.values[o.code] == self.top)
        ct = np.bincount(o.local, weights=top_w, minlength=self.n)
        cr = np.bincount(o.local, weights=o.count - top_w, minlength=self.n)
        sums = self.W @ np.column_stack([ct * self.p, ct, cr * self.p, cr])
        gap = safe_div(sums[:, 0], sums[:, 1]) - safe_div(sums[:, 2], sums[:, 3])
        return tau, gap

    def why(self, o: _Obs, measure: str, who: str) -> str:
        """Why ``measure`` ('tau' or 'gap') of these observations is not defined."""
        have = o.items(self.n)
        if not have.any():
            return f"not defined: no {who} ratings in this group"
        if measure == "tau":
            if have.sum() < 2:
                return "not defined: fewer than 2 items"
            if len(np.unique(o.code)) < 2:
                return f"not defined: every {who} score is the same"
            return "not defined: every item has the same perplexity"
        if not (o.values[o.code] == self.top).any():
            return f"not defined: no {who} rating at the top score ({self.top:g})"
        return f"not defined: every {who} rating is at the top score ({self.top:g})"


@takes_table(RATINGS, "text")
def familiarity(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    perplexity: str | None = None,
) -> pd.DataFrame:
    """Familiarity bias: does the judge favour low-perplexity text more than the humans do?

    Stureborg et al. 2024 (Sec. 3.1, Table 1, Fig. 2) group ratings by score and show that
    GPT-4's top-rated summaries have lower perplexity than the experts' top-rated ones.
    Here, per criterion (and per ``by`` group), every rating is paired with the perplexity
    :math:`p_i` of its item i.

    Measures (``judge`` None = the humans; each judge separately):

    ``kendall_tau``
        Kendall's tau-b between score and perplexity over the source's ratings. Humans: every
        human rating is one observation :math:`(s_{ik}, p_i)` (the ratings are pooled, as in
        the paper's Table 1 where ratings are grouped by score), so an item rated by three
        annotators contributes three observations with tied perplexity. Judge: its one score
        per item. Negative = higher scores for lower perplexity (familiar text). Equals
        ``scipy.stats.kendalltau`` (tau-b) on the same observations.
    ``perplexity_gap_top_vs_rest``
        Mean perplexity of the ratings at the criterion's top score (the highest score any
        rater gave on the criterion) minus the mean perplexity of the other ratings; negative
        = top-rated texts are more familiar. The full table is :func:`perplexity_by_score`.
    ``tau_difference`` (judges; **the test**)
        :math:`\\tau_{judge} - \\tau_{humans}`, both on the items rated by the judge and by at
        least one human. Tested one-sided, "less": the judge favours low-perplexity text more
        than humans do (its tau is more negative); a significantly higher tau is marked
        ``opposite``, never flagged. Flagged by :func:`evalcore.stats.apply_fdr`
        (Benjamini-Hochberg q <= 0.05 over the report's tests). Comparing with humans, not with 0, matters because perplexity may
        truly go with quality; the humans' tau measures that part.
    ``gap_difference`` (judges)
        The judge's ``perplexity_gap_top_vs_rest`` minus the humans', on the shared items
        (an effect size in perplexity units; not a test).

    **Nominal criteria** (a ``scale`` column, :mod:`evalcore.data.scales`): tau and the top score
    need an order, so they are not computed (one ``not_available`` row per criterion says so).
    Instead, per category *c* (named in a ``category`` column after the ``by`` columns):

    ``mean_perplexity``
        :math:`\\bar p_{s,c} = \\sum_{(i,k): y_{ik}=c} p_i / N_{s,c}`, the mean perplexity of the
        items over the source's ratings *c* (the humans' ratings pooled, as above).
    ``mean_perplexity_difference`` (judges; **a test**)
        :math:`\\bar p_{J,c} - \\bar p_{H,c}` on the items rated by the judge and a human (ratio
        estimators over ratings, the same item resamples for both). Negative: the judge gives *c*
        to more familiar texts than the humans do. Tested **two-sided**: the harm is a judge that
        picks labels by familiarity, and without an order no category is the favourable one, so a
        category given to texts either more or less familiar than the humans' is that harm (a
        "not toxic" given to familiar text is as much a bias as a "toxic" given to unfamiliar
        text). The humans' own means show how much perplexity truly goes with each category. A
        category the judge or the humans give on fewer than 30 of the items both rated is shown
        with its interval but not tested (:data:`evalcore.pointwise.sections.MIN_CATEGORY_ITEMS`).

    Caveat: a single human rating is noisier than a judge that is consistent, so if
    perplexity truly tracks quality, a good judge shows a somewhat larger |tau| than pooled
    human ratings; read ``tau_difference`` together with the humans' own tau.

    Parameters
    ----------
    ratings
        A validated canonical ratings table.
    by
        Per-item segment columns to split by, e.g. ``("language",)``; results are always per
        criterion (``"criterion"`` in ``by`` is ignored).
    judges
        Judges to include (default: all).
    n_boot
        Item-bootstrap resamples per cell; 0 gives no intervals and no flags.
    seed
        Integer seed, or a ``numpy.random.Generator`` (one integer is drawn from it); each cell
        has its own stream (:func:`evalcore.stats.cell_rng`).
    level
        Confidence level of the percentile intervals.
    perplexity
        Column holding each item's perplexity; default ``'perplexity'`` if it has values,
        else the proxy. ``'proxy'`` forces :func:`perplexity_proxy` on the ``text`` column;
        rows then say so in ``note`` (:data:`PROXY_LABEL`). Any monotone transform (e.g. log
        perplexity) gives the same taus.
    item, rater, kind, criterion, score, sample, text
        The table's column names, when they are not the canonical ones (:mod:`evalcore.arguments`).

    Returns
    -------
    pandas.DataFrame
        Columns ``section, judge, criterion, *by, measure, estimate, ci_low, ci_high, n,
        flagged, note``; ``section`` is ``'familiarity'``, ``n`` the number of items.
        Items without a perplexity are left out (counted in ``note``).

    Raises
    ------
    DataError
        No perplexity or text (:class:`BiasNotApplicable`), an unknown judge, a perplexity
        or segment that varies within an item, non-numeric scores.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = familiarity(ratings, n_boot=200, seed=0)
    >>> tau = table.query("measure == 'tau_difference' and criterion == 'OCQ'")
    >>> print(tau[["judge", "estimate", "ci_low", "ci_high", "flagged"]].round(2).to_string(index=False))
                  judge  estimate  ci_low  ci_high  flagged
    gpt-4/per-criterion     -0.23   -0.34    -0.14     True
      gpt-4/single-call      0.04   -0.09     0.18    False

    A table whose columns have other names, named by the column arguments, gives the same result:

    >>> mine = ratings.rename(columns={"item_id": "doc", "rater_kind": "who", "perplexity": "ppl"})
    >>> again = familiarity(mine, item="doc", kind="who", perplexity="ppl", n_boot=200, seed=0)
    >>> again["estimate"].equals(table["estimate"])
    True
    """
    n_boot, level = check_resamples(n_boot), check_level(level)
    split = split_scales(ratings)
    parts = []
    if split.numbers is not None:
        parts.append(_familiarity_numbers(split.numbers, by=by, judges=split.judges(split.numbers, judges),
                                          n_boot=n_boot, seed=seed, level=level, perplexity=perplexity))
    if split.categories is not None:
        parts.append(_familiarity_categories(split, by=by, judges=split.judges(split.categories, judges),
                                             n_boot=n_boot, seed=seed, level=level, perplexity=perplexity))
    return join_tables(parts)


def _familiarity_numbers(ratings: pd.DataFrame, *, by, judges, n_boot: int, seed, level: float,
                         perplexity: str | None) -> pd.DataFrame:
    """:func:`familiarity` on criteria with numbers."""
    root = root_seed(seed)
    prep = code_ratings(ratings, by=by, judges=judges)
    ppl, source_note = _item_perplexity(prep, perplexity)
    n_missing = np.bincount(prep.group[~np.isfinite(ppl)], minlength=len(prep.keys))
    top = np.full(len(prep.criteria), -np.inf)
    np.maximum.at(top, prep.crit, prep.score)
    table = SectionTable(FAMILIARITY, prep.by, n_boot=n_boot, level=level)
    for c, g, rows in _cells(prep, np.isfinite(ppl[prep.item])):
        crit, gkey = prep.criteria[c], prep.keys[g]
        extra = join_notes(source_note, f"{int(n_missing[g])} item(s) without a perplexity left out"
                           if n_missing[g] else "")
        cell = _Cell(prep.item[rows], ppl, top[c], n_boot, cell_rng(root, (FAMILIARITY, crit, *gkey)))
        h, score = prep.human[rows], prep.score[rows]
        human = _source_rows(table, cell, None, crit, gkey, _obs(cell.local[h], score[h]), extra)
        for name in prep.judges:
            j = ~h & (prep.rater[rows] == prep.judge_code[name])
            judge = _source_rows(table, cell, name, crit, gkey, _obs(cell.local[j], score[j]), extra)
            _differences(table, cell, name, crit, gkey, human, judge, extra)
    return table.frame()


# --------------------------------------------------------------------------- categories


def _familiarity_categories(split: ScaleSplit, *, by, judges, n_boot: int, seed, level: float,
                            perplexity: str | None) -> pd.DataFrame:
    """:func:`familiarity` on nominal criteria: per source and category the mean perplexity of the items given
    it, and per judge its difference from the humans' on the items both rated."""
    root = root_seed(seed)
    prep = code_ratings(split.categories, by=by, judges=judges)
    ppl, source_note = _item_perplexity(prep, perplexity)
    n_missing = np.bincount(prep.group[~np.isfinite(ppl)], minlength=len(prep.keys))
    table = SectionTable(FAMILIARITY, [*prep.by, CATEGORY], n_boot=n_boot, level=level)
    not_applicable(table, split.nominal)
    for c, g, rows in _cells(prep, np.isfinite(ppl[prep.item])):
        crit, gkey = prep.criteria[c], prep.keys[g]
        names = split.labels[crit]
        extra = join_notes(source_note, f"{int(n_missing[g])} item(s) without a perplexity left out"
                           if n_missing[g] else "")
        items, local = np.unique(prep.item[rows], return_inverse=True)
        local, n = local.ravel(), len(items)
        W = item_weights(cell_rng(root, (FAMILIARITY, "categories", crit, *gkey)), n, n_boot)
        code = prep.score[rows].astype(np.int64)
        used = np.unique(code)
        h = prep.human[rows]
        counts = {None: _category_counts(local[h], code[h], n, len(names))}
        for name in prep.judges:
            j = ~h & (prep.rater[rows] == prep.judge_code[name])
            counts[name] = _category_counts(local[j], code[j], n, len(names))
        for name, C in counts.items():
            if C.sum() > 0:
                _perplexity_rows(table, W, ppl[items], C, None, name, crit, gkey, used, names, extra)
        for name in prep.judges:
            both = (counts[name].sum(axis=1) > 0) & (counts[None].sum(axis=1) > 0)
            if counts[name].sum() > 0:
                _perplexity_rows(table, W, ppl[items], counts[name] * both[:, None], counts[None] * both[:, None],
                                 name, crit, gkey, used, names, extra)
    return table.frame()


def _category_counts(local: np.ndarray, code: np.ndarray, n: int, k: int) -> np.ndarray:
    """``(n, k)`` ratings of each category on each item of a cell."""
    return np.bincount(local * k + code, minlength=n * k).reshape(n, k).astype(float)


def _perplexity_rows(table: SectionTable, W: np.ndarray, p: np.ndarray, C: np.ndarray, Ch: np.ndarray | None,
                     name: str | None, crit: str, gkey: tuple, used: np.ndarray, names: tuple[str, ...],
                     extra: str) -> None:
    """Per category in ``used``: the mean perplexity of the ratings ``C`` (items x categories) given it,
    ``mean_perplexity``; with the humans' ratings ``Ch`` on the same items, that mean minus theirs,
    ``mean_perplexity_difference``."""
    mean = safe_div(W @ (C * p[:, None]), W @ C)  # (R, k): a ratio estimator over ratings, per resample
    measure, given = "mean_perplexity", C > 0
    who = "the humans give" if name is None else "the judge gives"
    if Ch is not None:
        mean = mean - safe_div(W @ (Ch * p[:, None]), W @ Ch)
        measure, given = "mean_perplexity_difference", (C > 0) | (Ch > 0)
        who = "the judge or the humans give"
    shared = Ch is None or (C.sum(axis=1) > 0).any()
    for k in used:
        why = (f"not defined: {who} '{names[k]}' on no item here" if shared else
               "not defined: no item in this group was rated by both the judge and humans")
        # A mean over a few items is no test: both means must rest on enough items (none: not defined).
        nj, nh = (0, 0) if Ch is None else (int((C[:, k] > 0).sum()), int((Ch[:, k] > 0).sum()))
        few = "" if not (nj and nh) else (category_untested(names[k], nj, "the judge gives") or
                                          category_untested(names[k], nh, "the humans give"))
        table.row(name, crit, (*gkey, names[k]), measure, mean[:, k], int(given[:, k].sum()), undefined=why,
                  note=extra, untested=few)


def _source_rows(table: SectionTable, cell: _Cell, name: str | None, crit: str, gkey: tuple, o: _Obs,
                 extra: str) -> tuple[_Obs, np.ndarray, np.ndarray]:
    """``kendall_tau`` and ``perplexity_gap_top_vs_rest`` of one source (``name`` None: the humans)."""
    tau, gap = cell.stats(o)
    n, who = int(o.items(cell.n).sum()), "human" if name is None else "judge"
    table.row(name, crit, gkey, "kendall_tau", tau, n, undefined=cell.why(o, "tau", who), note=extra)
    table.row(name, crit, gkey, "perplexity_gap_top_vs_rest", gap, n, undefined=cell.why(o, "gap", who), note=extra)
    return o, tau, gap


def _differences(table: SectionTable, cell: _Cell, name: str, crit: str, gkey: tuple, human: tuple,
                 judge: tuple, extra: str) -> None:
    """``tau_difference`` (the test) and ``gap_difference`` of one judge, on the items it and a human rated."""
    (oh, tau_h, gap_h), (oj, tau_j, gap_j) = human, judge
    has_h, has_j = oh.items(cell.n), oj.items(cell.n)
    both = has_h & has_j
    ohb, ojb = oh.keep(both), oj.keep(both)
    if np.array_equal(both, has_h) and np.array_equal(both, has_j):
        th, gh, tj, gj = tau_h, gap_h, tau_j, gap_j
    else:
        (th, gh), (tj, gj) = cell.stats(ohb), cell.stats(ojb)
    nb = int(both.sum())
    shared = "not defined: no item rated by both the judge and a human"
    w_tau = shared if nb == 0 else cell.why(ojb, "tau", "judge") if not np.isfinite(tj[0]) else \
        cell.why(ohb, "tau", "human")
    w_gap = shared if nb == 0 else cell.why(ojb, "gap", "judge") if not np.isfinite(gj[0]) else \
        cell.why(ohb, "gap", "human")
    table.row(name, crit, gkey, "tau_difference", tj - th, nb, undefined=w_tau, note=extra)
    table.row(name, crit, gkey, "gap_difference", gj - gh, nb, undefined=w_gap, note=extra)


@takes_table(RATINGS, "text")
def perplexity_by_score(
    ratings: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    perplexity: str | None = None,
    max_levels: int = 20,
) -> pd.DataFrame:
    """Mean perplexity of the items given each score, humans and each judge (Stureborg et al. Table 1, Fig. 2).

    For source s (the pooled human ratings, or one judge) and score value v on a criterion:
    :math:`\\bar p_{s,v} = \\sum_{(i,k): s_{ik}=v} p_i / N_{s,v}`, the mean perplexity over
    the ratings with that score, with an item-bootstrap interval at ``level`` (the same resamples
    for every source of a criterion and group). Lower bars at high scores for the judge
    than for the humans are the paper's familiarity bias.

    Parameters
    ----------
    ratings, by, judges, n_boot, seed, level, perplexity, item, rater, kind, criterion, score, sample, text
        As in :func:`familiarity`.
    max_levels
        A source with more distinct scores than this on a criterion (e.g. averaged or
        probability-weighted scores) is shown in ``max_levels`` equal-width bins of the
        criterion's range, ``score`` being the bin's centre (said in ``note``).

    Returns
    -------
    pandas.DataFrame
        Columns ``criterion, *by, source, score, mean_perplexity, ci_low, ci_high, n, note``;
        ``source`` is ``'humans'`` or the judge's name, ``n`` the number of ratings with that
        score; ``note`` carries :data:`PROXY_LABEL` when the perplexity is a proxy.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.read_csv("sample_data/ratings_multilingual.csv").query("language == 'English'")
    >>> table = perplexity_by_score(ratings, n_boot=200, seed=0).query("criterion == 'OCQ'")
    >>> print(table[["source", "score", "mean_perplexity", "n"]].round(1).to_string(index=False))
                 source  score  mean_perplexity   n
                 humans    0.0             20.7  43
                 humans    1.0             23.2  86
                 humans    2.0             22.4 214
    gpt-4/per-criterion    0.0             29.2   9
    gpt-4/per-criterion    1.0             27.6  23
    gpt-4/per-criterion    2.0             20.3  88
      gpt-4/single-call    0.0             20.8   4
      gpt-4/single-call    1.0             20.6  24
      gpt-4/single-call    2.0             22.9  92
    """
    n_boot, level, root = check_resamples(n_boot), check_level(level), root_seed(seed)
    prep = code_ratings(ratings, by=by, judges=judges)
    ppl, source_note = _item_perplexity(prep, perplexity)
    crange = {c: (float(prep.score[prep.crit == c].min()), float(prep.score[prep.crit == c].max()))
              for c in range(len(prep.criteria))}
    out = []
    for c, g, rows in _cells(prep, np.isfinite(ppl[prep.item])):
        key = {"criterion": prep.criteria[c], **dict(zip(prep.by, prep.keys[g]))}
        items, local = np.unique(prep.item[rows], return_inverse=True)
        local = local.ravel()
        n = len(items)
        p = ppl[items]
        W = item_weights(cell_rng(root, ("perplexity_by_score", prep.criteria[c], *prep.keys[g])), n, n_boot)
        Wt = np.ascontiguousarray(W.T)
        h = prep.human[rows]
        sources = [(HUMANS_LABEL, h)] + [(name, ~h & (prep.rater[rows] == prep.judge_code[name]))
                                         for name in prep.judges]
        for name, m in sources:
            sc = prep.score[rows][m]
            if len(sc) == 0:
                continue
            sc, bin_note = _binned(sc, *crange[c], max_levels)
            o = _obs(local[m], sc)
            C = sparse.csr_matrix((o.count, (o.local, o.code)), shape=(n, len(o.values))).T.tocsr()
            means = safe_div(np.asarray(C @ (Wt * p[:, None])), np.asarray(C @ Wt))  # (q, R)
            counts = np.asarray(C.sum(axis=1)).ravel()
            lo, hi, sparse_ci = percentile_interval(means[:, 1:], level)
            for k, val in enumerate(o.values):
                out.append({**key, "source": name, "score": float(val), "mean_perplexity": float(means[k, 0]),
                            "ci_low": float(lo[k]), "ci_high": float(hi[k]), "n": int(counts[k]),
                            "note": join_notes(SPARSE_NOTE if sparse_ci[k] else "", bin_note, source_note)})
    cols = ["criterion", *prep.by, "source", "score", "mean_perplexity", "ci_low", "ci_high", "n", "note"]
    return pd.DataFrame.from_records(out, columns=cols)


def _binned(sc: np.ndarray, lo: float, hi: float, max_levels: int) -> tuple[np.ndarray, str]:
    """Scores with more than ``max_levels`` distinct values as the centres of equal-width bins of ``lo..hi``."""
    if not (len(np.unique(sc)) > max_levels and hi > lo):
        return sc, ""
    width = (hi - lo) / max_levels
    sc = lo + (np.clip(np.floor((sc - lo) / width), 0, max_levels - 1) + 0.5) * width
    return sc, f"scores binned into {max_levels} equal-width bins; 'score' is the bin's centre"
