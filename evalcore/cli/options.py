"""What every command shares: the input options, loading the input, and writing results.

:func:`add_input_args` declares the file and mapping options, :func:`load_input` reads the file
(a preset, a plain table or a wide file) into a validated table, :func:`load_table` insists on
the table kind a command needs, and :func:`records` / :func:`text_table` turn a result into
JSON records or a terminal table.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from ..columns import TABLES
from ..data import schema
from ..errors import DataError


def _mapping(pairs: Sequence[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs or []:
        if "=" not in p:
            raise DataError(f"--map expects SOURCE=CANONICAL, got '{p}'",
                            fix="write e.g. --map annotator=rater --map grade=score")
        src, dst = p.split("=", 1)
        out[src.strip()] = dst.strip()
    return out


def add_input_args(p: argparse.ArgumentParser) -> None:
    """The input options of every command: the files, the preset, the column mapping, wide files."""
    from ..data.presets import PRESETS

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
                        "by default raters named like models (gpt, claude, llama, qwen, prometheus, judge, ...; "
                        "see evalcore.data.raters) are judges")


def add_audit_args(p: argparse.ArgumentParser, *, by_help: str, judge_help: str, boot_help: str) -> None:
    """Options shared by the analysis commands: grouping, judges, bootstrap, output."""
    add_input_args(p)
    p.add_argument("--by", nargs="+", metavar="COL", help=by_help)
    p.add_argument("--judge", action="append", metavar="NAME", help=judge_help)
    p.add_argument("--boot", type=int, default=1000, metavar="N", help=boot_help)
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    p.add_argument("--json", action="store_true", help="print tidy JSON records")


def add_engine_arg(p: argparse.ArgumentParser) -> None:
    """``--engine``: compute the statistics in an engine (:mod:`evalcore.scale`), for data larger than memory."""
    p.add_argument("--engine", metavar="ENGINE",
                   help="compute the counts in an engine instead of in memory: duckdb, spark (the master from the "
                        "usual Spark settings, or spark:MASTER) or an ibis URL (trino://..., bigquery://...); FILE is "
                        "then a Parquet or CSV file, a folder of Parquet files, or a table of the engine "
                        "(needs pip install 'evalcore[scale]')")


def engine_table(args: argparse.Namespace):
    """The one input of ``--engine`` as an ibis table on that engine, ``--map`` applied (:mod:`evalcore.scale`)."""
    from ..scale.engine import connect, read

    if len(args.files) != 1 or args.wide_humans or args.wide_judges or args.preset not in ("auto", "none"):
        raise DataError("--engine reads one ratings table in the canonical columns (no preset, no wide file)",
                        fix="give one Parquet or CSV file, a folder of Parquet files or a table; convert other "
                            "formats with evalcore validate first")
    table = read(connect(args.engine), args.files[0])
    mapping = _mapping(args.map)
    unknown = [c for c in mapping if c not in table.columns]
    if unknown:
        raise DataError(f"--map names a column the table lacks: '{unknown[0]}'", column=unknown[0],
                        fix="choose from: " + ", ".join(table.columns))
    return table.rename({dst: src for src, dst in mapping.items()}) if mapping else table


def load_input(args: argparse.Namespace):
    """The input of a command, read and validated (an :class:`~evalcore.data.ingest.Ingested`)."""
    from ..data.ingest import load

    mapping = _mapping(args.map)
    wide = None
    if args.wide_humans or args.wide_judges:
        from ..data import io

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
        from ..data.presets import detect_preset
        from pathlib import Path

        preset = detect_preset([Path(f) for f in args.files])
    return load(args.files, preset=preset, mapping=mapping, table=args.table, sheet=args.sheet,
                delimiter=args.delimiter, wide=wide, judge_raters=args.judge_rater)


_NEEDS = {
    "ratings": ("this command needs pointwise ratings", "pairwise comparisons",
                "give a ratings file (item_id, rater, rater_kind, criterion, score)"),
    "comparisons": ("win rates need pairwise comparisons", "pointwise ratings",
                    "give a comparisons file (item_id, system_a, system_b, rater, rater_kind, winner)"),
}


def load_table(args: argparse.Namespace, table: str):
    """Load the input and insist it is a ``table`` (one message naming the fix otherwise)."""
    ing = load_input(args)
    if ing.table != table:
        need, other, fix = _NEEDS[table]
        raise DataError(f"{need}, but {ing.source} holds {other}", fix=fix)
    return ing


def records(frame) -> list[dict]:
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


def text_table(frame, *, undefined: str = "") -> str:
    """A result table for the terminal: numbers to 3 decimals; an undefined estimate shows ``undefined``."""
    shown = frame.copy()
    for c in ("estimate", "ci_low", "ci_high"):
        blank = undefined if c == "estimate" else ""
        shown[c] = shown[c].map(lambda v, blank=blank: blank if v != v else f"{v:.3f}")
    return shown.to_string(index=False)
