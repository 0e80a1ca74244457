"""``evalcore position``: position and selection bias of pairwise judges (verdicts in both orders), before and
after calibrating their P("A") with PriDe (Zheng et al. 2023) and CalibraEval's NOA (Li et al. 2024)."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import DataError
from .options import add_audit_args, load_table, records, text_table


def _methods(args: argparse.Namespace, loaded) -> list[str]:
    from ..pairwise.position import METHODS

    if args.calibrate:
        return list(dict.fromkeys(args.calibrate))
    if loaded:  # applying saved calibrations: report those, beside no calibration
        return ["none", *dict.fromkeys(c.method for c in loaded)]
    return list(METHODS)


def _frame(frame, args: argparse.Namespace):
    """The report, applying or saving calibrations as asked."""
    from ..pairwise import position as pos

    loaded = pos.load_calibrations(args.apply_calibration) if args.apply_calibration else ()
    methods = _methods(args, loaded)
    by = list(args.by or ())
    fitted = ()
    if args.save_calibration:
        fitted = pos.fit_calibrations(frame, judges=args.judge, methods=[m for m in methods if m != "none"],
                                      estimation_share=args.estimation_share, seed=args.seed, offered_only=True)
        if not fitted:
            raise DataError("there is no calibration to save: no judge has P('A') under the three prompts "
                            "(prob_a, prob_a_swap_position, prob_a_swap_id), or --calibrate names none",
                            fix="give a file with the probability columns, and --calibrate pride noa or noa_released")
        pos.save_calibrations(args.save_calibration, fitted)
    # The loaded calibrations take the place of fitted ones of the same judge and method; the rest are fitted
    # by the report itself, which gives the very fits just saved (same seed and share) and says they were
    # fitted, not loaded.
    return pos.position_report(frame, by=by, judges=args.judge, methods=methods,
                               estimation_share=args.estimation_share, calibrations=tuple(loaded),
                               invalid=args.invalid, n_boot=args.boot, seed=args.seed)


def run(args: argparse.Namespace) -> int:
    """Compute the measures per judge, group and method; print a table or the JSON records."""
    if args.seed < 0:
        raise DataError(f"--seed {args.seed} is negative", fix="use a whole number, 0 or more (e.g. --seed 0)")
    ing = load_table(args, "comparisons")
    res = _frame(ing.frame, args)
    cols = ["judge", *(args.by or ()), "method", "measure", "estimate", "ci_low", "ci_high", "n", "note"]
    if args.json:
        keep = cols[:-1] + ["test", "p_value", "q_value", "flagged", "opposite", "note"]
        json.dump(records(res[keep]), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    w(f"position bias on {ing.source}: verdicts in both orders against gold, 95% item-bootstrap interval, "
      f"{args.boot} resamples, seed {args.seed}; calibrations fitted on a share {args.estimation_share:g} of the "
      "items (seeded)\n")
    if args.save_calibration:
        w(f"calibrations saved to {args.save_calibration}\n")
    missing = res["measure"] == "not_available"
    shown = res[~missing].assign(flag=res["flagged"].map({True: "*", False: ""}))
    w("\n" + text_table(shown[[*cols[:-1], "flag", "note"]], undefined="") + "\n")
    w("\n* first-position preference differs from 0.5 (two-sided, Benjamini-Hochberg at 5%)\n")
    for line in _not_available(res[missing], by=list(args.by or ())):
        w(line + "\n")
    return 0


def _not_available(rows, *, by: list[str]) -> list[str]:
    """One line per reason a method is not available, naming its methods and judges, instead of a table row per
    judge, group and method (the JSON keeps every row)."""
    if rows.empty:
        return []
    no_probs = rows["note"].str.contains("prob_a_swap_id", regex=False) & rows["note"].str.contains(" has none")
    reason = rows["note"].str.removeprefix("not_available: ").where(
        ~no_probs, "no P('A') under the three CalibraEval prompts (prob_a, prob_a_swap_position, prob_a_swap_id)")
    out = ["", "not available (--json lists every row):"]
    for text, grp in rows.assign(reason=reason).groupby("reason", sort=False):
        judges = list(dict.fromkeys(grp["judge"]))
        who = ", ".join(judges[:3]) + (f" and {len(judges) - 3} more" if len(judges) > 3 else "")
        groups = f" ({grp[by].drop_duplicates().shape[0]} groups)" if by else ""
        out.append(f"- {', '.join(dict.fromkeys(grp['method']))} for {who}{groups}: {text}")
    return out


def add_parser(sub) -> None:
    """Declare ``position`` on the subcommand parsers ``sub``."""
    from ..pairwise.position import METHODS

    p = sub.add_parser("position", help="position bias of pairwise judges; PriDe and CalibraEval calibration",
                       description="Accuracy in each order and in both, position consistency, first-position "
                                   "preference (tested against 0.5), RStd, Fleiss' kappa across the orders and, "
                                   "with P('A') under the three CalibraEval prompts (prob_a, prob_a_swap_position, "
                                   "prob_a_swap_id), ICC(2,k) and ICC(3,k), before and after PriDe and NOA "
                                   "calibration.")
    add_audit_args(p, by_help="break the measures down by these per-item columns (e.g. subset)",
                   judge_help="use only this judge (repeatable; default: every judge)",
                   boot_help="item-bootstrap resamples (default 1000; 0: no interval)")
    p.add_argument("--calibrate", nargs="+", choices=METHODS, metavar="METHOD",
                   help="methods to report: " + ", ".join(METHODS) + " (default: all; with --apply-calibration, "
                        "none and the saved ones)")
    p.add_argument("--invalid", choices=("drop", "wrong"), default="drop",
                   help="an unparsed judge output: drop leaves that order's verdict out (default); wrong counts it "
                        "as a wrong verdict that differs from any parsed one, as LLMBar's statistics.json does")
    p.add_argument("--estimation-share", type=float, default=0.2, metavar="R",
                   help="share of each judge's items (seeded) the calibrations are fitted on (default 0.2)")
    p.add_argument("--save-calibration", metavar="FILE.json", help="write the fitted calibrations to this JSON file")
    p.add_argument("--apply-calibration", metavar="FILE.json",
                   help="apply calibrations saved by --save-calibration (same judge names) instead of fitting them")
    p.set_defaults(func=run)
