"""``evalcore bias``: familiarity, score distribution, anchoring and self-consistency of judges."""

from __future__ import annotations

import argparse
import json
import sys

from .options import add_audit_args, load_table, records, text_table


def run(args: argparse.Namespace) -> int:
    """The bias audit: flagged results and what to do, or every record as JSON."""
    from ..pointwise.bias_report import bias_report

    ing = load_table(args, "ratings")
    by = [] if args.by in (None, ["none"]) else args.by
    rep = bias_report(ing.frame, by=by, judges=args.judge, n_boot=args.boot, seed=args.seed)
    if args.json:
        json.dump(records(rep.records), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    w(f"bias audit of {ing.source}" + (f", grouped by {', '.join(by)}" if by else "")
      + f"; {args.boot} bootstrap resamples (seed {args.seed}); flagged = significant at 5%\n")
    for section, reason in rep.skipped:
        w(f"skipped {section}: {reason}\n")
    flagged = rep.results[rep.results["flagged"]]
    w(f"\n{len(flagged)} flagged result(s) out of {len(rep.results)}\n")
    if len(flagged):
        w(text_table(flagged.drop(columns=["flagged"])) + "\n")
    if len(rep.recommendations):
        w("\nwhat to do:\n")
        for r in rep.recommendations.itertuples():
            w(f"- {r.finding} ({r.judges}) -> {r.recommendation} [{r.source}]\n")
    return 0


def add_parser(sub) -> None:
    """Declare ``bias`` on the subcommand parsers ``sub``."""
    b = sub.add_parser("bias", help="familiarity, score distribution, anchoring and self-consistency of judges",
                       description="Stureborg et al.'s and Hada et al.'s bias diagnostics, judge against humans, "
                                   "with 95%% bootstrap intervals over items and a flag where an effect is "
                                   "significant at 5%%.")
    add_audit_args(b, by_help="group by these columns, e.g. language (default: none)",
                   judge_help="audit only this judge (repeatable)",
                   boot_help="bootstrap resamples (0: no intervals, no flags)")
    b.set_defaults(func=run)
