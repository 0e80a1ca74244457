"""``evalcore superficial``: a judge's accuracy after subtracting superficial quality (Zhou et al. 2024),
``P_hat = Norm(P) - alpha * Norm(Q)`` with min-max ``Norm``, over a grid of alpha, with a cross-validated alpha."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import DataError
from .options import add_audit_args, load_input, records, text_table


def _alphas(text: str):
    from ..pairwise.superficial import alpha_grid

    try:
        start, stop, step = (float(x) for x in text.split(":"))
    except ValueError:
        raise DataError(f"--alphas '{text}' is not START:STOP:STEP", fix="e.g. --alphas 0:1:0.05") from None
    return alpha_grid(start, stop, step)


def _judges(frame, chosen, *, pairwise: bool = True) -> list[str]:
    have = sorted(frame.loc[frame["rater_kind"] == "judge", "rater"].astype(str).unique())
    if chosen:
        missing = [j for j in chosen if j not in have]
        if missing:
            raise DataError(f"there is no judge '{missing[0]}'", fix="choose from: " + ", ".join(have))
        return list(chosen)
    if not pairwise:
        return have
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
        parts.append(sp.superficial_table(data, alphas=alphas, folds=args.folds, n_boot=args.boot, seed=args.seed))
    if not parts:
        raise DataError("no judge has scores of both outputs (score_a, score_b)")
    return pd.concat(parts, ignore_index=True)


def _pointwise(frame, args: argparse.Namespace):
    """Ratings: Kendall's tau and Spearman's rho of P_hat with the humans' mean, per criterion, and the CV alpha."""
    import pandas as pd

    from ..pointwise import superficial as ps

    alphas = _alphas(args.alphas)
    by = tuple(args.by or ())
    parts = []
    for judge in _judges(frame, args.judge, pairwise=False):
        data = ps.pointwise_data(frame, judge=judge, q=args.q, by=by)
        parts.append(ps.correlation_table(data, alphas=alphas, folds=args.folds, n_boot=args.boot, seed=args.seed))
    if not parts:
        raise DataError("the table has no judge", fix="give a ratings table with judge rows (rater_kind=judge)")
    return pd.concat(parts, ignore_index=True)


def _length_controlled(frame, args: argparse.Namespace):
    """The length-controlled win rates of every judge (AlpacaEval's length_controlled_minimal GLM, per system pair),
    beside the raw and alpha-subtracted ones."""
    import pandas as pd

    from ..pairwise.superficial import length_controlled

    judges = _judges(frame, args.judge, pairwise=False)
    return pd.concat([length_controlled(frame, judges=j, alpha=args.lc_alpha, q=args.q, n_boot=args.boot,
                                             seed=args.seed)
                      for j in judges], ignore_index=True)


def _check(args: argparse.Namespace) -> None:
    if args.seed < 0:
        raise DataError(f"--seed {args.seed} is negative", fix="use a whole number, 0 or more (e.g. --seed 0)")
    if args.folds < 2:
        raise DataError(f"--folds {args.folds} is too few", fix="use 2 or more (default 5)")
    if args.boot < 0:
        raise DataError(f"--boot {args.boot} is negative", fix="use 0 (no intervals) or more, e.g. --boot 1000")


def run(args: argparse.Namespace) -> int:
    """Compute the curve and the cross-validated alpha; print a table or the JSON records."""
    _check(args)
    ing = load_input(args)
    if args.length_controlled:
        if ing.table != "comparisons":
            raise DataError("the length-controlled win rate needs pairwise comparisons with systems and texts",
                            fix="give a comparisons file with system_a, system_b, text_a, text_b")
        res = _length_controlled(ing.frame, args)
    elif ing.table == "ratings":
        res = _pointwise(ing.frame, args)
    else:
        res = _frame(ing.frame, args)
    if args.json:
        json.dump(records(res), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    if args.length_controlled:
        w(f"length-controlled win rates on {ing.source}: AlpacaEval's length_controlled_minimal GLM per system pair "
          f"(no instruction-difficulty term), Q = {args.q}; 95% item-bootstrap interval, {args.boot} resamples, "
          f"seed {args.seed}\n\n")
        cols = ["judge", "system_a", "system_b", "measure", "estimate", "ci_low", "ci_high", "n", "note"]
    else:
        what = "accuracy against gold" if ing.table == "comparisons" else "rank correlation with the humans' mean"
        w(f"superficial-quality subtraction on {ing.source}: P_hat = Norm(P) - alpha * Norm(Q), Q = {args.q}, min-max "
          f"Norm; {what}, 95% item-bootstrap interval, {args.boot} resamples, seed {args.seed}\n\n")
        cols = ["judge", "criterion", *(args.by or ()), "alpha", "measure", "estimate", "ci_low", "ci_high", "n",
                "change"]
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
                   help="superficial quality: length (characters of the texts, default), words, or a column: "
                        "pairwise, a name with <name>_a/<name>_b columns (e.g. superficial); pointwise, a numeric "
                        "per-item column (e.g. text_length) or rater:NAME (another rater's score)")
    p.add_argument("--length-controlled", action="store_true",
                   help="instead: AlpacaEval's length-controlled win rate (their length_controlled_minimal GLM: "
                        "L1-penalised, cross-validated logistic regression on tanh of the standardised length "
                        "difference, ties half), fitted per system pair, beside the raw and alpha-subtracted win "
                        "rates. Their default GLM's instruction-difficulty term needs their hub data and is left "
                        "out")
    p.add_argument("--lc-alpha", type=float, default=0.5, metavar="A",
                   help="alpha of the subtracted win rate shown with --length-controlled (default 0.5)")
    p.add_argument("--alphas", default="0:1:0.05", metavar="START:STOP:STEP", help="the alpha grid (default 0:1:0.05)")
    p.add_argument("--folds", type=int, default=5, metavar="K", help="folds of the cross-validated alpha (default 5)")
    p.set_defaults(func=run)
