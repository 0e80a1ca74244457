"""Win rates: what is the corrected number? (Gao et al. 2024, BWRS and Bayesian Dawid-Skene)

Each section, and the evalcore function that computes what it shows:

- :func:`controls` (with :mod:`evalcore.ui.winrate_controls`): the pairs are :func:`evalcore.pairwise.pairs.pairs` (``ui.comparison_pairs()``), one
  pair's verdicts :func:`evalcore.pairwise.pairs.pair_data` (``ui.pair_data``); the default
  out-of-distribution pair is :func:`evalcore.pairwise.winrate.closest_pair`, read as
  :func:`evalcore.pairwise.winrate.orient_like` says.
- :func:`pair_tab`: :func:`evalcore.pairwise.winrate.estimate` per method (``ui.WINRATE``), drawn by
  :func:`evalcore.report.plots.winrate_density_figure`; k and the humans' p are ``PairData.k_observed``
  and ``PairData.p_human``.
- :func:`accuracy_section`: :func:`evalcore.pairwise.winrate.judges_table` (via
  :func:`evalcore.report.views.win_rates.judges_by_method`) and :func:`evalcore.pairwise.winrate.results_frame`.
- :func:`all_pairs_tab`: :func:`evalcore.pairwise.winrate.estimate_all` (``ui.WINRATE_ALL``), drawn by
  :func:`evalcore.report.plots.forest_figure`, with :func:`evalcore.pairwise.winrate.mean_errors`.
- :func:`error_curve_tab`: :func:`evalcore.pairwise.winrate.error_curve` (``ui.WINRATE_CURVE``), drawn by
  :func:`evalcore.report.plots.error_curve_figure`.
- the last tab, :data:`evalcore.report.guide.WIN_RATES`: what p, k, q0, q1, BWRS, Dawid-Skene and the priors mean.
"""

from dataclasses import dataclass

import streamlit as st

from evalcore import ui
from evalcore.ui import winrate_controls
from evalcore.columns import COMPARISONS
from evalcore.data.sample import true_win_rate
from evalcore.pairwise.winrate import mean_errors, results_frame
from evalcore.report import display, guide, plots
from evalcore.report.views import win_rates
from evalcore.text import md

@dataclass(frozen=True)
class Selection:
    """What the controls chose: the pair (as shown), the judges (None: all), ties, seed and the prior."""

    label: str
    a: str
    b: str
    judges: tuple | None
    ties: str
    seed: int
    kind: str
    ratio: float | None
    prior: str

    @property
    def bwrs(self) -> bool:
        """BWRS runs only with human labels."""
        return not (self.kind == "none" or (self.kind == "ratio" and self.ratio == 0))

    def winrate(self, method: str):
        return ui.WINRATE.result(a=self.a, b=self.b, method=method, prior=self.prior, judges=self.judges,
                                 ties=self.ties, seed=self.seed)


def header() -> None:
    st.title("Win rates: what would humans have said?")
    st.caption("A judge's raw win rate k is biased whenever the judge makes mistakes: k = p·q0 + (1−p)·(1−q1). "
               "BWRS and a Bayesian Dawid-Skene model estimate the true win rate p from the judges' verdicts and "
               "their accuracies q0, q1 (Gao et al. 2024), with 95% intervals.")
    ui.how_to_read("winrate")


def controls(pairs) -> tuple[Selection, object]:
    """The pair, its options and the prior: the selection, and the pair's data."""
    c1, c2, c3 = st.columns([3, 3, 2])
    lookup = win_rates.pair_labels(pairs)
    # Open on the pair where calibration moves the win rate most (the demo-worthy one). Asked on every run, not
    # only the first (a cached result): a link without ?wr_pair= must open the same pair as the address bar drops.
    default = ui.informative_pair(lookup) if win_rates.labelled_pairs(pairs) else None
    label = c1.selectbox("System pair", **ui.in_url("wr_pair", list(lookup), default),
                         help="p is the share of items on which the first system is better. The page opens on the "
                              "pair whose calibrated win rate moves furthest from the raw one.")
    a, b = lookup[label]
    if c1.toggle("Swap the order", key="wr_swap", help="Show p for the second system instead."):
        a, b = b, a
    judges, all_judges, ties, seed = winrate_controls.options(pairs, label)
    if not judges:
        st.info("Pick at least one judge under **Options: judges, ties, seed**.", icon=":material/info:")
        st.stop()
    jt = tuple(judges) if len(judges) < len(all_judges) else None
    pair = ui.pair_data(a, b, judges=jt, ties=ties, seed=seed)
    ui.warm_up_winrate()
    kind, ratio, prior = winrate_controls.prior_picker(c2, c3, pairs, label, a, b, pair, ties, seed)
    return Selection(label, a, b, jt, ties, seed, kind, ratio, prior), pair


def metrics_row(sel: Selection, pair, by_method: dict) -> None:
    """k, the humans' p, and each method's calibrated p."""
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Raw judge win rate k", display.fmt_number(pair.k_observed), border=True,
              help=f"Share of {win_rates.verdict_count(pair):,} judge verdicts preferring {md(sel.a)}, pooled over "
                   "judges (Gao et al. Eq. 4).")
    m2.metric("Humans' win rate", display.fmt_number(pair.p_human), border=True,
              help=f"Share of the {pair.n_human} items with a human majority on which humans prefer {md(sel.a)}; "
                   "over all human labels, whatever the slider says. This is the reference the estimates "
                   "should approach.")
    for col, method in ((m3, "bwrs"), (m4, "ds")):
        r = by_method.get(method)
        name = display.METHOD_LABEL[method]
        if r is None:
            col.metric(f"{name} p", "n/a", border=True,
                       help="BWRS needs human labels: raise the ratio or use another pair's labels.")
            continue
        gap = win_rates.mode_minus_humans(r, pair)
        delta = None if gap is None else f"{gap:+.3f} vs humans"
        interval = display.fmt_interval(r.ci_low, r.ci_high, prefix="95% ")
        col.metric(f"{name} p (mode)", display.fmt_number(r.p_mode), delta=delta, delta_color="off", delta_arrow="off",
                   border=True,
                   help=f"Posterior mode; mean {display.fmt_number(r.p_mean)}; {interval}. "
                        + (f"{r.n_valid:,} of {r.n_samples:,} samples valid." if method == "bwrs" else
                           f"R-hat {display.fmt_number(r.rhat)}, ESS {r.ess:,.0f}, {r.n_samples:,} draws."))
        col.caption(interval + f" · {r.seconds:.2f} s")


def pair_tab(sel: Selection, pair) -> None:
    """This pair: the metrics, the posteriors of p, their warnings and diagnostics."""
    results = [sel.winrate(method) for method in ("bwrs", "ds") if method != "bwrs" or sel.bwrs]
    by_method = {r.method: r for r in results}
    metrics_row(sel, pair, by_method)
    truth = true_win_rate(sel.a, sel.b) if ui.is_sample() else None
    ui.figure(plots.winrate_density_figure(results, k=pair.k_observed, p_human=pair.p_human, truth=truth),
                    key="wr_density")
    if truth is not None:
        st.caption(f"The sample data is simulated: the dotted line is the true p ({truth:.2f}) it was generated "
                   "with (sample_data/README.md), which no method sees.")
    st.caption(f"Each curve is a method's posterior of p, the share of items on which {md(sel.a)} is better than "
               f"{md(sel.b)}. The dashed line is the raw judge win rate; the solid line what the humans said. A good "
               "calibration moves the curve from the dashed line toward the solid one.")
    for r in results:
        for w in r.warnings:
            st.warning(f"{display.METHOD_LABEL[r.method]}: {md(w)}", icon=":material/warning:")
    ds = by_method.get("ds")
    if ds is not None and not ds.warnings:
        st.caption(f"Dawid-Skene diagnostics: R-hat {ds.rhat:.3f} (at most 1.01 is good), bulk ESS of p "
                   f"{ds.ess:,.0f}, {ds.divergences} divergences.")
    accuracy_section(sel, results)


def accuracy_section(sel: Selection, results: list) -> None:
    """Each judge's accuracies q0, q1 on this pair, and the downloads."""
    a, b = sel.a, sel.b
    st.subheader("How accurate is each judge on this pair?")
    acc = win_rates.judges_by_method(results)
    st.dataframe(win_rates.judges_by_method_view(acc, a=a, b=b), hide_index=True, key="wr_judges_table")
    st.caption(f"q0 = P(judge says {md(a)} | {md(a)} is better), q1 = P(judge says {md(b)} | {md(b)} is better): "
               "posterior means "
               "with 95% intervals. The label counts are the human labels the method used (for an "
               "out-of-distribution prior, the other pair's). 'judge's own p' is BWRS run on that judge alone.")
    d1, d2 = st.columns(2)
    with d1:
        ui.download_csv(results_frame(results),
                        file_name=f"winrate_{a}_vs_{b}.csv", label="Download the estimates", key="wr_dl_est")
    with d2:
        ui.download_csv(acc, file_name=f"judge_accuracy_{a}_vs_{b}.csv", label="Download the judge table",
                        key="wr_dl_acc")


def all_pairs_tab(sel: Selection, pairs) -> None:
    """Every pair (n vs n) or every pair with a baseline (1 vs n), calibrated on a button press."""
    st.markdown("Every system pair at once, with the prior chosen above. Each pair uses its own human labels "
                "(same ratio and seed) or, for 'another pair's labels', the pair whose raw win rate is closest.")
    g1, g2 = st.columns([2, 3])
    mode = g1.radio("Pairs", ["n vs n", "1 vs n"], horizontal=True, key="wr_all_mode",
                    help="n vs n: every pair in the file as it is oriented there. 1 vs n: every pair that "
                         "includes a baseline, as each system's win rate against it.")
    baseline = (g2.selectbox("Baseline", ui.choice("wr_baseline", win_rates.systems(pairs)), key="wr_baseline")
                if mode == "1 vs n" else None)
    methods = [m for m in ("ds", "bwrs") if m != "bwrs" or sel.bwrs]
    opts = dict(prior=sel.prior if sel.kind != "ood" else "ood:auto,auto", baseline=baseline, judges=sel.judges,
                ties=sel.ties, seed=sel.seed, ood_auto=sel.kind == "ood")
    ready = all(ui.WINRATE_ALL.ready(method=m, **opts) for m in methods)
    if ready or st.button("Calibrate every pair", key="wr_all_go", type="primary",
                          help="About a third of a second per pair and method."):
        all_pairs_results(results_frame([r for m in methods for r in ui.WINRATE_ALL.result(method=m, **opts)]))


def all_pairs_results(frame) -> None:
    ui.figure(plots.forest_figure(frame), key="wr_forest")
    st.caption("Each row is a pair: the calibrated p (posterior mode) with its 95% interval per method, the "
               "raw judge win rate (×) and, where humans labelled the pair, their win rate (|). Left of the "
               "dotted line the second system is better.")
    errors = mean_errors(frame)
    if len(errors):
        st.caption("Mean absolute error against the humans' p over pairs: "
                   + "; ".join(f"{display.METHOD_LABEL[m]} {v:.3f}" for m, v in errors.items()) + ".")
    st.dataframe(frame, hide_index=True, key="wr_all_table",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in
                                ("p_mode", "p_mean", "ci_low", "ci_high", "k_observed", "p_human", "rhat")})
    ui.download_csv(frame, file_name="winrates_all_pairs.csv", label="Download all pairs", key="wr_dl_all")
    n_warned = win_rates.with_warnings(frame)
    if n_warned:
        st.warning(f"{n_warned} estimate(s) came with a warning:\n\n"
                   + "\n".join(f"- {md(line)}" for line in win_rates.warning_lines(frame)), icon=":material/warning:")


def error_curve_tab(sel: Selection, pair) -> None:
    """Gao et al.'s Figure 2: the error against the prior data ratio, on a button press."""
    st.markdown("How many human labels does calibration need? For each prior data ratio from 0.1 to 1, both "
                "methods are refitted on several random subsets of the human labels, and their error "
                "against the humans' win rate (all labels) is averaged, as in Gao et al.'s Figure 2.")
    e1, e2 = st.columns([1, 2])
    every = e2.toggle("Average over every pair with human labels", key="wr_curve_all",
                      help="As in the paper's figure; takes one fit per pair for each ratio and subset.")
    repeats = int(e1.number_input("Random subsets per ratio", 1, 50, 5, key="wr_repeats",
                                  help="More subsets give smoother curves; each costs one fit per method."))
    if not every and pair.n_human == 0:
        st.info("This pair has no human labels, so there is nothing to measure the error against.",
                icon=":material/info:")
        return
    opts = dict(a=None if every else sel.a, b=None if every else sel.b, judges=sel.judges, ties=sel.ties,
                seed=sel.seed, repeats=repeats)
    if ui.WINRATE_CURVE.ready(**opts) or st.button("Compute the error curve", key="wr_curve_go", type="primary"):
        curve = ui.WINRATE_CURVE.result(**opts)
        ui.figure(plots.error_curve_figure(curve), key="wr_curve")
        where = f"over {win_rates.curve_pairs(curve)} pairs" if every else f"on {md(sel.a)} vs {md(sel.b)}"
        st.caption(f"Mean absolute error {where} of each estimator over the subsets, with ±1 SD bars; "
                   "the dashed grey line is the raw judge win rate's error, which labels cannot change. "
                   "The error should fall as the ratio rises.")
        ui.download_csv(curve, file_name="error_curve.csv", label="Download the curve", key="wr_dl_curve")


def main() -> None:
    header()
    ui.require_table(COMPARISONS)
    with ui.guard("Calibrating the win rate"):
        pairs = ui.comparison_pairs()
        sel, pair = controls(pairs)
        # Only the open tab runs, so a slider move refits only what this tab shows.
        ui.lazy_tabs("wr_tab", {"This pair": lambda: pair_tab(sel, pair),
                                "All pairs": lambda: all_pairs_tab(sel, pairs),
                                "Error vs human labels": lambda: error_curve_tab(sel, pair),
                                "How to read this": lambda: st.markdown(guide.WIN_RATES)})


main()
