"""``evalcore superficial``: a judge's accuracy after subtracting superficial quality (Zhou et al. 2024),
``P_hat = Norm(P) - alpha * Norm(Q)`` with min-max ``Norm``, over a grid of alpha, with a cross-validated alpha."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import DataError
from .options import add_audit_args, load_table, records, text_table


def _alphas(text: str):
    from ..pairwise.superficial import alpha_grid

    try:
        start, stop, step = (float(x) for x in text.split(":"))
    except ValueError:
        raise DataError(f"--alphas '{text}' is not START:STOP:STEP", fix="e.g. --alphas 0:1:0.05") from None
    return alpha_grid(start, stop, step)


def _judges(frame, chosen) -> list[str]:
    have = sorted(frame.loc[frame["rater_kind"] == "judge", "rater"].astype(str).unique())
    if chosen:
        missing = [j for j in chosen if j not in have]
        if missing:
            raise DataError(f"there is no judge '{missing[0]}'", fix="choose from: " + ", ".join(have))
        return list(chosen)
    with_scores = frame[frame["rater_kind"] == "judge"].dropna(subset=["score_a", "score_b"], how="all")
    return [j for j in have if j in set(with_scores["rater"].astype(str))] if "score_a" in frame else []


def _frame(frame, args: argparse.Namespace):
    """The alpha curve and the cross-validated records of every judge."""
    import pandas as pd

    from ..pairwise import superficial as sp

    if "score_a" not in frame.columns or "score_b" not in frame.columns:
        raise DataError("superficial-quality subtraction needs the judge's scores of both outputs (score_a, score_b)",
                        fix="give a comparisons table with score_a/score_b (e.g. LLMBar's Rating strategies)")
    alphas = _alphas(args.alphas)
    by = tuple(args.by or ())
    parts = []
    for judge in _judges(frame, args.judge):
        data = sp.superficial_data(frame, judge=judge, q=args.q, by=by)
        curve = sp.alpha_curve(data, alphas=alphas, n_boot=args.boot, seed=args.seed)
        cv_rows = []
        for g, key in enumerate(data.keys):
            cv = sp.cross_validated_alpha(data, alphas=alphas, folds=args.folds, seed=args.seed, n_boot=args.boot,
                                          group=g)
            keys = dict(zip(by, key))
            note = "alpha chosen on all items; per fold: " + ", ".join(f"{a:g}" for a in cv.fold_alphas)
            cv_rows.append({"judge": judge, **keys, "alpha": cv.alpha_all, "measure": "alpha_cv",
                            "estimate": cv.alpha_all, "ci_low": None, "ci_high": None, "n": cv.n, "note": note})
            cv_rows.append({"judge": judge, **keys, "alpha": None, "measure": "accuracy_cv",
                            "estimate": cv.accuracy_cv, "ci_low": cv.ci_low, "ci_high": cv.ci_high, "n": cv.n,
                            "note": f"held-out accuracy pooled over {args.folds} folds; raw accuracy "
                                    f"{cv.accuracy_raw:.3f}"})
        parts += [curve, pd.DataFrame(cv_rows)]
    if not parts:
        raise DataError("no judge has scores of both outputs (score_a, score_b)")
    return pd.concat(parts, ignore_index=True)


def run(args: argparse.Namespace) -> int:
    """Compute the curve and the cross-validated alpha; print a table or the JSON records."""
    if args.seed < 0:
        raise DataError(f"--seed {args.seed} is negative", fix="use a whole number, 0 or more (e.g. --seed 0)")
    if args.folds < 2:
        raise DataError(f"--folds {args.folds} is too few", fix="use 2 or more (default 5)")
    ing = load_table(args, "comparisons")
    res = _frame(ing.frame, args)
    if args.json:
        json.dump(records(res), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    w(f"superficial-quality subtraction on {ing.source}: P_hat = Norm(P) - alpha * Norm(Q), Q = {args.q}, min-max "
      f"Norm; accuracy against gold, 95% item-bootstrap interval, {args.boot} resamples, seed {args.seed}\n\n")
    cols = ["judge", *(args.by or ()), "alpha", "measure", "estimate", "ci_low", "ci_high", "n", "change"]
    w(text_table(res[[c for c in cols if c in res.columns]], undefined="") + "\n")
    return 0


def add_parser(sub) -> None:
    """Declare ``superficial`` on the subcommand parsers ``sub``."""
    p = sub.add_parser("superficial", help="judge accuracy after subtracting superficial quality (Zhou et al. 2024)",
                       description="P_hat = Norm(P) - alpha * Norm(Q) (min-max Norm; the paper's printed Normalize "
                                   "is inverted): the output with the higher P_hat wins, a tie counts half. Accuracy "
                                   "against gold per alpha with item-bootstrap intervals, the change from alpha = 0, "
                                   "and a cross-validated alpha.")
    add_audit_args(p, by_help="break the accuracy down by these per-item columns (e.g. subset)",
                   judge_help="use only this judge (repeatable; default: every judge with scores)",
                   boot_help="item-bootstrap resamples (default 1000; 0: no interval)")
    p.add_argument("--q", default="length", metavar="COLUMN|length|words",
                   help="superficial quality: length (characters of text_a/text_b, default), words, or a name "
                        "with <name>_a/<name>_b columns (e.g. superficial)")
    p.add_argument("--alphas", default="0:1:0.05", metavar="START:STOP:STEP", help="the alpha grid (default 0:1:0.05)")
    p.add_argument("--folds", type=int, default=5, metavar="K", help="folds of the cross-validated alpha (default 5)")
    p.set_defaults(func=run)
