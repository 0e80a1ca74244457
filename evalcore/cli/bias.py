"""``evalcore bias``: familiarity, score distribution, anchoring and self-consistency of judges."""

from __future__ import annotations

import argparse
import json
import math
import sys

from .options import add_audit_args, fit_width, load_table, records, text_table, wrap

#: The flag rule in one sentence, as the text output and the README state it.
RULE = ("flagged = a bias: a bootstrap test in the direction that means harm (one-sided; two-sided for score skew "
        "and mean shift), Benjamini-Hochberg q <= {alpha:g} across all {n} tests of this report")
#: What the text output adds where a criterion is nominal: its rows about one category name it.
CATEGORIES = ("category shares and the mean perplexity per category (nominal criteria) are tested two-sided; each "
              "row names its category")


def _pq(frame):
    """p and q to 2 significant digits, for the terminal."""
    fmt = (lambda v: "" if math.isnan(v) else f"{v:.2g}")
    return frame.assign(p_value=frame["p_value"].map(fmt), q_value=frame["q_value"].map(fmt))


def run(args: argparse.Namespace) -> int:
    """The bias audit: flagged results and what to do, or every record as JSON."""
    from ..pointwise.bias_report import BiasReport, bias_report
    from ..pointwise.scale_use import stray_scores

    ing = load_table(args, "ratings")
    by = [] if args.by in (None, ["none"]) else args.by
    rep = BiasReport(bias_report(ing.frame, by=by, judges=args.judge, n_boot=args.boot, seed=args.seed,
                                 alpha=args.alpha), notes=tuple(stray_scores(ing.frame).values()))
    if args.json:
        json.dump(records(rep.records), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    res = rep.results
    n_tests = int(res["p_value"].notna().sum())
    w(wrap(f"bias audit of {ing.source}" + (f", grouped by {', '.join(by)}" if by else "")
           + f"; {args.boot} bootstrap resamples (seed {args.seed})") + "\n" + wrap(RULE.format(alpha=args.alpha,
                                                                                      n=n_tests)) + "\n")
    if "category" in res.columns:
        w(wrap(CATEGORIES) + "\n")
    for section, reason in rep.skipped:
        w(wrap(f"skipped {section}: {reason}") + "\n")
    for section, _, reason in rep.not_applicable:
        w(wrap(f"{section}: {reason}") + "\n")
    for note in rep.notes:
        w(wrap(f"note: {note}") + "\n")
    flagged = res[res["flagged"]]
    w(f"\n{len(flagged)} flagged result(s) out of {n_tests} tests ({len(res)} results)\n")
    if len(flagged):
        w(text_table(fit_width(_pq(flagged.drop(columns=["flagged", "opposite"])))) + "\n")
    other = res[res["opposite"]]
    if len(other):
        w(f"\n{len(other)} result(s) significant in the other direction (not a bias):\n")
        # Their p and q are those of the test in the direction of harm (near 1): not shown.
        w(text_table(fit_width(other.drop(columns=["flagged", "opposite", "p_value", "q_value"]))) + "\n")
    if len(rep.recommendations):
        w("\nwhat to do:\n")
        for r in rep.recommendations.itertuples():
            w(wrap(f"- {r.finding} ({r.judges}) -> {r.recommendation} [{r.source}]") + "\n")
    return 0


def add_parser(sub) -> None:
    """Declare ``bias`` on the subcommand parsers ``sub``."""
    b = sub.add_parser("bias", help="familiarity, score distribution, anchoring and self-consistency of judges",
                       description="Stureborg et al.'s and Hada et al.'s bias diagnostics, judge against humans, "
                                   "with 95%% bootstrap intervals over items. A result is flagged when its bootstrap "
                                   "test in the direction that means harm has a Benjamini-Hochberg q-value at most "
                                   "--alpha across every test of the report.")
    add_audit_args(b, by_help="group by these columns, e.g. language (default: none)",
                   judge_help="audit only this judge (repeatable)",
                   boot_help="bootstrap resamples (0: no intervals, no flags)")
    b.add_argument("--alpha", type=float, default=0.05,
                   help="false discovery rate of the flags (Benjamini-Hochberg over the report; default 0.05)")
    b.set_defaults(func=run)
