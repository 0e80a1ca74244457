"""``evalcore agreement``: agreement among humans and of each judge with humans; with a ``system`` column the
system- and input-level correlations too; ``--leaderboard`` ranks the judges, ``--pairs`` gives the rater-pair
kappa matrix."""

from __future__ import annotations

import argparse
import json
import math
import sys

from .options import (add_audit_args, add_engine_arg, counts_as_integers, declarations, engine_table, load_table,
                      records, text_table, wrap)

#: The flag rule in one sentence, as the text output and docs/flag-rule.md state it.
RULE = ("LOW = flagged: the judge agrees with humans less than humans agree with each other (pairwise_agreement_gap, "
        "one-sided bootstrap test), Benjamini-Hochberg q <= {alpha:g} across all {n} tests of this table; "
        "HIGH = significantly more (not a flag)")


def _meta_rows(frame, by, args: argparse.Namespace):
    """System- and input-level correlations (:func:`evalcore.pointwise.meta.meta_correlations`), when the
    ratings name the systems; their groups are the criteria and ``by``."""
    if "system" not in frame.columns:
        return None
    from ..pointwise.meta import meta_correlations  # scipy: only when there are systems

    return meta_correlations(frame, by=[c for c in by if c != "criterion"], judges=args.judge, n_boot=args.boot,
                             seed=args.seed, level=args.level)


def _extra(frame, by, args: argparse.Namespace):
    """``--leaderboard`` or ``--pairs`` instead of the agreement table (None: neither)."""
    rest = [c for c in by if c != "criterion"]
    if args.leaderboard:
        from ..pointwise.leaderboard import judge_leaderboard

        measures = tuple(args.leaderboard_measure or (("kendall_tau", "kendall_tau_system") if "system" in frame
                                                       else ("kendall_tau",)))
        return "judge leaderboard", judge_leaderboard(frame, by=rest, judges=args.judge, measures=measures,
                                                      n_boot=args.boot, seed=args.seed, level=args.level)
    if args.pairs:
        from ..pointwise.rater_pairs import rater_pair_matrix

        return "rater pairs", rater_pair_matrix(frame, by=rest, judges=args.judge, n_boot=args.boot, seed=args.seed,
                                                level=args.level)
    return None


def _dump(table) -> int:
    json.dump(records(table), sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def run(args: argparse.Namespace) -> int:
    """Agreement per group, as a terminal table or JSON records."""
    from ..data.codes import shared_codes
    from ..pointwise.agreement.filter import filter_units
    from ..pointwise.agreement.passes import one_shot
    from ..pointwise.agreement.units import count_units

    one_shot()  # one table, then exit: numpy's passes unless the table is very large
    if getattr(args, "engine", None):
        return _run_engine(args)
    with shared_codes():  # the columns validation factorised are counted without hashing them again
        ing = load_table(args, "ratings")
        units = filter_units(count_units(ing.frame), min_raters=args.min_raters, max_raters=args.max_raters)
    by = args.by if args.by is not None else [c for c in ("language", "criterion") if c in units.codes]
    if by == ["none"]:
        by = []
    return _output(args, ing.frame, ing.source, units, by)


def _run_engine(args: argparse.Namespace) -> int:
    """``--engine``: the per-unit counts computed where the data is (:mod:`evalcore.engines`); the rest as in memory.

    Only the compressed counts come back, so a folder of Parquet files larger than memory works. The
    analyses that need every row (``--leaderboard``, ``--pairs``, system-level correlations) are not
    available there.
    """
    from ..errors import DataError
    from ..pointwise.agreement.filter import filter_units
    from ..engines.agreement import count_units_engine

    if args.leaderboard or args.pairs:
        raise DataError("--leaderboard and --pairs need the rows in memory", fix="run them without --engine")
    table = engine_table(args)
    by = args.by if args.by is not None else [c for c in ("language", "criterion")
                                              if c == "criterion" or c in table.columns]
    if by == ["none"]:
        by = []
    declared = declarations(args)  # --scale and --order, read by the engine as in memory
    try:
        units = count_units_engine(table, by=by, judges=args.judge, judge_raters=args.judge_rater, **declared)
    except DataError as exc:
        raise exc.with_file(str(args.files[0])) from None
    units = filter_units(units, min_raters=args.min_raters, max_raters=args.max_raters)
    if "system" in table.columns:
        sys.stderr.write("evalcore: note: the system- and input-level correlations need the rows in memory; "
                         "run without --engine for them\n")
    return _output(args, None, args.files[0], units, by)


def _confusion(args: argparse.Namespace, source: str, units, by: list[str], notes: list[str]) -> int:
    """``--confusion``: each judge's labels against the humans' majority label, per group."""
    from ..pointwise.confusion import confusion_matrix

    cm = confusion_matrix(units, judges=args.judge, by=by)
    if args.json:
        return _dump(cm)
    sys.stdout.write(wrap(f"confusion matrices of {source}, grouped by {', '.join(by) or 'nothing'}: rows are the "
                          "humans' strict-majority label, columns the judge's; each cell the units and the share of "
                          "its row") + "\n")
    for note in notes:
        sys.stdout.write(wrap(note) + "\n")
    keys = ["judge", *by]
    for key, cells in cm.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        order = list(dict.fromkeys(cells["human_category"]))
        grid = cells.assign(cell=[f"{int(n)} ({s:.0%})" if s == s else f"{int(n)}"
                                  for n, s in zip(cells["count"], cells["row_share"])])
        grid = grid.pivot(index="human_category", columns="judge_category", values="cell").reindex(
            index=order, columns=order)
        grid.index.name, grid.columns.name = "humans \\ judge", None
        head = ", ".join(f"{k}={v}" for k, v in zip(keys, key))
        note = cells["note"].iloc[0]
        sys.stdout.write(f"\n{head}: {int(cells['n_units'].iloc[0])} units" + (f"; {note}" if note else "") + "\n")
        sys.stdout.write(grid.to_string() + "\n")
    return 0


def _output(args: argparse.Namespace, frame, source: str, units, by: list[str]) -> int:
    """The table of ``units`` (and, for rows in memory, ``--leaderboard``/``--pairs``/meta rows) as text or JSON."""
    import pandas as pd

    from ..pointwise.agreement.table import agreement, scale_by, scale_notes

    notes = scale_notes(units, by)  # which measures apply to nominal criteria, said once
    by = scale_by(units, by)
    if getattr(args, "confusion", False):
        return _confusion(args, source, units, by, notes)
    extra = _extra(frame, by, args) if frame is not None else None
    if extra is not None:
        if args.json:
            return _dump(extra[1])
        sys.stdout.write(f"{extra[0]} of {source}; {args.boot} bootstrap resamples (seed {args.seed})\n")
        sys.stdout.write(text_table(extra[1], undefined="not defined") + "\n")
        return 0
    table = agreement(units, by=by, judges=args.judge, n_boot=args.boot, seed=args.seed, level=args.level,
                      alpha=args.alpha)
    meta = _meta_rows(frame, by, args) if frame is not None else None
    if meta is not None:
        table = pd.concat([table, meta], ignore_index=True)
    if args.json:
        return _dump(table)
    sys.stdout.write(wrap(f"agreement of {source}, grouped by {', '.join(by) or 'nothing'}; "
                          f"{args.boot} bootstrap resamples (seed {args.seed})") + "\n")
    if units.unit_filter is not None:
        f = units.unit_filter
        sys.stdout.write(f"{f.description}: {f.kept:,} unit(s) kept, {f.dropped:,} dropped\n")
    sys.stdout.write(wrap(RULE.format(alpha=args.alpha, n=int(table["p_value"].notna().sum()))) + "\n")
    for note in notes:
        sys.stdout.write(wrap(note) + "\n")
    if args.all:
        fmt = (lambda v: "" if math.isnan(v) else f"{v:.2g}")
        mark = table["flagged"].map({True: "LOW", False: ""}).where(~table["opposite"], "HIGH")
        shown = table.drop(columns=["test", "opposite"]).assign(
            judge=table["judge"].astype(object).where(table["judge"].notna(), "(humans)"), flagged=mark,
            p_value=table["p_value"].map(fmt), q_value=table["q_value"].map(fmt))
        sys.stdout.write(text_table(counts_as_integers(shown), undefined="not defined") + "\n")
        return 0
    _summary(table, by, args)
    return 0


def _summary(table, by: list[str], args: argparse.Namespace) -> None:
    """The verdict, then one line per group and judge (humans' agreement, the judge's, the gap), within 120
    columns; every measure is one option away."""
    from ..report.views.agreement import agreement_summary, agreement_verdict

    judges = [str(j) for j in table["judge"].dropna().unique()]
    verdict = agreement_verdict(table, by=by, judges=judges, pending=args.boot == 0)
    for sentence in verdict.sentences:
        sys.stdout.write(wrap(sentence.replace("**", "")) + "\n")
    summary = agreement_summary(table, by=by)
    sys.stdout.write("\n" + wrap("humans agree: with each other (percent agreement); judge agrees: with each human "
                                  "(pairwise agreement); gap: the difference, the flagged measure") + "\n")
    sys.stdout.write(summary.to_string(index=False, max_colwidth=28) + "\n")
    sys.stdout.write(wrap(f"\nThis is a summary: every measure ({len(table):,} rows: kappas, alphas, AC1, F1, Kendall's "
                          "tau, notes) with --all, or as JSON with --json.") + "\n")


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
    a.add_argument("--all", action="store_true",
                   help="print every measure of every group (the default prints a summary: the humans' agreement, "
                        "each judge's and the flagged gap)")
    a.add_argument("--alpha", type=float, default=0.05,
                   help="false discovery rate of the flags (Benjamini-Hochberg over the table; default 0.05)")
    a.add_argument("--min-raters", type=int, metavar="N",
                   help="only units (an item on one criterion) with at least N human ratings")
    a.add_argument("--max-raters", type=int, metavar="N",
                   help="only units with at most N human ratings (--min-raters 3 --max-raters 3: the fully "
                        "annotated units papers report alpha on)")
    a.add_argument("--leaderboard", action="store_true",
                   help="instead: the judges ranked per criterion (and --by group), each against the best with a "
                        "paired bootstrap")
    a.add_argument("--leaderboard-measure", nargs="+", metavar="MEASURE",
                   help="the leaderboard's measures (default: kendall_tau, and kendall_tau_system when the file "
                        "has a system column)")
    a.add_argument("--confusion", action="store_true",
                   help="instead: each judge's confusion matrix against the humans' strict-majority label (counts and "
                        "row shares), per group; for nominal labels and scales with few categories")
    a.add_argument("--pairs", action="store_true",
                   help="instead: Cohen's kappa (plain, linear, quadratic) and percent agreement for every pair "
                        "of annotators and every judge against every annotator")
    add_engine_arg(a)
    a.set_defaults(func=run)
