"""The Superficial quality page's length-controlled section: AlpacaEval's length-controlled win rate beside the
raw and subtracted ones, also for a verdicts-only file (PandaLM), which has no score to subtract from. Kept here so
that the page stays a list of sections."""

from __future__ import annotations

from typing import Mapping, Sequence

import streamlit as st

from ..columns import COMPARISONS
from ..pairwise import superficial as sp
from ..report import guide
from ..report.views import common, superficial_quality
from .analyses import LENGTH_CONTROLLED
from .state import download_csv, in_url


def length_controlled_section(frame, *, judge: str, q: str, n_boot: int, seed: int, alpha: float,
                              alphas: Sequence[float]) -> None:
    """:func:`evalcore.pairwise.superficial.length_controlled` of one judge (``ui.LENGTH_CONTROLLED``), at every
    alpha of the slider's grid ``alphas`` so that a slider move only selects rows; shown at ``alpha``."""
    st.subheader("The length-controlled alternative (AlpacaEval)")
    if not {"system_a", "system_b"} <= set(frame.columns):
        st.info("The length-controlled win rate compares systems, and this dataset does not name them (columns "
                "system_a and system_b; LLMBar's outputs have no system). The accuracy above is the comparison "
                "that applies here.", icon=":material/info:")
        return
    lc = LENGTH_CONTROLLED.result(judge=judge, alphas=tuple(alphas), q=q, n_boot=n_boot, seed=seed)
    st.dataframe(superficial_quality.length_controlled_view(lc, alpha), hide_index=True)
    st.caption(guide.CAPTIONS["superficial_length_controlled"])
    download_csv(lc, file_name="length_controlled.csv", label="Download (CSV)", key="sq_dl_lc")


def verdicts_only(frame, kind: str) -> bool:
    """Whether the length-controlled win rate applies without judge scores: systems, verdicts and a length."""
    return (kind == COMPARISONS and {"system_a", "system_b"} <= set(frame.columns) and bool(common.judge_names(frame))
            and bool(sp.q_options(frame)))


def verdicts_only_section(frame, *, q_label: Mapping[str, str], alphas: Sequence[float], alpha: float) -> None:
    """A verdicts-only file (PandaLM): no score to subtract from, but AlpacaEval's length control applies."""
    c1, c2, c3 = st.columns([3, 3, 2])
    judge = c1.selectbox("Judge", **in_url("sq_judge", common.judge_names(frame)))
    q = c2.selectbox("Length measure Q", **in_url("sq_q", sp.q_options(frame)),
                     format_func=lambda v: q_label.get(v, v))
    n_boot = int(c3.select_slider("Bootstrap resamples", [200, 500, 1000, 2000], value=1000, key="sq_boot",
                                  bind="query-params"))
    length_controlled_section(frame, judge=judge, q=q, n_boot=n_boot, seed=0, alpha=alpha, alphas=alphas)
