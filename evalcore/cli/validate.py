"""``evalcore validate``: check a file and say which analyses it unlocks."""

from __future__ import annotations

import argparse
import json
import sys

from ..data.categories import scale_report, shown
from ..data.codes import shared_codes
from ..data.scales import SCALE
from ..data.summary import summarize, unlocks
from .options import add_input_args, load_input, wrap


def print_summary(ing, out=None) -> None:
    """The readable summary of a loaded table: its size, raters, segments and the analyses it unlocks."""
    out = out or sys.stdout
    with shared_codes():  # the summary and the list of analyses count the same columns
        av = unlocks(ing.frame, table=ing.table)
        s = summarize(ing.frame, table=ing.table, available=av)
    w = out.write
    w(wrap(f"{s.table} table from {ing.source}" + (f" (preset {ing.preset})" if ing.preset else "")) + "\n")
    rows = [("rows", f"{s.rows:,}"), ("items", f"{s.items:,}"),
            ("human raters", f"{s.human_raters} (up to {s.max_humans_per_item} per item)"),
            ("judges", str(s.judges)), ("criteria", ", ".join(s.criteria) or "-"),
            ("languages", ", ".join(s.languages) or "-"), ("tasks", ", ".join(s.tasks) or "-")]
    if s.systems:
        rows.append(("systems", ", ".join(s.systems)))
    for k, v in rows:
        w(wrap(f"  {k:<14}{v}", indent=" " * 16) + "\n")
    if ing.table == "ratings":
        w(scales_text(scale_report(ing.frame)))
    w("analyses:\n")
    for r in av.itertuples():
        mark = "yes" if r.available else "no "
        w(wrap(f"  [{mark}] {r.analysis:<20} {r.title}" + ("" if r.available else f" -- needs {r.missing}"),
               indent=" " * 29) + "\n")
    if ing.mapping:
        w("column mapping: " + ", ".join(f"{k} -> {v}" for k, v in ing.mapping.items() if k != v) + "\n"
          if any(k != v for k, v in ing.mapping.items()) else "")
    for n in ing.notes:
        w(wrap(f"note: {n}", indent="  ") + "\n")


#: How many criteria the text summary lists with their scales.
LISTED_CRITERIA = 20


def scales_text(report) -> str:
    """The ``scales:`` block of the summary: each criterion's scale and, for categories, how many and the first few
    (:func:`evalcore.data.categories.scale_report`)."""
    lines = ["scales:"]
    for r in report.head(LISTED_CRITERIA).itertuples():
        if r.labels == "numbers":
            what = f"{r.scale}, numbers"
        else:
            sep = " < " if r.labels == "ordered categories" else ", "
            more = sep + "..." if r.n_categories > len(r.categories) else ""
            what = (f"{r.scale}, {r.n_categories:,} {r.labels}: "
                    + sep.join(f"'{shown(c)}'" for c in r.categories) + more)
        lines.append(wrap(f"  {shown(r.criterion, 13):<14}{what}", indent=" " * 16))
    if len(report) > LISTED_CRITERIA:
        lines.append(f"  ... and {len(report) - LISTED_CRITERIA:,} more criteria")
    return "\n".join(lines) + "\n"


def scales_json(report) -> list[dict]:
    """The ``scales`` of ``validate --json``: one record per criterion
    (:func:`evalcore.data.categories.scale_report`)."""
    return [{k: (v if not isinstance(v, float) or v == v else None) for k, v in rec.items()}
            for rec in report.to_dict(orient="records")]


def run(args: argparse.Namespace) -> int:
    """Print the summary of the input, or its JSON with ``--json``."""
    with shared_codes():  # validation's factorised columns serve the summary too
        ing = load_input(args)
        if args.json:
            d = ing.summary().to_dict()
            d.update({"source": ing.source, "preset": ing.preset, "mapping": ing.mapping, "notes": list(ing.notes)})
            if SCALE in ing.frame.columns:  # a file of numbers on the default scale keeps its JSON as it was
                d["scales"] = scales_json(scale_report(ing.frame))
            json.dump(d, sys.stdout, indent=2, ensure_ascii=False)
            sys.stdout.write("\n")
        else:
            print_summary(ing)
    return 0


def add_parser(sub) -> None:
    """Declare ``validate`` on the subcommand parsers ``sub``."""
    v = sub.add_parser("validate", help="check a file and say which analyses it unlocks",
                       description="Read a file, map its columns, validate it and print a summary.")
    add_input_args(v)
    v.add_argument("--json", action="store_true", help="print the summary as JSON")
    v.set_defaults(func=run)
