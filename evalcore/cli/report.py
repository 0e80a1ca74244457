"""``evalcore report``: the self-contained HTML report (figures, tables, the judge report card), or with
``--json`` the judge report card as JSON records."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import DataError
from .options import add_input_args, load_input


def input_arguments(args: argparse.Namespace) -> list[str]:
    """The command-line arguments that load the same input (files and input options), for the printed commands."""
    out = [str(f) for f in args.files]
    if args.preset not in (None, "auto"):
        out += ["--preset", args.preset]
    for m in args.map or ():
        out += ["--map", m]
    for opt in ("table", "sheet", "delimiter"):
        if getattr(args, opt):
            out += [f"--{opt}", str(getattr(args, opt))]
    for opt in ("wide_humans", "wide_judges"):
        if getattr(args, opt):
            out += [f"--{opt.replace('_', '-')}", *getattr(args, opt)]
    for r in args.judge_rater or ():
        out += ["--judge-rater", r]
    return out


def _check(args: argparse.Namespace) -> None:
    if args.seed < 0:
        raise DataError(f"--seed {args.seed} is negative", fix="use a whole number, 0 or more (e.g. --seed 0)")
    if args.boot < 0:
        raise DataError(f"--boot {args.boot} is negative", fix="use 0 (no intervals, no flags) or more, e.g. --boot 1000")
    if not args.json and not args.out:
        raise DataError("say where to write the report", fix="add --out report.html (or --json for the report card)")
    if args.out and not str(args.out).lower().endswith((".html", ".htm")):
        raise DataError(f"--out {args.out} is not an .html file", fix="name the report e.g. --out report.html")
    if args.out:
        from pathlib import Path

        folder = Path(args.out).expanduser().resolve().parent
        if not folder.is_dir():
            raise DataError(f"cannot write {args.out}: the folder {folder} does not exist",
                            fix="create the folder first, or choose another --out")


def run(args: argparse.Namespace) -> int:
    """Build the report and write it to ``--out``; with ``--json`` print the judge report card."""
    from ..report.html import build_report

    _check(args)
    ing = load_input(args)
    from pathlib import Path

    rep = build_report(ing, n_boot=args.boot, seed=args.seed, inputs=input_arguments(args),
                       name=", ".join(Path(str(f)).name or str(f) for f in args.files))
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write(rep.html)
        except OSError as exc:
            raise DataError(f"cannot write {args.out}: {exc.strerror or exc}",
                            fix="choose a folder that exists and that you can write to") from None
    if args.json:
        json.dump(rep.card.to_records(), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    size = len(rep.html.encode("utf-8")) / 1e6
    sys.stdout.write(f"report of {ing.source} written to {args.out} ({size:.1f} MB, {rep.seconds:.1f} s; "
                     f"{args.boot} resamples, seed {args.seed})\n")
    for c in rep.card.cards:  # one sentence a line: each names its criteria and places
        sys.stdout.write(f"- {c.judge}:\n" + "".join(f"    {s}\n" for s in c.sentences))
    return 0


def add_parser(sub) -> None:
    """Declare ``report`` on the subcommand parsers ``sub``."""
    r = sub.add_parser("report", help="a self-contained HTML report with the judge report card",
                       description="Run every analysis the data supports and write one HTML file that opens offline "
                                   "(plotly embedded once): what the data is, a report card per judge (verdict, "
                                   "flagged findings, mitigations), the figures with their numbers and tables, and "
                                   "the parameters and CLI commands that reproduce every number. With --json, print "
                                   "the report card as JSON records.")
    add_input_args(r)
    r.add_argument("--out", metavar="FILE.html", help="where to write the HTML report")
    r.add_argument("--boot", type=int, default=1000, metavar="N",
                   help="bootstrap resamples of every interval and test (default 1000; 0: no intervals, no flags)")
    r.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    r.add_argument("--json", action="store_true",
                   help="print the judge report card as JSON records (judge, verdict, findings, mitigations)")
    r.set_defaults(func=run)
