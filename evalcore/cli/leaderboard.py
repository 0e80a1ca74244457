"""``evalcore leaderboard``: which system is best? The Bradley-Terry leaderboard of the systems by the humans and by
each judge, with bootstrap intervals, and how far each judge moves the humans' ranking (Kendall's tau, pairs
ordered the same, rank moves, separability); ``--style`` adds the style-controlled fit, ``--corrected`` the
judge-corrected (prediction-powered) scores."""

from __future__ import annotations

import argparse
import json
import sys

from .options import add_input_args, load_table, records, wrap

#: The style controls (:data:`evalcore.pairwise.style_control.STYLES`), written here so that the parser does not
#: import the analysis.
STYLE_CHOICES = ("length", "length+markdown")


def run(args: argparse.Namespace) -> int:
    """The leaderboard as tables and sentences, or JSON records (the library's table as it is)."""
    from ..pairwise.leaderboard_systems import system_leaderboard

    ing = load_table(args, "comparisons")
    table = system_leaderboard(ing.frame, judges=args.judge, style=args.style, corrected=args.corrected,
                               n_boot=args.boot, seed=args.seed, level=args.level)
    if args.json:
        json.dump(records(table), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    w(wrap(f"Systems leaderboard of {ing.source}: Bradley-Terry scores from the humans' votes and from each judge's "
           f"verdicts (every judgment one battle, a tie half a win to each side, as Chatbot Arena; Elo = 1000 + "
           f"400 * score / ln 10), {args.level:.0%} intervals from {args.boot} item-bootstrap resamples shared by "
           f"every source (seed {args.seed}); the rank interval is the central {args.level:.0%} of the resampled "
           f"ranks. Systems in the humans' order.") + "\n\n")
    _print_fit(table, "", args.level)
    if args.style:
        w("\n" + wrap(f"Style-controlled ({args.style}): the same fit with the style differences of each battle in "
                      "the regression (FastChat's style control); the scores hold style fixed.") + "\n\n")
        _print_fit(table, "sc_", args.level)
        _print_style(table)
    return 0


def _fmt(v: float, spec: str) -> str:
    return "" if v != v else format(v, spec)


def _scores(table, prefix: str, level: float):
    """One line per source and system: score, Elo with its interval, rank with its interval, items."""
    import pandas as pd

    key = ["rater", "system"]
    score = table[table["measure"] == prefix + "bt_score"].set_index(key)
    elo = table[table["measure"] == prefix + "elo"].set_index(key)
    rank = table[table["measure"] == prefix + "rank"].set_index(key)
    shown = pd.DataFrame({
        "rater": [r for r, _ in score.index], "system": [s for _, s in score.index],
        "score": score["estimate"].map(lambda v: _fmt(v, "+.3f")).to_numpy(),
        "elo": elo["estimate"].map(lambda v: _fmt(v, ".0f")).to_numpy(),
        f"elo {level:.0%}": [f"{_fmt(lo, '.0f')}-{_fmt(hi, '.0f')}" if lo == lo else "" for lo, hi in
                             zip(elo["ci_low"], elo["ci_high"])],
        "rank": rank["estimate"].map(lambda v: _fmt(v, ".0f")).to_numpy(),
        f"rank {level:.0%}": [f"{lo:.0f}-{hi:.0f}" if lo == lo else "" for lo, hi in
                              zip(rank["ci_low"], rank["ci_high"])],
        "n": score["n"].to_numpy()})
    repeat = shown["rater"].eq(shown["rater"].shift())
    shown["rater"] = shown["rater"].where(~repeat, "")
    return shown, score["note"]


def _aligned(frame, *, left: tuple[str, ...]) -> str:
    """``frame`` as text columns: the ``left`` ones aligned left (names), the others right (numbers)."""
    cols = [[str(c), *map(str, frame[c])] for c in frame.columns]
    width = [max(map(len, col)) for col in cols]
    rows = zip(*[[v.ljust(n) if c in left else v.rjust(n) for v in col]
                 for c, col, n in zip(frame.columns, cols, width)])
    return "\n".join("  ".join(r).rstrip() for r in rows)


def _print_fit(table, prefix: str, level: float) -> None:
    """The scores table, the notes once each, the separability of each source and a sentence per judge."""
    from ..pairwise.leaderboard_systems import ranking_sentences

    w = sys.stdout.write
    shown, notes = _scores(table, prefix, level)
    w(_aligned(shown, left=("rater", "system")) + "\n")
    for rater, note in dict.fromkeys((key[0], n) for key, n in notes.items() if n):
        w(wrap(f"note ({rater}): {note}", indent="  ") + "\n")
    sep = table[table["measure"] == prefix + "separability"]
    if len(sep):
        parts = ", ".join(f"{r.rater} {_fmt(r.estimate, '.0%') or 'undefined'}" for r in sep.itertuples())
        w("\n" + wrap(f"Separability (the share of system pairs whose score intervals do not overlap, Arena-Hard): "
                      f"{parts}.") + "\n")
    sentences = ranking_sentences(table, style=prefix == "sc_")
    if sentences:
        w("\nHow far each judge moves the humans' ranking:\n")
        for sentence in sentences.values():
            w(wrap("  " + sentence, indent="    ") + "\n")


def _print_style(table) -> None:
    """The style coefficients of each source, and each judge's over the humans'."""
    w = sys.stdout.write
    coef = table[table["measure"].str.startswith("style_")]
    if not len(coef):
        return
    w("\nStyle coefficients (logit per standard deviation of the feature) and each judge's over the humans':\n")
    for r in coef.itertuples():
        interval = f" ({_fmt(r.ci_low, '.3f')} to {_fmt(r.ci_high, '.3f')})" if r.ci_low == r.ci_low else ""
        line = f"{r.rater} {r.measure}: {_fmt(r.estimate, '.3f') or 'undefined'}{interval}"
        w(wrap("  " + line + (f"; {r.note}" if r.note else ""), indent="    ") + "\n")


def add_parser(sub) -> None:
    """Declare ``leaderboard`` on the subcommand parsers ``sub``."""
    a = sub.add_parser("leaderboard", help="which system is best: the systems leaderboard by the humans and by each "
                                           "judge (Bradley-Terry, intervals, rank moves)",
                       description="The Bradley-Terry leaderboard of the systems in a comparisons file, from the "
                                   "humans' votes and from each judge's verdicts, with item-bootstrap intervals "
                                   "shared by every source, and how far each judge moves the humans' ranking "
                                   "(Kendall's tau, pairs ordered the same, rank moves, separability).")
    add_input_args(a)
    a.add_argument("--judge", action="extend", nargs="+", metavar="NAME", help="only these judges (repeatable)")
    a.add_argument("--style", choices=STYLE_CHOICES,
                   help="also the style-controlled fit: the length difference of the two outputs (length), and "
                        "their markdown headers, lists and bold (length+markdown); rows sc_* and style_*")
    a.add_argument("--corrected", action="store_true",
                   help="also the judge-corrected scores (prediction-powered Bradley-Terry, rows ppi:<judge>): the "
                        "judge's verdicts on every item corrected by the human votes on a random subset")
    a.add_argument("--boot", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000; 0: none)")
    a.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    a.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    a.add_argument("--json", action="store_true", help="print tidy JSON records")
    a.set_defaults(func=run)
