"""``evalcore alt-test``: can the judge replace the annotators? The alternative annotator test (Calderon,
Reichart & Dror 2025) of each judge: its verdict at epsilon, winning rate, advantage probability with its
interval, and the smallest epsilon at which it passes; ``--annotators`` adds the test against each annotator."""

from __future__ import annotations

import argparse
import json
import sys

from .options import add_audit_args, fit_width, load_table, records, text_table, wrap

#: The scorings (:data:`evalcore.pointwise.alt_test.SCORINGS`), written here so that the parser does not import
#: the analysis.
SCORING_CHOICES = ("auto", "accuracy", "neg_rmse")
GUIDANCE = "the paper suggests 0.2 for expert annotators, 0.15 for skilled ones, 0.1 for crowd workers"


def run(args: argparse.Namespace) -> int:
    """The Alt-Test of every judge, as sentences (and the per-annotator table) or JSON records."""
    from ..pointwise.alt_test import alt_test, alt_test_verdicts

    ing = load_table(args, "ratings")
    table = alt_test(ing.frame, by=args.by or (), judges=args.judge, epsilon=args.epsilon, scoring=args.scoring,
                     q=args.q, min_annotators=args.min_annotators, min_items=args.min_items,
                     annotators=args.annotators, n_boot=args.boot, seed=args.seed, level=args.level)
    if args.json:
        json.dump(records(table), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    scorings = ", ".join(dict.fromkeys(table["scoring"]))
    w(wrap(f"Alt-Test of {ing.source} (Calderon, Reichart & Dror 2025): can the judge replace the annotators? "
           f"Scoring {scorings}, epsilon {args.epsilon:g} ({GUIDANCE}), Benjamini-Yekutieli q {args.q:g}; a judge "
           f"passes when it beats at least half of the annotators; judges ranked by advantage probability "
           f"({args.level:.0%} item-bootstrap interval, {args.boot} resamples, seed {args.seed})") + "\n\n")
    notes = table[table["measure"] == "advantage_probability"]
    for sentence, note in zip(alt_test_verdicts(table), notes["note"]):
        w(wrap(sentence, indent="  ") + "\n")
        if note and not sentence.endswith(f"{note}."):
            w(wrap(f"  note: {note}", indent="    ") + "\n")
    if args.annotators:
        by = list(table.columns[1:list(table.columns).index("measure")])
        ann = table[table["measure"] == "annotator_advantage"]
        shown = ann[["judge", *by, "annotator", "n", "n_units", "judge_win_share", "annotator_win_share", "estimate",
                     "ci_low", "ci_high", "p_value", "rejected", "note"]]
        fmt = shown.assign(**{c: shown[c].map(lambda v: "" if v != v else f"{v:.3f}")
                              for c in ("judge_win_share", "annotator_win_share")},
                           p_value=shown["p_value"].map(lambda v: "" if v != v else f"{v:.2g}"),
                           rejected=shown["rejected"].map({True: "yes", False: "no"}).fillna(""))
        w("\n" + wrap("per annotator: the judge's and the annotator's win shares (W^f, W^h), the annotator's "
                      "advantage W^h - W^f (estimate) with its t interval, the one-sided p-value against epsilon, and "
                      "whether BY rejects it (the judge beats that annotator)") + "\n")
        if not fmt["note"].astype(bool).any():
            fmt = fmt.drop(columns="note")
        w(text_table(fit_width(fmt, undefined="left out"), undefined="left out") + "\n")
    return 0


def add_parser(sub) -> None:
    """Declare ``alt-test`` on the subcommand parsers ``sub``."""
    a = sub.add_parser("alt-test", help="can the judge replace the annotators? (the alternative annotator test)",
                       description="The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): leave one "
                                   "annotator out; on each item score the judge and that annotator against the "
                                   "others; a one-sided t-test per annotator against epsilon, Benjamini-Yekutieli "
                                   "across annotators. The judge passes when it beats at least half of them.")
    add_audit_args(a, by_help="test within these columns (language, task, criterion; default none: a group's "
                              "criteria are pooled, each item on each criterion one unit)",
                   judge_help="test only this judge (repeatable)",
                   boot_help="bootstrap resamples of the advantage probability's interval (0: none)")
    a.add_argument("--epsilon", type=float, default=0.2, help=f"the annotators' allowed advantage ({GUIDANCE})")
    a.add_argument("--scoring", choices=SCORING_CHOICES, default="auto",
                   help="accuracy (labels equal) or neg_rmse (numbers); auto: accuracy on nominal criteria, "
                        "neg_rmse on numbers")
    a.add_argument("--q", type=float, default=0.05, help="false discovery rate of Benjamini-Yekutieli (default 0.05)")
    a.add_argument("--min-annotators", type=int, default=2, metavar="N",
                   help="leave out items with fewer annotators (default 2)")
    a.add_argument("--min-items", type=int, default=30, metavar="N",
                   help="leave out annotators with fewer such items (default 30, as the paper)")
    a.add_argument("--annotators", action="store_true", help="also the test against each annotator")
    a.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals")
    a.set_defaults(func=run)
