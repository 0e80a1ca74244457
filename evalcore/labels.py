"""The humans' label of an item: one convention for every analysis.

evalcore compares a judge with **one human label per item** (or per unit, an item on one
criterion), and that label is the **strict majority** of the human annotators' labels: the label
given by more than half of them. When no label has more than half the votes (``(a, b)``,
``(a, tie)`` with two annotators; ``(a, b, tie)`` with three), there is no strict majority.

* Agreement (:mod:`evalcore.pointwise.agreement`) compares the judge's score with the strict
  majority of the human scores; units without one are left out and counted in the note.
* Pairwise analyses (:mod:`evalcore.pairwise.pairs`) take the strict majority of the humans'
  verdicts over ``{a, b, tie}``: ``(b, tie, tie)`` is a tie, not a win for B. This is how the
  PandaLM authors count their label distribution (105 ties, 422 and 472 wins on the test set).
  For win rates (two outcomes) a strict-majority tie and "no strict majority" are both a tie.

Votes are counted per annotator: an annotator who judged an item several times (both
presentation orders) first gets one verdict of their own (swap and sum), then counts once.

The function works on category counts, so that it serves any label set and any number of
annotators, vectorised over items.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NO_MAJORITY", "strict_majority"]

#: The value :func:`strict_majority` gives where no category has more than half the votes.
NO_MAJORITY = -1


def strict_majority(counts) -> np.ndarray:
    """The category holding more than half of the votes, per row of ``counts``; -1 where none does.

    Parameters
    ----------
    counts
        Array ``(..., K)``: how many annotators gave each of ``K`` categories (items, or units,
        along the leading axes). Counts may be weighted (floats).

    Returns
    -------
    numpy.ndarray
        ``int64`` of shape ``counts.shape[:-1]``: the index of the category with
        ``count > total / 2``, or :data:`NO_MAJORITY` (-1) when no category has it, including
        rows without votes.

    Examples
    --------
    Three annotators on four items, categories ``(a, b, tie)``:

    >>> strict_majority([[1, 2, 0],    # (a, b, b): b
    ...                  [0, 1, 2],    # (b, tie, tie): tie
    ...                  [1, 1, 1],    # (a, b, tie): no strict majority
    ...                  [0, 0, 0]]).tolist()  # no votes
    [1, 2, -1, -1]

    Two annotators who disagree have no strict majority:

    >>> strict_majority([[1, 0, 1]]).tolist()
    [-1]
    """
    c = np.asarray(counts, dtype=float)
    if c.ndim == 0:
        raise ValueError("counts must have a category axis")
    total = c.sum(axis=-1)
    top = c.argmax(axis=-1) if c.shape[-1] else np.zeros(c.shape[:-1], dtype=np.int64)
    best = np.take_along_axis(c, top[..., None], axis=-1)[..., 0] if c.shape[-1] else np.zeros(c.shape[:-1])
    return np.where(best * 2 > total, top, NO_MAJORITY).astype(np.int64)
