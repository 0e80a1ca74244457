"""The scale of each criterion: nominal, ordinal or interval, and where a rating's category lives.

A ratings table says what kind of labels each criterion has with two optional columns:

``category``
    The label exactly as the file wrote it (text), on the rows of a criterion whose labels are
    categories: text labels, or numbers the user declared nominal. Null elsewhere. Labels are never
    merged or re-spelled: ``Yes`` and ``yes`` are two categories (``validate`` reports such pairs).
``scale``
    ``nominal``, ``ordinal`` or ``interval``, the same on every row of a criterion. Without the
    column every criterion is ordinal, the default for numbers, and everything behaves as before.

``score`` keeps the numbers: the rating on a numeric criterion (any scale), the position ``1..k`` in
the user's order on a text criterion declared ordinal (``--order C=bad,ok,good``), and null on a
nominal criterion of text labels. So an analysis that needs numbers reads ``score`` on the criteria
:func:`applies` allows, and an analysis of categories reads :func:`category_of`.

Which measures a scale allows (Krippendorff 2011; Stevens 1946): nominal labels allow counting
(agreement, kappa, AC1, PABAK, nominal alpha, F1, the confusion matrix, class shares); an order adds
weighted kappa, ordinal alpha and rank correlations; an interval adds interval alpha and means.
"""

from __future__ import annotations

import pandas as pd

NOMINAL = "nominal"
ORDINAL = "ordinal"
INTERVAL = "interval"
SCALES = (NOMINAL, ORDINAL, INTERVAL)
#: The scale of a criterion that declares none: numbers are taken as ordered.
DEFAULT_SCALE = ORDINAL

CATEGORY = "category"
SCALE = "scale"


def scale_by_criterion(ratings: pd.DataFrame, *, criterion: str = "criterion", scale: str = SCALE) -> dict[str, str]:
    """The scale of every criterion of ``ratings``, in the order the criteria first appear.

    Examples
    --------
    >>> frame = pd.DataFrame({"criterion": ["fluency", "stance", "stance"],
    ...                       "scale": ["ordinal", "nominal", "nominal"]})
    >>> scale_by_criterion(frame)
    {'fluency': 'ordinal', 'stance': 'nominal'}
    >>> scale_by_criterion(frame.drop(columns="scale"))
    {'fluency': 'ordinal', 'stance': 'ordinal'}
    """
    crits = ratings[criterion] if criterion in ratings else pd.Series("overall", index=ratings.index)
    if scale not in ratings:
        return {str(c): DEFAULT_SCALE for c in pd.unique(crits)}
    first = pd.DataFrame({"c": crits.astype(str), "s": ratings[scale].astype(str)}).drop_duplicates("c")
    return dict(zip(first["c"], first["s"]))


def has_categories(ratings: pd.DataFrame) -> bool:
    """Whether any criterion of ``ratings`` is nominal (its ratings are categories, not numbers)."""
    return SCALE in ratings and bool((ratings[SCALE] == NOMINAL).any())


def applies(measure_scale: str, data_scale: str) -> bool:
    """Whether a measure defined on ``measure_scale`` applies to data on ``data_scale``.

    A measure applies to data whose scale is at least as rich: nominal measures apply to every
    scale, ordinal ones to ordinal and interval data, interval ones to interval data only.

    >>> applies("nominal", "ordinal"), applies("ordinal", "nominal"), applies("interval", "ordinal")
    (True, False, False)
    """
    return SCALES.index(data_scale) >= SCALES.index(measure_scale)


def category_of(ratings: pd.DataFrame, *, score: str = "score") -> pd.Series:
    """Each rating as a category (text): ``category`` where the row has one, else the score as written
    by :func:`format_number` (``4.0`` reads ``4``). Null where the rating is missing.

    >>> frame = pd.DataFrame({"score": [4.0, 2.5, None], "category": [None, None, "yes"]})
    >>> category_of(frame).tolist()
    ['4', '2.5', 'yes']
    """
    out = ratings[score].map(format_number, na_action="ignore").astype("string")
    if CATEGORY in ratings:
        out = ratings[CATEGORY].astype("string").fillna(out)
    return out


def format_number(value: float) -> str:
    """A number as a label: integers without a decimal point, others as Python writes them."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
