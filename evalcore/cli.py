"""``evalcore``: headless audits for pipelines.

Every subcommand prints a readable report, or JSON with ``--json``. Any problem with
the input prints one line on stderr (``evalcore: error: ...``) and exits with status 1;
a traceback never reaches the user.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .data import schema
from .columns import TABLES
from .errors import DataError, WorkspaceError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not a usage dump
        sys.stderr.write(f"evalcore: error: {message} (see 'evalcore {self.prog.split()[-1]} --help')\n"
                         if " " in self.prog else f"evalcore: error: {message} (see 'evalcore --help')\n")
        raise SystemExit(2)


def _mapping(pairs: Sequence[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs or []:
        if "=" not in p:
            raise DataError(f"--map expects SOURCE=CANONICAL, got '{p}'",
                            fix="write e.g. --map annotator=rater --map grade=score")
        src, dst = p.split("=", 1)
        out[src.strip()] = dst.strip()
    return out


def _add_input_args(p: argparse.ArgumentParser) -> None:
    from .data.presets import PRESETS

    p.add_argument("files", nargs="+", metavar="FILE",
                   help="the data file (or, with a preset, several files or a folder)")
    p.add_argument("--preset", default="auto", choices=["auto", "none", *PRESETS],
                   help="a known format (default: detect one; 'none' for a plain table)")
    p.add_argument("--map", action="append", metavar="SRC=CANONICAL",
                   help="map a column of the file to a canonical name, e.g. --map annotator=rater")
    p.add_argument("--table", choices=TABLES, help="force the table kind (default: from the columns)")
    p.add_argument("--sheet", help="Excel sheet to read when the workbook has several")
    p.add_argument("--delimiter", help="force the CSV delimiter (default: detected)")
    p.add_argument("--wide-humans", nargs="+", metavar="COL",
                   help="wide file: the columns holding each human annotator's scores")
    p.add_argument("--wide-judges", nargs="+", metavar="COL",
                   help="wide file: the columns holding each judge's scores")
    p.add_argument("--judge-rater", action="append", metavar="RATER",
                   help="file without a rater_kind column: a rater that is an LLM judge (repeatable); "
                        "by default raters named like models (gpt, llama, judge, ...) are judges")


def _load(args: argparse.Namespace):
    from .data.ingest import load

    mapping = _mapping(args.map)
    wide = None
    if args.wide_humans or args.wide_judges:
        from .data import io

        if len(args.files) != 1:
            raise DataError("--wide-humans/--wide-judges read one wide file", fix="give a single file")
        raw = io.read_table(args.files[0], sheet=args.sheet, delimiter=args.delimiter)
        raters = set(args.wide_humans or []) | set(args.wide_judges or [])
        value = "winner" if args.table == "comparisons" else "score"
        wide = schema.WideSpec(id_columns=tuple(c for c in raw.columns if c not in raters),
                               human_columns=tuple(args.wide_humans or ()), judge_columns=tuple(args.wide_judges or ()),
                               value=value)
    preset = None if args.preset in ("none", None) else args.preset
    if wide is not None:
        preset = None
    elif preset == "auto":
        from .data.presets import detect_preset
        from pathlib import Path

        preset = detect_preset([Path(f) for f in args.files])
    return load(args.files, preset=preset, mapping=mapping, table=args.table, sheet=args.sheet,
                delimiter=args.delimiter, wide=wide, judge_raters=args.judge_rater)


def _print_summary(ing, out=None) -> None:
    out = out or sys.stdout
    s = ing.summary()
    av = schema.analyses(ing.frame, table=ing.table)
    w = out.write
    w(f"{s.table} table from {ing.source}" + (f" (preset {ing.preset})" if ing.preset else "") + "\n")
    rows = [("rows", f"{s.rows:,}"), ("items", f"{s.items:,}"),
            ("human raters", f"{s.human_raters} (up to {s.max_humans_per_item} per item)"),
            ("judges", str(s.judges)), ("criteria", ", ".join(s.criteria) or "-"),
            ("languages", ", ".join(s.languages) or "-"), ("tasks", ", ".join(s.tasks) or "-")]
    if s.systems:
        rows.append(("systems", ", ".join(s.systems)))
    for k, v in rows:
        w(f"  {k:<14}{v}\n")
    w("analyses:\n")
    for r in av.itertuples():
        mark = "yes" if r.available else "no "
        w(f"  [{mark}] {r.analysis:<20} {r.title}" + ("" if r.available else f" -- needs {r.missing}") + "\n")
    if ing.mapping:
        w("column mapping: " + ", ".join(f"{k} -> {v}" for k, v in ing.mapping.items() if k != v) + "\n"
          if any(k != v for k, v in ing.mapping.items()) else "")
    for n in ing.notes:
        w(f"note: {n}\n")


def cmd_validate(args: argparse.Namespace) -> int:
    ing = _load(args)
    if args.json:
        d = ing.summary().to_dict()
        d.update({"source": ing.source, "preset": ing.preset, "mapping": ing.mapping, "notes": list(ing.notes)})
        json.dump(d, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        _print_summary(ing)
    return 0


def _records(frame) -> list[dict]:
    """JSON-ready records: NaN becomes null, numpy scalars become Python ones."""
    import math

    out = []
    for rec in frame.to_dict(orient="records"):
        clean = {}
        for k, v in rec.items():
            if hasattr(v, "item"):
                v = v.item()
            if isinstance(v, float) and math.isnan(v):
                v = None
            clean[k] = v
        out.append(clean)
    return out


def _text_table(frame, *, undefined: str = "") -> str:
    """A result table for the terminal: numbers to 3 decimals; an undefined estimate shows ``undefined``."""
    shown = frame.copy()
    for c in ("estimate", "ci_low", "ci_high"):
        blank = undefined if c == "estimate" else ""
        shown[c] = shown[c].map(lambda v, blank=blank: blank if v != v else f"{v:.3f}")
    return shown.to_string(index=False)


_NEEDS = {
    "ratings": ("this command needs pointwise ratings", "pairwise comparisons",
                "give a ratings file (item_id, rater, rater_kind, criterion, score)"),
    "comparisons": ("win rates need pairwise comparisons", "pointwise ratings",
                    "give a comparisons file (item_id, system_a, system_b, rater, rater_kind, winner)"),
}


def _load_table(args: argparse.Namespace, table: str):
    """Load the input and insist it is a ``table`` (one message naming the fix otherwise)."""
    ing = _load(args)
    if ing.table != table:
        need, other, fix = _NEEDS[table]
        raise DataError(f"{need}, but {ing.source} holds {other}", fix=fix)
    return ing


def cmd_agreement(args: argparse.Namespace) -> int:
    from .pointwise.agreement import agreement, count_units

    ing = _load_table(args, "ratings")
    units = count_units(ing.frame)
    by = args.by if args.by is not None else [c for c in ("language", "criterion") if c in units.codes]
    if by == ["none"]:
        by = []
    table = agreement(units, by=by, judges=args.judge, n_boot=args.boot, seed=args.seed, level=args.level)
    if args.json:
        json.dump(_records(table), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    shown = table.assign(judge=table["judge"].fillna("(humans)"),
                         flagged=table["flagged"].map({True: "LOW", False: ""}))
    sys.stdout.write(f"agreement of {ing.source}, grouped by {', '.join(by) or 'nothing'}; "
                     f"{args.boot} bootstrap resamples (seed {args.seed})\n")
    sys.stdout.write(_text_table(shown, undefined="not defined") + "\n")
    return 0


def cmd_bias(args: argparse.Namespace) -> int:
    from .pointwise.bias_report import bias_report

    ing = _load_table(args, "ratings")
    by = [] if args.by in (None, ["none"]) else args.by
    rep = bias_report(ing.frame, by=by, judges=args.judge, n_boot=args.boot, seed=args.seed)
    if args.json:
        json.dump(_records(rep.records), sys.stdout, indent=1, ensure_ascii=False)
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
        w(_text_table(flagged.drop(columns=["flagged"])) + "\n")
    if len(rep.recommendations):
        w("\nwhat to do:\n")
        for r in rep.recommendations.itertuples():
            w(f"- {r.finding} ({r.judges}) -> {r.recommendation} [{r.source}]\n")
    return 0


def cmd_winrate(args: argparse.Namespace) -> int:
    import time

    from .pairwise import winrate as wr

    ing = _load_table(args, "comparisons")
    prior = wr.parse_prior(args.prior)
    if args.boot_samples < 100:
        raise DataError(f"--samples {args.boot_samples} is too few", fix="use at least 100 (default 10000)")
    t0 = time.perf_counter()
    kw = dict(method=args.method, prior=prior, ties=args.ties, judges=args.judge, seed=args.seed,
              n_samples=args.boot_samples, chains=args.chains, draws=args.draws, tune=args.draws)
    if args.pair:
        results = [wr.estimate(ing.frame, args.pair[0], args.pair[1], **kw)]
    else:
        results = wr.estimate_all(ing.frame, baseline=args.baseline, **kw)
    if args.json:
        json.dump([r.to_record() for r in results], sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    name = {"bwrs": "BWRS", "ds": "Bayesian Dawid-Skene"}[args.method]
    w(f"calibrated win rates of {ing.source}: {name}, prior {prior.label}, ties {args.ties}, seed {args.seed}\n")
    w("p = share of items on which system_a is better; k = the judges' raw win rate; "
      "p_human = the humans' own win rate\n\n")
    import pandas as pd

    rows = []
    for r in results:
        rows.append({"system_a": r.system_a, "system_b": r.system_b, "k": r.k_observed, "p_mean": r.p_mean,
                     "p_mode": r.p_mode, "95% interval": f"[{r.ci_low:.3f}, {r.ci_high:.3f}]",
                     "p_human": r.p_human, "items": r.n_items, "labels used": r.n_human_labelled,
                     "rhat": r.rhat, "ess": r.ess})
    frame = pd.DataFrame(rows)
    fmt = {c: (lambda v: "" if v != v else f"{v:.3f}") for c in ("k", "p_mean", "p_mode", "p_human", "rhat")}
    fmt["ess"] = lambda v: "" if v != v else f"{v:.0f}"
    w(frame.to_string(index=False, formatters=fmt) + "\n")
    for r in results:
        for msg in r.warnings:
            w(f"warning ({r.system_a} vs {r.system_b}): {msg}\n")
    w(f"\n{len(results)} pair(s) in {time.perf_counter() - t0:.1f} s\n")
    return 0


def _add_audit_args(p: argparse.ArgumentParser, *, by_help: str, judge_help: str, boot_help: str) -> None:
    """Options shared by the analysis commands: grouping, judges, bootstrap, output."""
    _add_input_args(p)
    p.add_argument("--by", nargs="+", metavar="COL", help=by_help)
    p.add_argument("--judge", action="append", metavar="NAME", help=judge_help)
    p.add_argument("--boot", type=int, default=1000, metavar="N", help=boot_help)
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    p.add_argument("--json", action="store_true", help="print tidy JSON records")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="evalcore", description="Audit LLM judges against human annotators.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    v = sub.add_parser("validate", help="check a file and say which analyses it unlocks",
                       description="Read a file, map its columns, validate it and print a summary.")
    _add_input_args(v)
    v.add_argument("--json", action="store_true", help="print the summary as JSON")
    v.set_defaults(func=cmd_validate)

    a = sub.add_parser("agreement", help="agreement among humans and of each judge with humans",
                       description="Percent agreement, Fleiss' kappa, Gwet's AC1, PABAK, Krippendorff's alpha among "
                                   "humans; PA, Cohen's kappa, weighted F1, Kendall's tau and Spearman's rho of each "
                                   "judge against humans; 95%% bootstrap intervals over items.")
    _add_audit_args(a, by_help="group by these columns (default: language and criterion; 'none' for no grouping)",
                    judge_help="compare only this judge (repeatable)", boot_help="bootstrap resamples (0: no intervals)")
    a.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals")
    a.set_defaults(func=cmd_agreement)

    b = sub.add_parser("bias", help="familiarity, score distribution, anchoring and self-consistency of judges",
                       description="Stureborg et al.'s and Hada et al.'s bias diagnostics, judge against humans, "
                                   "with 95%% bootstrap intervals over items and a flag where an effect is "
                                   "significant at 5%%.")
    _add_audit_args(b, by_help="group by these columns, e.g. language (default: none)",
                    judge_help="audit only this judge (repeatable)",
                    boot_help="bootstrap resamples (0: no intervals, no flags)")
    b.set_defaults(func=cmd_bias)

    w = sub.add_parser("winrate", help="calibrated win rates of system pairs (BWRS, Bayesian Dawid-Skene)",
                       description="Gao et al.'s calibrated win rate p of system A over B from imperfect judges: "
                                   "BWRS or a Bayesian Dawid-Skene model with the true labels marginalised, with "
                                   "no prior, a share of the human labels (ratio:R) or another pair's labels "
                                   "(ood:A2,B2). Without --pair, every pair in the file.")
    _add_input_args(w)
    w.add_argument("--pair", nargs=2, metavar=("A", "B"), help="the two systems; p is A's win rate over B")
    w.add_argument("--baseline", metavar="SYSTEM",
                   help="without --pair: only pairs with this system, each as (other, baseline) (1 vs n)")
    w.add_argument("--method", choices=["bwrs", "ds"], default="ds",
                   help="bwrs (Algorithm 1) or ds (Bayesian Dawid-Skene, Model 1); default ds")
    w.add_argument("--prior", default="none", metavar="none|ratio:R|ood:A2,B2",
                   help="judges' accuracy prior: none (Beta(2,1)), ratio:R (human labels on a random share R of "
                        "the labelled items), ood:A2,B2 (another pair's human labels); default none")
    w.add_argument("--ties", choices=["drop", "random"], default="drop",
                   help="a tied verdict or human majority: drop it (default) or break it by a seeded coin flip")
    w.add_argument("--judge", action="append", metavar="NAME", help="use only this judge (repeatable)")
    w.add_argument("--seed", type=int, default=0, help="seed of the label subset, coin flips and sampler")
    w.add_argument("--samples", dest="boot_samples", type=int, default=10_000, metavar="N",
                   help="BWRS: samples of p per judge (default 10000)")
    w.add_argument("--chains", type=int, default=4, help="DS: MCMC chains (default 4)")
    w.add_argument("--draws", type=int, default=1000, help="DS: draws per chain, and as many tuning steps (default 1000)")
    w.add_argument("--json", action="store_true", help="print JSON records (one per pair)")
    w.set_defaults(func=cmd_winrate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalcore`` console script; returns the exit status."""
    import warnings

    # ArviZ announces its refactor on import; it is not the user's concern.
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"arviz(\..*)?$")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (DataError, WorkspaceError) as exc:
        sys.stderr.write(f"evalcore: error: {exc}\n")
        return 1
    except BrokenPipeError:  # output piped into `head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("evalcore: interrupted\n")
        return 130
    except MemoryError:
        sys.stderr.write("evalcore: error: the file does not fit in memory. Fix: convert it to Parquet "
                         "or split it.\n")
        return 1
    except Exception as exc:  # the user must not see a traceback, but must see what broke
        sys.stderr.write(f"evalcore: error: unexpected {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} "
                         "(this is a bug in evalcore; please report it with the file's first lines)\n")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
