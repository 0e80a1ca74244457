"""Style control of a systems leaderboard: the Bradley-Terry scores with length (and markdown) held fixed.

A rater who prefers longer or more formatted answers gives the verbose system a higher Bradley-Terry score.
Chatbot Arena's style-controlled leaderboard (Li et al. 2024, "Does style matter? Disentangling style and
substance in Chatbot Arena", lmsys.org blog; FastChat's ``preprocess_for_style``, ``fit_contextual_bt`` and
``compute_style_control``) adds the battle's style differences to the regression,

.. math:: \\operatorname{logit} P(a \\succ b) = s_a - s_b + \\sum_f \\gamma_f \\, x_f,

and reads the scores :math:`s` with the style held fixed, and the coefficients :math:`\\gamma_f` as how much the
rater rewards style. evalcore fits it with the core fit of :func:`evalcore.pairwise.bradley_terry.fit_bt`
(unpenalised, as every leaderboard fit here; FastChat adds an L2 penalty of 0.5 on every parameter).

Features (``style``):

``length``
    The normalised length difference :math:`(l_a - l_b) / (l_a + l_b + 1)`, the +1 as FastChat adds it (two
    empty outputs give 0). :math:`l` is taken from ``length_a``/``length_b`` when the table has them, else the
    number of **characters** of ``text_a``/``text_b`` (FastChat counts gpt-3.5-turbo tokens; the ratio is
    nearly the same in either unit), else ``superficial_a``/``superficial_b``, where the column mapping puts a
    file's ``length_a``/``len_a`` columns (a superficial score that is not a length would be misread: give the
    texts or ``length_a``/``length_b`` instead).
``length+markdown``
    Also the headers, list items and bold spans of each text, as FastChat's ``add_markdown_info`` counts them
    after removing fenced code blocks (a header is a line opening with 1 to 6 ``#`` and a space, a list item a
    line opening with ``1.`` or ``-``, ``*``, ``+`` and a space, bold ``**...**`` or ``__...__`` on one line),
    each as the normalised difference :math:`(c_a - c_b) / (c_a + c_b + 1)` (FastChat's ``apply_ratio`` of 1
    for every feature). Needs the texts.

Scaling. Each feature is divided by its standard deviation over the items (one value per item and system
pair), the same for every source and resample, so that a coefficient is the logit per standard deviation and
the sources' coefficients can be compared. FastChat also subtracts the mean; evalcore does not: its battles are
oriented by the systems' sorted order (FastChat's at random), so the mean difference is not 0 by design, and
subtracting it would add a constant advantage of the first-named system to every battle. A feature that does not
vary has no coefficient (a note says so) and is left out of the regression.

The ratio ``style_ratio_<feature>``, the judge's coefficient over the humans', reads "this judge rewards length
k times as much as the humans do"; its interval comes from the same (paired) resamples of items.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import pandas as pd

from ..columns import HUMANS_LABEL
from ..errors import DataError
from ..stats.bootstrap import check_level, percentile_interval
from .battles import LEADERBOARD_COLUMNS, Battles

__all__ = ["STYLES", "MARKDOWN_FEATURES", "available_styles", "markdown_counts", "style_covariates", "style_lengths", "style_ratios"]

#: The style covariates ``--style`` offers.
STYLES = ("length", "length+markdown")
#: The markdown elements counted with ``length+markdown``, in the features' order.
MARKDOWN_FEATURES = ("header", "list", "bold")
# Why: fenced code is not prose formatting; FastChat drops it before counting.
_FENCE = re.compile(r"```[^`]*```")
_PATTERNS = {
    "header": (re.compile(r"^#{1,6}\s", re.MULTILINE),),
    "list": (re.compile(r"^\s*\d+\.\s", re.MULTILINE), re.compile(r"^\s*[-*+]\s", re.MULTILINE)),
    "bold": (re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__")),
}


def markdown_counts(text: object) -> dict[str, int]:
    """The headers, list items and bold spans of one text, fenced code blocks removed (module docstring).

    Examples
    --------
    >>> markdown_counts("# Plan\\n1. first\\n- **second**\\n```\\n# not a header\\n```")
    {'header': 1, 'list': 2, 'bold': 1}
    >>> markdown_counts(None)
    {'header': 0, 'list': 0, 'bold': 0}
    """
    s = _FENCE.sub("", text if isinstance(text, str) else "")
    return {name: sum(len(p.findall(s)) for p in pats) for name, pats in _PATTERNS.items()}


def available_styles(comparisons: pd.DataFrame) -> tuple[str, ...]:
    """The styles this comparisons table can control for: ``length`` with the outputs' lengths (``length_a/_b``,
    ``text_a/_b`` or ``superficial_a/_b``), ``length+markdown`` with their texts.

    >>> available_styles(pd.DataFrame({"text_a": ["# a"], "text_b": ["b"]})), available_styles(pd.DataFrame())
    (('length', 'length+markdown'), ())
    """
    cols = set(comparisons.columns)
    if not any({f"{c}_a", f"{c}_b"} <= cols for c in ("length", "text", "superficial")):
        return ()
    return STYLES if {"text_a", "text_b"} <= cols else STYLES[:1]


def style_lengths(comparisons: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, str]:
    """The lengths of output a and b on every row, and where they come from (module docstring).

    Examples
    --------
    >>> la, lb, source = style_lengths(pd.DataFrame({"text_a": ["abc", None], "text_b": ["a", "xy"]}))
    >>> la.tolist(), lb.tolist(), source
    ([3.0, nan], [1.0, 2.0], 'characters of text_a/text_b')
    """
    cols = set(comparisons.columns)
    for a, b, source in (("length_a", "length_b", "length_a/length_b"),
                         ("text_a", "text_b", "characters of text_a/text_b"),
                         ("superficial_a", "superficial_b", "superficial_a/superficial_b (given lengths)")):
        if {a, b} <= cols:
            if a.startswith("text"):
                la, lb = (comparisons[c].astype("string").str.len() for c in (a, b))
            else:
                la, lb = (pd.to_numeric(comparisons[c], errors="coerce") for c in (a, b))
            return la.to_numpy(dtype=float, na_value=np.nan), lb.to_numpy(dtype=float, na_value=np.nan), source
    raise DataError("style control needs the outputs' lengths, and this table has neither text_a/text_b nor "
                    "length_a/length_b", fix="map the outputs' texts to text_a/text_b, or their lengths to "
                    "length_a/length_b")


def _normalised(x_a: np.ndarray, x_b: np.ndarray) -> np.ndarray:
    """FastChat's normalised difference (x_a - x_b) / (x_a + x_b + 1)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x_a - x_b) / (x_a + x_b + 1.0)


def _row_features(comparisons: pd.DataFrame, rows: np.ndarray, style: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """The raw normalised differences (len(rows), f) of the given rows, oriented as each row names a and b."""
    if style not in STYLES:
        raise DataError(f"unknown style control {style!r}", fix="use " + " or ".join(repr(s) for s in STYLES))
    sub = comparisons.iloc[rows]
    la, lb, _ = style_lengths(sub)
    cols = [_normalised(la, lb)]
    names: tuple[str, ...] = ("length",)
    if style == "length+markdown":
        if not {"text_a", "text_b"} <= set(comparisons.columns):
            raise DataError("markdown style control counts headers, lists and bold text in the outputs, and this "
                            "table has no text_a/text_b", fix="map the outputs' texts to text_a/text_b, or use "
                            "style 'length'")
        ca = pd.DataFrame([markdown_counts(t) for t in sub["text_a"]], columns=list(MARKDOWN_FEATURES))
        cb = pd.DataFrame([markdown_counts(t) for t in sub["text_b"]], columns=list(MARKDOWN_FEATURES))
        cols += [_normalised(ca[f].to_numpy(float), cb[f].to_numpy(float)) for f in MARKDOWN_FEATURES]
        names += MARKDOWN_FEATURES
    return np.column_stack(cols), names


def style_covariates(comparisons: pd.DataFrame, bt: Battles, *, style: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """The style features of every battle, divided by their standard deviation over the items.

    Parameters
    ----------
    comparisons
        The comparisons table ``bt`` was read from.
    bt
        Its battles (:func:`evalcore.pairwise.battles.battles`).
    style
        ``"length"`` or ``"length+markdown"`` (module docstring).

    Returns
    -------
    tuple
        ``(X, names)``: ``X`` is ``(n_battles, f)``, oriented as the battle (``systems[a]`` against
        ``systems[b]``); a feature that does not vary over the items is 0 (it has no coefficient). A battle
        whose length is unknown raises a :class:`~evalcore.errors.DataError`.

    Examples
    --------
    >>> from evalcore.pairwise.battles import battles
    >>> comparisons = pd.read_csv("sample_data/comparisons_pairwise.csv")
    >>> bt = battles(comparisons)
    >>> X, names = style_covariates(comparisons, bt, style="length")
    >>> X.shape == (len(bt.a), 1), names
    (True, ('length',))
    """
    rows = np.asarray(bt.row, dtype=np.int64)
    uniq, inv = np.unique(rows, return_inverse=True)
    raw, names = _row_features(comparisons, uniq, style)
    # Why: a battle is oriented by the systems' sorted order; its row may name the pair the other way round.
    named_a = comparisons["system_a"].astype(str).to_numpy()[rows]
    sign = np.where(named_a == np.asarray(bt.systems, dtype=object)[bt.a], 1.0, -1.0)
    X = raw[inv.ravel()] * sign[:, None]
    unknown = ~np.isfinite(X).all(axis=1)
    if unknown.any():
        raise DataError(f"{int(unknown.sum())} of {len(X)} battles have an output of unknown length, and style "
                        "control needs the length of every output", fix="fill in the missing texts (or lengths), "
                        "or leave those rows out of the file")
    # One value per item and pair: every rater of an item sees the same two outputs.
    _, first = np.unique(np.column_stack([bt.item, bt.a, bt.b]), axis=0, return_index=True)
    sd = X[first].std(axis=0) if len(first) else np.zeros(X.shape[1])
    sd = np.where(sd > 0, sd, np.inf)  # a feature that does not vary becomes 0: it has no coefficient
    return X / sd, names


def style_ratios(sources: Sequence[str], features: Sequence[str], coef: np.ndarray, *, n: Sequence[int],
                 level: float = 0.95) -> pd.DataFrame:
    """How many times as much as the humans each judge rewards each style feature, with a paired interval.

    The ratio :math:`\\gamma^{judge}_f / \\gamma^{humans}_f` of the style coefficients (module docstring), on the
    data and on every resample; the interval is the percentile interval of the resamples' ratios
    (:func:`evalcore.stats.bootstrap.percentile_interval`), paired because every source is fitted on the same
    resampled items. A ratio of 2 reads "this judge rewards length twice as much as the humans do"; a negative
    one, that the judge rewards what the humans penalise (or the reverse). When the humans' own coefficient is not
    distinguishable from 0 (its interval includes 0) the ratio is unstable, and the note says so.

    Parameters
    ----------
    sources
        The sources (:attr:`evalcore.pairwise.battles.Battles.sources`), the humans among them.
    features
        The features' names (:func:`style_covariates`).
    coef
        ``(S, 1 + B, f)``: per source, the coefficients of the data fit (row 0) and of each resample.
    n
        ``(S,)`` the items behind each source's fit.
    level
        The confidence level.

    Returns
    -------
    pandas.DataFrame
        ``rater, system, measure, estimate, ci_low, ci_high, n, note``: per judge and feature, ``system`` "" and
        ``measure`` ``style_ratio_<feature>``; ``n`` the items behind both fits (the smaller count). Empty without
        the humans.

    Examples
    --------
    >>> coef = np.array([[[0.5], [0.4], [0.6], [0.5]], [[1.0], [1.0], [1.1], [0.9]]])
    >>> r = style_ratios(["humans", "gpt-4"], ["length"], coef, n=[100, 100], level=0.5)
    >>> r[["rater", "measure", "estimate"]].to_dict("records")
    [{'rater': 'gpt-4', 'measure': 'style_ratio_length', 'estimate': 2.0}]
    """
    level = check_level(level)
    coef = np.asarray(coef, dtype=float)
    sources = list(sources)
    if coef.ndim != 3 or coef.shape[0] != len(sources) or coef.shape[2] != len(features):
        raise DataError(f"the coefficients must be (sources, 1 + resamples, features) = ({len(sources)}, 1 + B, "
                        f"{len(features)}), not {coef.shape}", fix="stack each source's data and resample fits")
    if HUMANS_LABEL not in sources:
        return pd.DataFrame(columns=list(LEADERBOARD_COLUMNS))
    h = sources.index(HUMANS_LABEL)
    B = coef.shape[1] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = coef / coef[h][None]
    ratio[~np.isfinite(ratio)] = np.nan
    nan = np.full(len(features), np.nan)
    h_lo, h_hi, _ = percentile_interval(coef[h, 1:].T, level) if B else (nan, nan, None)
    out = []
    for s in (s for s in range(len(sources)) if s != h):
        lo, hi, _ = percentile_interval(ratio[s, 1:].T, level) if B else (nan, nan, None)
        for j, name in enumerate(features):
            out.append({"rater": sources[s], "system": "", "measure": f"style_ratio_{name}",
                        "estimate": ratio[s, 0, j], "ci_low": lo[j], "ci_high": hi[j], "n": min(n[s], n[h]),
                        "note": _ratio_note(name, ratio[s, 0, j], h_lo[j], h_hi[j], B)})
    return pd.DataFrame(out, columns=list(LEADERBOARD_COLUMNS))


def _ratio_note(name: str, ratio: float, h_lo: float, h_hi: float, n_boot: int) -> str:
    """Why a ratio is missing, or why it should be read with care."""
    if not np.isfinite(ratio):
        return f"no ratio: the humans' or the judge's {name} coefficient is 0 or not defined"
    if n_boot == 0:
        return "no interval (n_boot=0)"
    if not np.isfinite(h_lo):
        return "no interval: the measure is undefined in most resamples"
    if h_lo <= 0 <= h_hi:
        return (f"the humans' {name} coefficient is not distinguishable from 0 (its interval includes 0), so the "
                "ratio is unstable")
    return ""
