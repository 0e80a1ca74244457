"""``evalcore agreement``: agreement among humans and of each judge with humans."""

from __future__ import annotations

import argparse
import json
import math
import sys

from .options import add_audit_args, load_table, records, text_table

#: The flag rule in one sentence, as the text output and the README state it.
RULE = ("LOW = flagged: the judge agrees with humans less than humans agree with each other (pairwise_agreement_gap, "
        "one-sided bootstrap test), Benjamini-Hochberg q <= {alpha:g} across all {n} tests of this table; "
        "HIGH = significantly more (not a flag)")


def run(args: argparse.Namespace) -> int:
    """Agreement per group, as a terminal table or JSON records."""
    from ..pointwise.agreement import agreement, count_units

    ing = load_table(args, "ratings")
    units = count_units(ing.frame)
    by = args.by if args.by is not None else [c for c in ("language", "criterion") if c in units.codes]
    if by == ["none"]:
        by = []
    table = agreement(units, by=by, judges=args.judge, n_boot=args.boot, seed=args.seed, level=args.level,
                      alpha=args.alpha)
    if args.json:
        json.dump(records(table), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    fmt = (lambda v: "" if math.isnan(v) else f"{v:.2g}")
    mark = table["flagged"].map({True: "LOW", False: ""}).where(~table["opposite"], "HIGH")
    shown = table.drop(columns=["test", "opposite"]).assign(
        judge=table["judge"].fillna("(humans)"), flagged=mark, p_value=table["p_value"].map(fmt),
        q_value=table["q_value"].map(fmt))
    sys.stdout.write(f"agreement of {ing.source}, grouped by {', '.join(by) or 'nothing'}; "
                     f"{args.boot} bootstrap resamples (seed {args.seed})\n")
    sys.stdout.write(RULE.format(alpha=args.alpha, n=int(table["p_value"].notna().sum())) + "\n")
    sys.stdout.write(text_table(shown, undefined="not defined") + "\n")
    return 0


def add_parser(sub) -> None:
    """Declare ``agreement`` on the subcommand parsers ``sub``."""
    a = sub.add_parser("agreement", help="agreement among humans and of each judge with humans",
                       description="Percent agreement, Fleiss' kappa, Gwet's AC1, PABAK, Krippendorff's alpha among "
                                   "humans; PA, Cohen's kappa, weighted F1, Kendall's tau and Spearman's rho of each "
                                   "judge against humans; 95%% bootstrap intervals over items. A judge is flagged "
                                   "where it agrees with humans less than humans agree with each other "
                                   "(Benjamini-Hochberg q at most --alpha over the table's tests).")
    add_audit_args(a, by_help="group by these columns (default: language and criterion; 'none' for no grouping)",
                   judge_help="compare only this judge (repeatable)", boot_help="bootstrap resamples (0: no intervals)")
    a.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals")
    a.add_argument("--alpha", type=float, default=0.05,
                   help="false discovery rate of the flags (Benjamini-Hochberg over the table; default 0.05)")
    a.set_defaults(func=run)
