"""The Win rates page's option widgets: the judges, ties and seed, and what the judges' accuracies are learnt
from (the prior data ratio, another pair's labels, or none). Kept here so that the page stays a list of sections."""

from __future__ import annotations

import streamlit as st

from ..columns import COMPARISONS
from ..pairwise.winrate import closest_pair, orient_like
from ..report.views import win_rates
from ..text import md
from .state import choice, choices, current_table, in_url

PRIOR_KINDS = {"ratio": "This pair's human labels", "ood": "Another pair's human labels", "none": "No human labels"}


def options(pairs, label: str) -> tuple[list, list, str, int]:
    """The expander of judges, ties and seed: (judges picked, all judges, ties, seed)."""
    with st.expander("Options: judges, ties, seed"):
        o1, o2, o3 = st.columns([4, 2, 1])
        all_judges = win_rates.pair_judges(pairs, label)
        judges = o1.multiselect("Judges", choices(f"wr_judges_{label}", all_judges, all_judges),
                                key=f"wr_judges_{label}")
        ties = o2.radio("Ties", ["drop", "random"], horizontal=True, key="wr_ties",
                        format_func={"drop": "leave out", "random": "coin flip"}.get,
                        help="A judge's verdict combines its rows on an item (swap and sum); a tie is left out "
                             "(a missing verdict, an unlabelled item) or broken by a seeded coin flip, as Gao et al. "
                             "do. The humans' majority is handled the same way.")
        seed = int(o3.number_input("Seed", 0, 2**31 - 1, 0, key="wr_seed", bind="query-params",
                                   help="Seeds the subset of human labels, the coin flips and the samplers."))
    return judges, all_judges, ties, seed


def ood_prior(col, pairs, label: str, a: str, b: str, ties: str, seed: int) -> str:
    """The pair whose labels give an out-of-distribution prior (default: the closest raw win rate)."""
    lookup = win_rates.pair_labels(pairs)
    frame = current_table(COMPARISONS)
    near = closest_pair(frame, a, b, ties=ties, seed=seed)
    labelled = win_rates.labelled_pairs(pairs)
    opts = [n for n in lookup if n != label and n in labelled]
    default = next((i for i, n in enumerate(opts) if near and set(lookup[n]) == set(near)), 0)
    other = col.selectbox("Prior from", choice(f"wr_ood_{label}", opts, opts[default] if opts else None),
                          key=f"wr_ood_{label}",
                          help="Default: the pair whose raw win rate is closest to this one's, as Gao et al. "
                               "choose it. It is read in the direction whose win rate is closer.")
    a2, b2 = orient_like(frame, a, b, lookup[other], ties=ties, seed=seed)
    col.caption(f"q0 and q1 from {md(a2)} vs {md(b2)}")
    return f"ood:{a2},{b2}"


def prior_picker(c2, c3, pairs, label: str, a: str, b: str, pair, ties: str, seed: int) -> tuple[str, float | None, str]:
    """What the judges' accuracies are learnt from: (kind, ratio or None, prior)."""
    kinds = dict(PRIOR_KINDS)
    if pair.n_human == 0:
        kinds.pop("ratio")
    if not [n for n in win_rates.labelled_pairs(pairs) if n != label]:
        kinds.pop("ood")  # no other pair has human labels to learn from
    kind = c2.radio("What the judges' accuracies are learnt from", **in_url("wr_prior_kind", list(kinds)),
                    format_func=kinds.get, horizontal=False,
                    help="Gao et al.'s three settings: in-distribution labels on a share of this pair's items "
                         "(the prior data ratio), an out-of-distribution prior from another pair's labels "
                         "(Eqs. 12-13), or none (q ~ Beta(2, 1)).")
    if kind == "ratio":
        ratio = c3.slider("Prior data ratio", 0.0, 1.0, 0.3, 0.05, key="wr_ratio", bind="query-params",
                          help="The share of this pair's human-labelled items whose labels the methods may use "
                               "(a seeded random subset; a higher ratio adds items to the subset).")
        c3.caption(f"{win_rates.labels_used(pair, ratio)} of {pair.n_human} human labels used")
        return kind, ratio, f"ratio:{ratio:g}"
    if kind == "ood":
        return kind, None, ood_prior(c3, pairs, label, a, b, ties, seed)
    c3.caption("No human labels: the Dawid-Skene model learns the accuracies from the judges' agreement alone. "
               "BWRS needs labels and does not run.")
    return kind, None, "none"
