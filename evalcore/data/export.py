"""Tables and file names made safe to hand out: CSV downloads without formulas, portable file names."""

from __future__ import annotations

import re

import pandas as pd

#: A cell that a spreadsheet would run as a formula: it starts with =, +, -, @, a tab or a carriage return.
FORMULA = re.compile(r"^\s*[=+\-@\t\r]")


def safe_file_name(name: str, *, limit: int = 120) -> str:
    """A download's file name that every operating system accepts: characters other than letters, digits,
    ``.``, ``-`` and ``_`` (``:`` from a dataset name, ``/`` from a judge such as ``gpt-4/score-only``)
    become ``_``, runs of them one, and the stem is cut to ``limit`` characters, keeping the extension.

    >>> safe_file_name("winrate_llama-2-70b/pairwise_vs_gpt-4: v2.csv")
    'winrate_llama-2-70b_pairwise_vs_gpt-4_v2.csv'
    >>> safe_file_name("sample (2)-ratings-report.html")
    'sample_2_-ratings-report.html'
    """
    stem, dot, ext = str(name).rpartition(".")
    if not dot or not re.fullmatch(r"[A-Za-z0-9]{1,8}", ext):
        stem, dot, ext = str(name), "", ""
    stem = re.sub(r"[^\w.-]+", "_", stem, flags=re.ASCII).strip("._") or "download"
    return stem[:limit] + dot + ext


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a copy safe to open in a spreadsheet: text cells starting like a formula get a leading '.

    Defends against CSV injection (OWASP): ``=HYPERLINK(...)`` in an exported CSV would
    otherwise run when an analyst opens it in Excel or Sheets.
    """
    out = frame.copy()
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            continue
        text = s.astype("string")
        risky = text.str.match(FORMULA).fillna(False) & pd.to_numeric(text, errors="coerce").isna()
        if risky.any():
            out[col] = text.where(~risky, "'" + text)
    # Column names become the header row: neutralise them the same way.
    names = [str(c) for c in out.columns]
    if any(FORMULA.match(n) and pd.isna(pd.to_numeric(n, errors="coerce")) for n in names):
        out.columns = ["'" + n if FORMULA.match(n) and pd.isna(pd.to_numeric(n, errors="coerce")) else n
                       for n in names]
    return out
