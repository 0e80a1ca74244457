"""Win rates: what is the corrected number? (Gao et al. 2024, BWRS and Bayesian Dawid-Skene)"""

import streamlit as st

from evalcore.report import plots
from evalcore import ui
from evalcore.columns import COMPARISONS
from evalcore.pairwise.winrate import judges_table, mean_errors, results_frame

ui.page("Win rates", icon=":material/trophy:")
st.title("Win rates: what would humans have said?")
st.caption("A judge's raw win rate k is biased whenever the judge makes mistakes: k = p·q0 + (1−p)·(1−q1). "
           "BWRS and a Bayesian Dawid-Skene model estimate the true win rate p from the judges' verdicts and their "
           "accuracies q0, q1 (Gao et al. 2024), with 95% intervals.")

ui.require_table(COMPARISONS)


def _fmt(v: float) -> str:
    return "n/a" if v != v else f"{v:.3f}"


def _interval(r) -> str:
    return "no interval" if r.ci_low != r.ci_low else f"95% [{r.ci_low:.3f}, {r.ci_high:.3f}]"


with ui.guard("Calibrating the win rate"):
    table = ui.comparison_pairs()
    names = [f"{r.system_a} vs {r.system_b}" for r in table.itertuples()]
    lookup = dict(zip(names, zip(table["system_a"], table["system_b"])))

    c1, c2, c3 = st.columns([3, 3, 2])
    choice = c1.selectbox("System pair", names, key="wr_pair",
                          help="p is the share of items on which the first system is better.")
    a, b = lookup[choice]
    if c1.toggle("Swap the order", key="wr_swap", help="Show p for the second system instead."):
        a, b = b, a
    with st.expander("Options: judges, ties, seed"):
        o1, o2, o3 = st.columns([4, 2, 1])
        all_judges = [j.strip() for j in table.loc[names.index(choice), "judges"].split(",") if j.strip()]
        judges = o1.multiselect("Judges", all_judges, default=all_judges, key=f"wr_judges_{choice}")
        ties = o2.radio("Ties", ["drop", "random"], horizontal=True, key="wr_ties",
                        format_func={"drop": "leave out", "random": "coin flip"}.get,
                        help="A judge's verdict combines its rows on an item (swap and sum); a tie is left out "
                             "(a missing verdict, an unlabelled item) or broken by a seeded coin flip, as Gao et al. "
                             "do. The humans' majority is handled the same way.")
        seed = int(o3.number_input("Seed", 0, 2**31 - 1, 0, key="wr_seed",
                                   help="Seeds the subset of human labels, the coin flips and the samplers."))
    if not judges:
        st.info("Pick at least one judge.", icon=":material/info:")
        st.stop()
    jt = tuple(judges) if len(judges) < len(all_judges) else None
    pair = ui.pair_data(a, b, judges=jt, ties=ties, seed=seed)
    ui.warm_up_winrate()

    others = [n for n in names if n != choice]
    kinds = {"ratio": "This pair's human labels", "ood": "Another pair's human labels", "none": "No human labels"}
    if pair.n_human == 0:
        kinds.pop("ratio")
    if not others:
        kinds.pop("ood")
    kind = c2.radio("What the judges' accuracies are learnt from", list(kinds), format_func=kinds.get,
                    key="wr_prior_kind", horizontal=False,
                    help="Gao et al.'s three settings: in-distribution labels on a share of this pair's items "
                         "(the prior data ratio), an out-of-distribution prior from another pair's labels "
                         "(Eqs. 12-13), or none (q ~ Beta(2, 1)).")
    if kind == "ratio":
        ratio = c3.slider("Prior data ratio", 0.0, 1.0, 0.3, 0.05, key="wr_ratio",
                          help="The share of this pair's human-labelled items whose labels the methods may use "
                               "(a seeded random subset; a higher ratio adds items to the subset).")
        prior = f"ratio:{ratio:g}"
        c3.caption(f"{int(round(ratio * pair.n_human))} of {pair.n_human} human labels used")
    elif kind == "ood":
        from evalcore.pairwise.winrate import closest_pair, orient_like

        frame = ui.current_table(COMPARISONS)
        near = closest_pair(frame, a, b, ties=ties, seed=seed)
        opts = [n for n in others if table.loc[names.index(n), "n_human_rows"] > 0]
        default = next((i for i, n in enumerate(opts) if near and set(lookup[n]) == set(near)), 0)
        other = c3.selectbox("Prior from", opts, index=default, key=f"wr_ood_{choice}",
                             help="Default: the pair whose raw win rate is closest to this one's, as Gao et al. "
                                  "choose it. It is read in the direction whose win rate is closer.")
        a2, b2 = orient_like(frame, a, b, lookup[other], ties=ties, seed=seed)
        prior = f"ood:{a2},{b2}"
        c3.caption(f"q0 and q1 from {a2} vs {b2}")
    else:
        prior = "none"
        c3.caption("No human labels: the Dawid-Skene model learns the accuracies from the judges' agreement alone. "
                   "BWRS needs labels and does not run.")

    tab_pair, tab_all, tab_curve, tab_read = st.tabs(
        ["This pair", "All pairs", "Error vs human labels", "How to read this"], key="wr_tab", on_change="rerun")
    # Only the open tab runs (on_change="rerun"), so a slider move refits only what this tab shows.
    if tab_pair.open:
        with tab_pair:
            results = []
            for method in ("bwrs", "ds"):
                if method == "bwrs" and (kind == "none" or (kind == "ratio" and ratio == 0)):
                    continue
                results.append(ui.winrate(a, b, method=method, prior=prior, judges=jt, ties=ties, seed=seed))
            by_method = {r.method: r for r in results}
            m1, m2, m3, m4 = st.columns(4)
            m1.metric("Raw judge win rate k", _fmt(pair.k_observed), border=True,
                      help=f"Share of {int((pair.verdicts >= 0).sum()):,} judge verdicts preferring {a}, pooled over "
                           "judges (Gao et al. Eq. 4).")
            m2.metric("Humans' win rate", _fmt(pair.p_human), border=True,
                      help=f"Share of the {pair.n_human} items with a human majority on which humans prefer {a}; "
                           "over all human labels, whatever the slider says. This is the reference the estimates "
                           "should approach.")
            for col, method in ((m3, "bwrs"), (m4, "ds")):
                r = by_method.get(method)
                name = plots.METHOD_LABEL[method]
                if r is None:
                    col.metric(f"{name} p", "n/a", border=True,
                               help="BWRS needs human labels: raise the ratio or use another pair's labels.")
                    continue
                delta = None if pair.p_human != pair.p_human else f"{r.p_mode - pair.p_human:+.3f} vs humans"
                col.metric(f"{name} p (mode)", _fmt(r.p_mode), delta=delta, delta_color="off", delta_arrow="off",
                           border=True,
                           help=f"Posterior mode; mean {_fmt(r.p_mean)}; {_interval(r)}. "
                                + (f"{r.n_valid:,} of {r.n_samples:,} samples valid." if method == "bwrs" else
                                   f"R-hat {_fmt(r.rhat)}, ESS {r.ess:,.0f}, {r.n_samples:,} draws."))
                col.caption(_interval(r) + f" · {r.seconds:.2f} s")
            st.plotly_chart(plots.winrate_density_figure(results, k=pair.k_observed, p_human=pair.p_human),
                            key="wr_density")
            st.caption(f"Each curve is a method's posterior of p, the share of items on which {a} is better than {b}. "
                       "The dashed line is the raw judge win rate; the solid line what the humans said. A good "
                       "calibration moves the curve from the dashed line toward the solid one.")
            for r in results:
                for w in r.warnings:
                    st.warning(f"{plots.METHOD_LABEL[r.method]}: {w}", icon=":material/warning:")
            ds = by_method.get("ds")
            if ds is not None and not ds.warnings:
                st.caption(f"Dawid-Skene diagnostics: R-hat {ds.rhat:.3f} (at most 1.01 is good), bulk ESS of p "
                           f"{ds.ess:,.0f}, {ds.divergences} divergences.")

            st.subheader("How accurate is each judge on this pair?")
            acc = judges_table(results)
            acc["method"] = acc["method"].map(plots.METHOD_LABEL)
            labels = {"k": "k", "q0_mean": "q0", "q0_low": "q0 low", "q0_high": "q0 high", "q1_mean": "q1",
                      "q1_low": "q1 low", "q1_high": "q1 high", "p_mode": "judge's own p", "p_low": "own p low",
                      "p_high": "own p high"}
            config = {c: st.column_config.NumberColumn(t, format="%.3f") for c, t in labels.items()}
            config.update({"n_verdicts": "verdicts", "n0": "labels: A better", "s0": "judge agreed (A)",
                           "n1": "labels: B better", "s1": "judge agreed (B)", "p_mean": None, "n_valid": None})
            st.dataframe(acc, hide_index=True, column_config=config, key="wr_judges_table")
            st.caption(f"q0 = P(judge says {a} | {a} is better), q1 = P(judge says {b} | {b} is better): posterior means "
                       "with 95% intervals. The label counts are the human labels the method used (for an "
                       "out-of-distribution prior, the other pair's). 'judge's own p' is BWRS run on that judge alone.")
            d1, d2 = st.columns(2)
            with d1:
                ui.download_csv(results_frame(results),
                                file_name=f"winrate_{a}_vs_{b}.csv", label="Download the estimates", key="wr_dl_est")
            with d2:
                ui.download_csv(acc, file_name=f"judge_accuracy_{a}_vs_{b}.csv", label="Download the judge table",
                                key="wr_dl_acc")

    if tab_all.open:
        with tab_all:
            st.markdown("Every system pair at once, with the prior chosen above. Each pair uses its own human labels "
                        "(same ratio and seed) or, for 'another pair's labels', the pair whose raw win rate is closest.")
            g1, g2 = st.columns([2, 3])
            mode = g1.radio("Pairs", ["n vs n", "1 vs n"], horizontal=True, key="wr_all_mode",
                            help="n vs n: every pair in the file as it is oriented there. 1 vs n: every pair that "
                                 "includes a baseline, as each system's win rate against it.")
            systems = sorted(set(table["system_a"]) | set(table["system_b"]))
            baseline = None
            if mode == "1 vs n":
                baseline = g2.selectbox("Baseline", systems, key="wr_baseline")
            methods = [m for m in ("ds", "bwrs") if not (m == "bwrs" and (kind == "none" or
                                                                          (kind == "ratio" and ratio == 0)))]
            opts = dict(prior=prior if kind != "ood" else "ood:auto,auto", baseline=baseline, judges=jt,
                        ties=ties, seed=seed, ood_auto=kind == "ood")
            ready = all(ui.winrate_all_ready(method=m, **opts) for m in methods)
            if ready or st.button("Calibrate every pair", key="wr_all_go", type="primary",
                                  help="About a third of a second per pair and method."):
                allres = [r for m in methods for r in ui.winrate_all(method=m, **opts)]
                frame = results_frame(allres)
                st.plotly_chart(plots.forest_figure(frame), key="wr_forest")
                st.caption("Each row is a pair: the calibrated p (posterior mode) with its 95% interval per method, the "
                           "raw judge win rate (×) and, where humans labelled the pair, their win rate (|). Left of the "
                           "dotted line the second system is better.")
                errors = mean_errors(frame)
                if len(errors):
                    st.caption("Mean absolute error against the humans' p over pairs: "
                               + "; ".join(f"{plots.METHOD_LABEL[m]} {v:.3f}" for m, v in errors.items()) + ".")
                st.dataframe(frame, hide_index=True, key="wr_all_table",
                             column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in
                                            ("p_mode", "p_mean", "ci_low", "ci_high", "k_observed", "p_human", "rhat")})
                ui.download_csv(frame, file_name="winrates_all_pairs.csv", label="Download all pairs", key="wr_dl_all")
                bad = frame[frame["warnings"] != ""]
                if len(bad):
                    st.warning(f"{len(bad)} estimate(s) came with a warning; see the 'warnings' column.",
                               icon=":material/warning:")

    if tab_curve.open:
        with tab_curve:
            st.markdown("How many human labels does calibration need? For each prior data ratio from 0.1 to 1, both "
                        "methods are refitted on several random subsets of the human labels, and their error "
                        "against the humans' win rate (all labels) is averaged, as in Gao et al.'s Figure 2.")
            e1, e2 = st.columns([1, 2])
            every = e2.toggle("Average over every pair with human labels", key="wr_curve_all",
                              help="As in the paper's figure; takes one fit per pair for each ratio and subset.")
            repeats = int(e1.number_input("Random subsets per ratio", 1, 50, 5, key="wr_repeats",
                                          help="More subsets give smoother curves; each costs one fit per method."))
            ca, cb = (None, None) if every else (a, b)
            if not every and pair.n_human == 0:
                st.info("This pair has no human labels, so there is nothing to measure the error against.",
                        icon=":material/info:")
            else:
                key = {"a": ca, "b": cb, "judges": list(jt) if jt and ca is not None else None, "ties": ties,
                       "seed": seed, "repeats": repeats}
                if ui.has_result("winrate_curve", key) or st.button("Compute the error curve", key="wr_curve_go",
                                                                    type="primary"):
                    curve = ui.winrate_error_curve(ca, cb, judges=jt, ties=ties, seed=seed, repeats=repeats)
                    st.plotly_chart(plots.error_curve_figure(curve), key="wr_curve")
                    where = f"over {int(curve['n_pairs'].max())} pairs" if every else f"on {a} vs {b}"
                    st.caption(f"Mean absolute error {where} of each estimator over the subsets, with ±1 SD bars; "
                               "the dashed grey line is the raw judge win rate's error, which labels cannot change. "
                               "The error should fall as the ratio rises.")
                    ui.download_csv(curve, file_name="error_curve.csv", label="Download the curve",
                                    key="wr_dl_curve")

    if tab_read.open:
        with tab_read:
            st.markdown(
                """
**p, k, q0, q1.** p is the share of items on which humans prefer the first system. A judge's raw win rate
k mixes p with the judge's mistakes: k = p·q0 + (1−p)·(1−q1), where q0 is how often the judge picks the
first system when it is really better and q1 the same for the second. Unless q0 = q1 = 1, k is pulled
toward 0.5 (and further if the judge favours one side), so two systems can look closer, or further apart,
than they are.

**BWRS** (Bayesian Win Rate Sampling, Gao et al. Algorithm 1) draws k, q0 and q1 from Beta posteriors and
solves the equation above for p: p = (k + q1 − 1)/(q0 + q1 − 1). Draws that give p outside (0, 1) are dropped.
It needs human labels to learn q0 and q1, and it is fragile when a judge is near chance (q0 + q1 ≈ 1).

**Bayesian Dawid-Skene** (their Model 1) treats the true winner of each item as unknown and learns p and
every judge's q0, q1 together from how the judges agree with each other and with the human labels it is
given. Here the unknown winners are summed out exactly, so a fit takes a fraction of a second instead of the
authors' ten minutes; R-hat and ESS say whether the sampler converged.

**The prior data ratio** is the share of this pair's human labels the methods may use. With more labels the
accuracies are known better and the estimate moves toward the humans' own win rate: the error curve shows
how many labels are enough. Gao et al. found about 30% sufficient on most of their datasets, and the
posterior mode more accurate than the mean.

**Another pair's labels** (out-of-distribution prior) help when this pair has no labels but a similar one
does; the prior is scaled to a total weight of two labels so that it cannot dominate. It misleads when the
judges' accuracies differ between the pairs.
                """)
