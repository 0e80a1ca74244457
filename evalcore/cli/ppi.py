"""``evalcore ppi``: the humans' mean score, pass rate or win rate from a few human labels. Prediction-powered
estimates (PPI++, Angelopoulos, Duchi & Zrnic 2023) beside the humans-only and the judge-only ones, per criterion
(or system pair), ``--by`` group and judge, with the stratified overall estimate; ``--target-width`` adds the
labels needed, ``--plan M`` writes where to spend M more labels."""

from __future__ import annotations

import argparse
import json
import sys

from .options import add_input_args, fit_width, load_input, records, text_table, wrap

#: What an item without a strict majority of the humans becomes (:data:`evalcore.pairwise.ppi.NO_MAJORITY`),
#: written here so that the parser does not import the analysis.
NO_MAJORITY_CHOICES = ("tie", "drop")
#: The default file of ``--plan``.
PLAN_FILE = "evalcore_ppi_plan.csv"
#: The budget columns ``--target-width`` adds to the PPI++ records.
BUDGET_FIELDS = ("target_half_width", "ppi_corr", "labels_human_only", "labels_ppi", "more_labels_human_only",
                 "more_labels_ppi", "cheapest_labeled", "cheapest_unlabeled", "cheapest_cost")


def _analyses(args: argparse.Namespace, table: str):
    """The estimate, budget, plan and check functions of the table, with their table-specific options."""
    if table == "comparisons":
        from ..pairwise import ppi as pw

        opts = {"no_majority": args.no_majority}
        return pw.ppi_win_rates, pw.win_rate_budget, pw.win_rate_plan, pw.win_rate_label_check, opts
    from ..pointwise import ppi as pt

    opts = {"pass_at": args.pass_at, "category": args.category}
    return pt.ppi_estimates, pt.ppi_budget, pt.ppi_plan, pt.ppi_label_check, opts


def _with_budget(table, budget):
    """The estimates with the budget's fields on the (per-group) PPI++ rows."""
    keys = list(table.columns[:list(table.columns).index("stratified")])
    extra = budget[[*keys, "judge", *[c for c in BUDGET_FIELDS if c in budget.columns]]]
    merged = table.merge(extra.assign(method="ppi++", stratified=False), how="left",
                         on=[*keys, "judge", "method", "stratified"])
    return merged


def run(args: argparse.Namespace) -> int:
    """Prediction-powered estimates as a table (and the plan, the warnings) or JSON records."""
    from ..errors import DataError

    ing = load_input(args)
    if ing.table == "ratings" and args.no_majority != "tie":
        raise DataError("--no-majority applies to comparisons (the humans' verdicts)", fix="leave it out for ratings")
    if ing.table == "comparisons" and (args.pass_at is not None or args.category is not None):
        raise DataError("--pass-at and --category apply to ratings; comparisons estimate the win rate",
                        fix="leave them out")
    estimates, budget_of, plan_of, check_of, opts = _analyses(args, ing.table)
    by = args.by or ()
    table = estimates(ing.frame, by=by, judges=args.judge, plain=args.plain, level=args.level, **opts)
    budget = None
    if args.target_width is not None:
        budget = budget_of(ing.frame, half_width=args.target_width, by=by, judges=args.judge, level=args.level,
                           cost_label=args.cost_label, cost_judge=args.cost_judge, **opts)
    plan = None
    if args.plan is not None:
        judge = args.judge[0] if args.judge else None
        plan = plan_of(ing.frame, m=args.plan, by=by, judge=judge, seed=args.seed, **opts)
        plan.items.to_csv(args.plan_file, index=False)
    if args.json:
        json.dump(records(table if budget is None else _with_budget(table, budget)), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        if plan is not None:
            sys.stderr.write(f"evalcore: note: wrote {len(plan.items)} item ids to label next to {args.plan_file}\n")
        return 0
    _print(args, ing, table, check_of(ing.frame, by=by, judges=args.judge, **opts))
    if budget is not None:
        _print_budget(args, budget)
    if plan is not None:
        _print_plan(args, plan)
    return 0


def _print(args: argparse.Namespace, ing, table, check) -> None:
    """The text report: what the estimates are, one table, the check's warnings, the plan."""
    from ..stats.ppi_table import RANDOM_SAMPLE_NOTE

    w = sys.stdout.write
    w(wrap(f"Prediction-powered estimates of {ing.source}: what the humans would say on all items, from the judge's "
           f"answers corrected by the items with human labels (PPI++, Angelopoulos, Duchi & Zrnic 2023; "
           f"{args.level:.0%} normal intervals as ppi_py computes them). human_only: the labelled items alone; "
           f"judge_only: the judge's mean, biased; lambda: the judge's weight; effective_labels: the human labels "
           f"the estimate is worth. Note: {RANDOM_SAMPLE_NOTE}.") + "\n\n")
    cols = [c for c in table.columns if c not in ("std_error", "measure")]
    shown = table[cols].assign(stratified=table["stratified"].map({True: "overall", False: ""}))
    shown["lambda"] = shown["lambda"].map(lambda v: "" if v != v else f"{v:.3f}")
    shown["effective_labels"] = shown["effective_labels"].map(lambda v: "" if v != v else f"{v:.0f}")
    shown["judge"] = shown["judge"].fillna("humans")
    for c in shown.columns[:list(shown.columns).index("stratified")]:  # the overall rows have no group
        shown[c] = shown[c].astype(object).where(shown[c].notna(), "")
    w(text_table(fit_width(shown, undefined="undefined"), undefined="undefined") + "\n")
    warned = check[check["warning"]]
    if len(warned):
        w("\n" + wrap(f"warning: on {len(warned)} group(s) the judge's mean differs between labelled and unlabelled "
                      "items (Welch z-test, Benjamini-Hochberg): the labelled items may not be a random sample, and "
                      "the intervals may not hold there; the notes name them.") + "\n")


def _print_budget(args: argparse.Namespace, budget) -> None:
    """The labels needed for ``--target-width``, one line per group and judge."""
    keys = list(budget.columns[:list(budget.columns).index("judge")])
    cols = [*keys, "judge", "n_labeled", "n_items", "ppi_corr", "labels_human_only", "labels_ppi",
            "more_labels_human_only", "more_labels_ppi"]
    if args.cost_label is not None:
        cols += ["cheapest_labeled", "cheapest_unlabeled", "cheapest_cost"]
    shown = budget[[*cols, "note"]].copy()
    for c in cols[len(keys) + 1:]:
        shown[c] = shown[c].map(lambda v, c=c: "" if v != v else f"{v:.3f}" if c == "ppi_corr" else
                                f"{v:.2f}" if c == "cheapest_cost" else f"{v:.0f}")
    sys.stdout.write("\n" + wrap(
        f"Human labels for intervals of half-width {args.target_width:g} (ppi_py's power analysis): labels_human_only "
        "with the humans alone, labels_ppi with PPI++ on the group's items, more_*: still to buy"
        + ("; cheapest_*: the cheapest (labels, judged items) at the costs given" if args.cost_label is not None
           else "") + ".") + "\n")
    if not shown["note"].astype(bool).any():
        shown = shown.drop(columns="note")
    else:  # the terminal line: --json keeps the whole note
        shown["note"] = [n if len(n) <= 48 else n[:47].rstrip() + "…" for n in shown["note"]]
    sys.stdout.write(shown.fillna("").to_string(index=False) + "\n")


def _print_plan(args: argparse.Namespace, plan) -> None:
    """The allocation of ``--plan`` and where its items were written."""
    w = sys.stdout.write
    w("\n" + wrap(f"Where the next {plan.m} labels go (Neyman allocation on the residual spread of {plan.judge}; "
                  f"items drawn at random within each group, seed {plan.seed}, never by the judge's answers):") + "\n")
    alloc = plan.allocation.assign(weight=plan.allocation["weight"].map("{:.3f}".format),
                                   spread=plan.allocation["spread"].map(lambda v: "" if v != v else f"{v:.3f}"))
    if not alloc["note"].astype(bool).any():
        alloc = alloc.drop(columns="note")
    w(alloc.to_string(index=False))
    w(f"\n\nwrote {len(plan.items)} item ids to label next to {args.plan_file}\n")


def add_parser(sub) -> None:
    """Declare ``ppi`` on the subcommand parsers ``sub``."""
    a = sub.add_parser("ppi", help="the humans' mean, pass rate or win rate from a few human labels (PPI++)",
                       description="Prediction-powered inference (Angelopoulos et al. 2023; PPI++, Angelopoulos, "
                                   "Duchi & Zrnic 2023): the humans' mean score, pass rate or win rate on all items "
                                   "from the judge's answers on every item and human labels on a random sample, with "
                                   "intervals that hold whatever the judge's bias; beside the humans-only and the "
                                   "judge-only estimates.")
    add_input_args(a)
    a.add_argument("--by", nargs="+", metavar="COL",
                   help="estimate within these per-item columns (system, language, ...); the stratified overall "
                        "estimate (each group weighted by its share of items) gets its own rows")
    a.add_argument("--judge", action="append", metavar="NAME", help="only this judge (repeatable)")
    a.add_argument("--pass-at", type=float, metavar="X",
                   help="ratings: estimate the share of items whose humans' mean score is at least X (a pass rate) "
                        "instead of the mean score")
    a.add_argument("--category", metavar="LABEL",
                   help="ratings, nominal criteria: only the share of this category (default: every category's)")
    a.add_argument("--no-majority", choices=NO_MAJORITY_CHOICES, default="tie",
                   help="comparisons: an item whose annotators have no strict majority counts as a tie (default) "
                        "or is left out")
    a.add_argument("--plain", action="store_true", help="also plain PPI (lambda 1)")
    a.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    a.add_argument("--target-width", type=float, metavar="W",
                   help="add the human labels needed for intervals of half-width W (estimate +- W), with PPI++ and "
                        "with the humans alone")
    a.add_argument("--cost-label", type=float, metavar="C",
                   help="with --target-width and --cost-judge: the cost of one human label, for the cheapest plan")
    a.add_argument("--cost-judge", type=float, metavar="C", help="the cost of one judge label")
    a.add_argument("--plan", type=int, metavar="M",
                   help="split M more human labels across the --by groups (Neyman allocation) and write the item ids "
                        f"to label, drawn at random within each group, to --plan-file (default {PLAN_FILE})")
    a.add_argument("--plan-file", default=PLAN_FILE, metavar="PATH", help="where --plan writes the item ids (CSV)")
    a.add_argument("--seed", type=int, default=0, help="seed of the --plan draw")
    a.add_argument("--json", action="store_true", help="print tidy JSON records")
    a.set_defaults(func=run)
