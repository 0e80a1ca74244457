"""Validation: a table with canonical column names checked and given canonical types.

:func:`validate` raises :class:`~evalcore.errors.DataError` for the first problem, naming the file, the
row or column, and the fix; what the analyst should know but need not fix (decimal commas read, rows
left out, cells that look like formulas or HTML) comes back as notes in :class:`Validated`.
"""

from __future__ import annotations

import copy
import difflib
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..columns import COMPARISONS, HUMAN, JUDGE, RATINGS, TABLES, column_names, required_columns
from ..errors import DataError
from .categories import read_labels
from .codes import data_of, factorize, memo_get, on_threads, prefactorize, remember, same_codes, shared_codes
from .export import FORMULA
from .mapping import detect_table, look_alikes
from .numbers import numeric_column
from .scales import CATEGORY, SCALE
from .strings import (
    INVISIBLE, MISSING_WORDS, NAME_COLUMNS, ROW, by_code, distinct_pairs, distinct_text, is_blank, is_text, row_of,
    show_invisible, strip_text, take_text,
)

_KIND_WORDS = {
    HUMAN: ("human", "humans", "annotator", "annotators", "crowd", "crowdworker", "expert", "person",
            "people", "mturk", "native", "rater_human", "gold", "reference", "true", "yes", "1"),
    JUDGE: ("judge", "judges", "llm", "model", "ai", "machine", "auto", "automatic", "gpt", "evaluator",
            "llm_judge", "false", "no", "0"),
}
_WINNER_WORDS = {
    "a": ("a", "model_a", "output_a", "response_a", "system_a", "first", "left", "1", "output_1",
          "response_1", "output (a)"),
    "b": ("b", "model_b", "output_b", "response_b", "system_b", "second", "right", "2", "output_2",
          "response_2", "output (b)"),
    "tie": ("tie", "draw", "equal", "both", "neither", "same", "tie (bothbad)", "tie_bothbad", "none"),
}
_TRUE = ("true", "t", "yes", "y", "1", "1.0", "swapped")
_FALSE = ("false", "f", "no", "n", "0", "0.0", "", "original", "default")
_HTML = re.compile(r"<\s*/?\s*[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?>|&[a-zA-Z]+;|&#\d+;")

#: Most columns besides evalcore's own that a table keeps (as segments, for grouping): a file of thousands of
#: columns (a transposed table, a feature dump) would otherwise slow every check, every page and every copy.
MAX_EXTRA_COLUMNS = 200


def keep_extra_columns(columns: Sequence[object], *, used: Iterable[str] = (), file: str = "the file",
                       limit: int | None = None) -> tuple[list[str], list[str]]:
    """The columns to keep, and the note saying which extra columns were left out.

    Extra columns are those that are neither canonical (of either table) nor ``used`` (mapped, or a wide
    file's rater columns). The first ``limit`` of them (default :data:`MAX_EXTRA_COLUMNS`), in file order,
    are kept as segments; the others are left out and a note says so.

    >>> keep_extra_columns(["item_id", "a", "b", "c"], limit=2, file="f.csv")[0]
    ['item_id', 'a', 'b']
    """
    limit = MAX_EXTRA_COLUMNS if limit is None else limit
    cols = [str(c) for c in columns]
    known = set(column_names(RATINGS)) | set(column_names(COMPARISONS)) | set(map(str, used)) | {ROW}
    extra = [c for c in cols if c not in known]
    if len(extra) <= limit:
        return cols, []
    dropped = set(extra[limit:])
    shown = ", ".join(f"'{c}'" for c in extra[limit:limit + 3])
    note = (f"{file} has {len(extra):,} columns besides evalcore's own: the first {limit} "
            f"('{extra[0]}' to '{extra[limit - 1]}') are kept as segments, to group results by; the other "
            f"{len(dropped):,} ({shown}, ...) were left out. To keep one of those, map it, or delete the columns "
            "you do not need before importing.")
    return [c for c in cols if c not in dropped], [note]


@dataclass(frozen=True)
class Validated:
    """A canonical table that passed validation, and what the analyst should know about it."""

    table: str
    frame: pd.DataFrame
    notes: tuple[str, ...] = ()


def _norm_words(s: pd.Series, words: Mapping[str, Sequence[str]]) -> pd.Series:
    lookup = {w: k for k, ws in words.items() for w in ws}
    if is_text(s):
        # Map distinct values only: the column may have millions of rows but a handful of values.
        codes, uniq = factorize(s)
        mapped = _map_words(pd.Series(uniq.array, dtype=object), lookup)
        if mapped.dtype == s.dtype and not mapped.isna().any() and (mapped.to_numpy() == uniq.to_numpy()).all():
            return s.rename(s.name)  # already the canonical words (the usual case): nothing to map
        new, merged = pd.factorize(mapped)  # 'Human' and 'human' are one value now
        out = take_text(mapped, codes, s.index).rename(s.name)
        return remember(out, by_code(new.astype(codes.dtype), codes, -1), merged)
    return _map_words(s, lookup)


def _map_words(s: pd.Series, lookup: Mapping[str, str]) -> pd.Series:
    key = s.astype("string").str.strip().str.lower()
    uniq = pd.Series(pd.unique(key.dropna()))
    # A number read as a float (Excel, Parquet, JSON with gaps) reads '1.0': look up '1'.
    table = {u: lookup.get(u, lookup.get(re.sub(r"^([+-]?\d+)\.0+$", r"\1", u))) for u in uniq}
    return key.map(table)


def _excerpt(value: str, limit: int = 40) -> str:
    """A cell quoted in a note: on one line, and cut only between words, with an ellipsis that says it was cut
    (a value cut mid-word or mid-tag reads as a note broken off mid-sentence).

    >>> _excerpt("<p>Resumen: el <b>texto</b> habla de\\nla economía vasca</p>", 30)
    '<p>Resumen: el <b>texto</b>…'
    """
    one = " ".join(value.split())
    if len(one) <= limit:
        return one
    cut = one[:limit].rsplit(" ", 1)[0] if " " in one[:limit] else one[:limit]
    return cut.rstrip() + "…"


def _text_warnings(frame: pd.DataFrame, *, file: str) -> list[str]:
    """Notes for text cells that start like a spreadsheet formula or hold HTML markup."""
    cols = [c for c in frame.columns if c != ROW and not (
        pd.api.types.is_numeric_dtype(frame[c].dtype) or pd.api.types.is_bool_dtype(frame[c].dtype))]
    if not cols:
        return []
    # One pass over every column's distinct values together (not a few string operations per column,
    # which cost seconds on a file of thousands of columns): only values holding one of the characters
    # can match, and only their columns are looked at closely.
    uniqs = [distinct_text(frame[c]) for c in cols]
    values = pd.concat(uniqs, ignore_index=True) if len(uniqs) > 1 else uniqs[0]
    owner = np.repeat(np.arange(len(cols)), [len(u) for u in uniqs])
    maybe = values.str.contains(r"[=+\-@\t\r<&]").fillna(False).to_numpy(dtype=bool)
    notes = []
    for k in np.unique(owner[maybe]):
        col, s, uniq = cols[k], frame[cols[k]], uniqs[k]
        # A number like "-1" starts with "-" but is not a formula.
        starts = uniq[uniq.str.contains(r"[=+\-@\t\r]").fillna(False)]
        starts = starts[starts.str.match(FORMULA).fillna(False)]
        formula = starts[pd.to_numeric(starts, errors="coerce").isna()]
        html = uniq[uniq.str.contains(r"[<&]").fillna(False)]
        html = html[html.str.contains(_HTML).fillna(False)]
        for found, what in ((formula, "formula"), (html, "html")):
            if not len(found):
                continue
            hit = s.astype("string").isin(found).fillna(False)
            n = int(hit.sum())
            row = row_of(frame, hit)
            example = _excerpt(str(found.iloc[0]))
            if what == "formula":
                notes.append(
                    f"{file}, column '{col}': {n} cell(s) start like a spreadsheet formula (first at row "
                    f"{row}: '{example}'). They are kept as plain text, and CSV downloads prefix them with ' "
                    "so that Excel or Sheets will not run them."
                )
            else:
                notes.append(
                    f"{file}, column '{col}': {n} cell(s) hold HTML markup (first at row {row}: "
                    f"'{example}'). They are shown as plain text and never rendered."
                )
    return notes


def _check_required(df: pd.DataFrame, table: str, file: str) -> None:
    """Every required column is present; a missing one gets a hint (a misspelling, the wide layout)."""
    missing = [c for c in required_columns(table) if c not in df.columns]
    if missing:
        col = missing[0]
        others = [c for c in df.columns if c not in column_names(table) and c != ROW]
        hint = difflib.get_close_matches(col, others, n=1, cutoff=0.6)
        if hint:
            fix = (f"the column '{hint[0]}' looks like a misspelling of '{col}': rename it, "
                   f"or map it with --map {hint[0]}={col} (CLI) or in the column mapping (app)")
        else:
            fix = (f"add a '{col}' column, or map one of your columns to it with --map YOURCOLUMN={col} "
                   "(CLI) or in the column mapping (app)")
            if col in ("rater", "score", "winner") and len(others) >= 2:
                fix += "; if your file has one column per annotator or judge, use the wide layout"
        raise DataError(f"required column '{col}' is missing", file=file, column=col, fix=fix)


def _check_look_alikes(df: pd.DataFrame, table: str, file: str) -> None:
    """No other column is named like a canonical column but for case or punctuation ('Score' beside 'score'):
    which of them holds the data is the analyst's call, and an analysis must not meet the other one."""
    for c, twin in look_alikes(df.columns, [c for c in column_names(table) if c in df.columns]).items():
        if c != ROW:
            raise DataError(
                f"two columns could be the '{twin}' column: '{twin}' and '{c}' (their names differ only in case "
                "or punctuation)",
                file=file, column=c,
                fix=f"map the one that holds the {twin.replace('_', ' ')}s (CLI: --map '{c}={twin}' or --map "
                    f"{twin}={twin}; app: the column mapping) and the other is left out, or rename or delete one "
                    "of them",
            )


def _same_system_note(df: pd.DataFrame, file: str) -> list[str]:
    """The note counting comparisons of a system with itself: win rates leave them out (:func:`evalcore.pairwise.pairs.pairs`)."""
    if "system_a" not in df.columns or "system_b" not in df.columns:
        return []
    same = (df["system_a"] == df["system_b"]).fillna(False).to_numpy(dtype=bool)
    if not same.any():
        return []
    first = df["system_a"][same].iloc[0]
    return [f"{file}: {int(same.sum()):,} row(s) compare a system with itself (system_a and system_b are both "
            f"'{first}', first at row {row_of(df, same)}); win rates leave them out."]


def _is_missing_word(s: pd.Series) -> np.ndarray:
    """Cells of ``s`` that are one of :data:`~evalcore.data.strings.MISSING_WORDS` (exactly, as a CSV reader's
    missing values)."""
    if is_text(s):
        codes, uniq = factorize(s)
        hit = np.flatnonzero(np.asarray(pd.Index(uniq).isin(MISSING_WORDS), dtype=bool))
        return np.isin(codes, hit) if len(hit) else np.zeros(len(s), dtype=bool)
    return np.asarray(s.isin(MISSING_WORDS), dtype=bool)


def _missing_words(df: pd.DataFrame) -> None:
    """``NA``, ``null``, ``NaN``... as missing values outside :data:`~evalcore.data.strings.NAME_COLUMNS` (scores,
    verdicts, segments)."""
    for c in df.columns:
        s = df[c]
        if c in NAME_COLUMNS or c == ROW or pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            continue
        words = _is_missing_word(s)
        if words.any():
            df[c] = s.mask(words)


def _check_invisible(df: pd.DataFrame, file: str) -> None:
    """No name holds a character nobody sees (a NUL byte, a control character): it would be a second name that
    looks like the first, whatever the position in the file."""
    for c in NAME_COLUMNS:
        if c not in df.columns or pd.api.types.is_numeric_dtype(df[c].dtype):
            continue
        s = df[c]
        uniq = distinct_text(s)
        bad = uniq[uniq.str.contains(INVISIBLE).fillna(False)]
        if not len(bad):
            continue
        value = str(bad.iloc[0])
        char = re.search(INVISIBLE, value).group(0)
        hit = s.astype("string").isin(bad).fillna(False)
        shown = show_invisible(value)  # the character, made visible
        raise DataError(
            f"{int(hit.sum())} {c.replace('_', ' ')} value(s) hold an invisible control character "
            f"({'a NUL byte' if char == chr(0) else 'U+%04X' % ord(char)}): '{shown}' would count as another "
            f"{c.replace('_', ' ')} than the one it looks like",
            file=file, column=c, row=row_of(df, hit),
            fix="delete the character (it comes from a damaged export or a binary file), or export the file again",
        )


def _check_ids(df: pd.DataFrame, file: str) -> None:
    """``item_id`` and ``rater`` filled on every row, as stripped text (7.0 read as a float becomes '7')."""
    for col in ("item_id", "rater"):
        blank = is_blank(df[col])
        if blank.any():
            raise DataError(
                f"{int(blank.sum())} row(s) have no {col.replace('_', ' ')}",
                file=file, column=col, row=row_of(df, blank),
                fix=f"fill in '{col}' on every row, or delete rows that are not judgments",
            )
        if pd.api.types.is_float_dtype(df[col]) and (df[col] == df[col].round()).all():
            df[col] = df[col].astype("int64")  # 7.0 -> "7", the id the user sees
        df[col] = strip_text(df[col])


def rater_kinds(values: pd.Series) -> pd.Series:
    """``rater_kind`` values as ``'human'`` / ``'judge'`` from any of their spellings (``'LLM'``,
    ``'annotator'``, ``True`` for human...); missing where a value is neither.

    >>> rater_kinds(pd.Series(["Human", "LLM", "robot"])).tolist()
    ['human', 'judge', nan]
    """
    if pd.api.types.is_bool_dtype(values):
        return values.map({True: HUMAN, False: JUDGE})
    return _norm_words(values, _KIND_WORDS)


def _check_rater_kind(df: pd.DataFrame, file: str) -> None:
    """``rater_kind`` is human or judge (in any of their spellings), and one kind per rater."""
    kind_raw = df["rater_kind"]
    kind = rater_kinds(kind_raw)
    bad = kind.isna()
    if bad.any():
        value = kind_raw[bad].iloc[0]
        raise DataError(
            f"rater_kind must be 'human' or 'judge' but is '{'' if pd.isna(value) else value}'"
            + (f" ({int(bad.sum())} such rows)" if bad.sum() > 1 else ""),
            file=file, column="rater_kind", row=row_of(df, bad),
            fix="write 'human' for annotators and 'judge' for LLM evaluators",
        )
    df["rater_kind"] = same_codes(kind.astype("string"), kind)
    rc, ru = factorize(df["rater"])
    kc, ku = factorize(df["rater_kind"])
    # Distinct (rater, kind) pairs: a rater in more than one is marked both ways.
    pairs = distinct_pairs(rc, len(ru), kc, len(ku))
    per_rater = np.bincount(pairs // len(ku), minlength=len(ru))
    if (per_rater > 1).any():
        r = ru[int(np.flatnonzero(per_rater > 1)[0])]
        raise DataError(
            f"rater '{r}' is marked both human and judge",
            file=file, column="rater_kind", row=row_of(df, df["rater"] == r),
            fix="give each rater a single kind, or use different rater names",
        )


def _check_scores(df: pd.DataFrame, file: str, notes: list[str], scale=None, order=None) -> pd.DataFrame:
    """Ratings: the criterion (default 'overall') and the labels, read by criterion
    (:func:`evalcore.data.categories.read_labels`); rows without a label are left out."""
    crit = strip_text(df["criterion"])
    codes, uniq = factorize(crit)
    if (codes < 0).any() or (uniq == "").any():
        crit = crit.fillna("overall")
        crit.loc[crit == ""] = "overall"
    df["criterion"] = crit
    df = read_labels(df, file=file, notes=notes, scale=scale, order=order)
    empty = df["score"].isna()
    if CATEGORY in df.columns:
        empty &= df[CATEGORY].isna()
    if empty.all():
        raise DataError("every score is empty", file=file, column="score",
                        fix="check that the score column holds the ratings")
    if empty.any():
        notes.append(f"{file}: {int(empty.sum())} row(s) with an empty score were left out.")
        df = df.loc[~empty].reset_index(drop=True)
    return df


def _check_ratings(df: pd.DataFrame, file: str, notes: list[str], scale=None,
                   order=None) -> tuple[pd.DataFrame, list[str], str]:
    """Ratings' columns with canonical types; the key of one judgment and the fix for a duplicate."""
    df = _check_scores(df, file, notes, scale, order)
    for col, what in (("sample", "sample"), ("position", "position"), ("perplexity", "perplexity")):
        if col in df.columns:
            df[col] = numeric_column(df, col, file=file, what=what,
                               fix=f"use numbers in '{col}', or leave the cell empty")
    if "sample" in df.columns:
        df["sample"] = df["sample"].fillna(0).astype("int64")
    if "perplexity" in df.columns and (df["perplexity"] <= 0).any():
        bad = df["perplexity"] <= 0
        raise DataError("perplexity must be positive", file=file, column="perplexity",
                        row=row_of(df, bad), fix="perplexity is exp(mean negative log-likelihood) >= 1")
    key = ["item_id", "rater", "criterion"] + (["sample"] if "sample" in df.columns else [])
    fix_dup = ("if a rater judged an item several times, number the repeats in a 'sample' column; "
               "otherwise delete the duplicate row")
    return df, key, fix_dup


def _bool_column(df: pd.DataFrame, col: str, file: str, fix: str) -> None:
    """``df[col]`` as bool from true/false in any of their spellings (empty is false)."""
    sw = df[col]
    if not pd.api.types.is_bool_dtype(sw):
        t = sw.astype("string").str.strip().str.lower().fillna("")
        known = t.isin(_TRUE) | t.isin(_FALSE)
        if (~known).any():
            raise DataError(f"{col} must be true or false but is '{sw[~known].iloc[0]}'",
                            file=file, column=col, row=row_of(df, ~known), fix=fix)
        df[col] = t.isin(_TRUE)
    df[col] = df[col].astype(bool)


def _check_winner(df: pd.DataFrame, file: str) -> None:
    """Comparisons: ``winner`` is a, b or tie (in any of their spellings); ``swapped`` is true or false;
    ``invalid`` (optional) is true or false, and a row marked invalid has an empty winner."""
    if "invalid" in df.columns:
        _bool_column(df, "invalid", file, "write true for a judge output that could not be read as a verdict, "
                                          "false (or nothing) otherwise")
        invalid = df["invalid"].to_numpy()
    else:
        invalid = np.zeros(len(df), dtype=bool)
    w = df["winner"]
    win = _norm_words(w, _WINNER_WORDS)
    bad = win.isna() & ~invalid
    if bad.any():
        value = w[bad].iloc[0]
        raise DataError(
            f"winner must be 'a', 'b' or 'tie' but is '{'' if pd.isna(value) else value}'"
            + (f" ({int(bad.sum())} such rows)" if bad.sum() > 1 else ""),
            file=file, column="winner", row=row_of(df, bad),
            fix="write a, b or tie (in terms of content, not position); for PandaLM's 0/1/2 or Gao et "
                "al.'s 0/1 labels use --preset pandalm or --preset bayescal",
        )
    df["winner"] = win.astype("string").where(~invalid, pd.NA)
    if "swapped" in df.columns:
        _bool_column(df, "swapped", file, "write true for rows shown in swapped order and false otherwise")
    else:
        df["swapped"] = False


def _check_comparisons(df: pd.DataFrame, file: str) -> tuple[pd.DataFrame, list[str], str]:
    """Comparisons' columns with canonical types; the key of one verdict and the fix for a duplicate."""
    _check_winner(df, file)
    for col in ("prob_a", "prob_a_swap_position", "prob_a_swap_id"):
        if col in df.columns:
            df[col] = numeric_column(df, col, file=file, what=col, fix=f"'{col}' holds probabilities in [0, 1]")
            out = (df[col] < 0) | (df[col] > 1)
            if out.any():
                raise DataError(f"{col} must be a probability between 0 and 1", file=file,
                                column=col, row=row_of(df, out),
                                fix="use the normalised probability of 'A', not a logit or a percentage")
    for col in ("score_a", "score_b", "superficial_a", "superficial_b"):
        if col in df.columns:
            df[col] = numeric_column(df, col, file=file, what=col, fix=f"use numbers in '{col}'")
    for col in ("system_a", "system_b"):
        if col in df.columns:
            df[col] = df[col].astype("string").str.strip()
    for col in ("text_a", "text_b"):
        if col in df.columns:
            df[col] = df[col].astype("string")
    key = ["item_id", "rater", "swapped"] + [c for c in ("system_a", "system_b") if c in df.columns]
    fix_dup = "each rater gives one verdict per item and order; delete the duplicate row"
    return df, key, fix_dup


def _check_duplicates(df: pd.DataFrame, key: list[str], file: str, fix_dup: str) -> None:
    """No two rows are the same judgment (same ``key``); the message names both rows."""
    # One integer per row for the key (the columns' codes combined): hashing ints, not strings.
    factors = [factorize(df[k]) for k in key]
    widths = [len(uniq) + 1 for _, uniq in factors]
    small = int(np.prod(np.asarray(widths, dtype=float))) < 2**31
    combined, span = np.zeros(len(df), dtype=np.int32 if small else np.int64), 1  # combined < span
    for (codes, _), width in zip(factors, widths):
        if span * width >= 2**62:  # renumber before the product overflows
            combined = pd.factorize(combined)[0].astype(np.int64)
            span = int(combined.max(initial=0)) + 1
        combined *= width
        combined += codes
        combined += 1
        span *= width
    if span < 4 * len(df) + 1024:  # count in a table: no hashing
        counts = np.bincount(combined, minlength=span)
        dup = pd.Series(counts[combined] > 1 if counts.max(initial=0) > 1 else False, index=df.index)
    else:
        dup = pd.Series(combined, index=df.index).duplicated(keep=False)
    if dup.any():
        # The first duplicated row and the first other row with the same key (not just the
        # next duplicated row, which may belong to another judgment).
        first = df.loc[dup].iloc[0]
        same = dup.copy()
        for k in key:
            same &= (df[k] == first[k]).fillna(False) if pd.notna(first[k]) else df[k].isna()
        rows = df.loc[same, ROW].head(2).tolist()
        what = ", ".join(f"{k}={first[k]}" for k in key if k in ("item_id", "rater", "criterion", "sample", "swapped"))
        raise DataError(
            f"rows {rows[0]} and {rows[1]} are the same judgment ({what})"
            + (f"; {int(dup.sum())} rows are duplicates" if dup.sum() > 2 else ""),
            file=file, fix=fix_dup,
        )


def _check_both_kinds(df: pd.DataFrame, file: str) -> None:
    """At least one human row and one judge row."""
    kinds = set(factorize(df["rater_kind"])[1])
    if HUMAN not in kinds or JUDGE not in kinds:
        lacking = HUMAN if HUMAN not in kinds else JUDGE
        raise DataError(
            f"there are no {lacking} rows: evalcore audits judges against humans and needs both",
            file=file, column="rater_kind",
            fix=("add the human annotations (rater_kind=human)" if lacking == HUMAN else
                 "add the judge's ratings (rater_kind=judge)")
            + ", or check that rater_kind is mapped to the right column",
        )


def _reorder(df: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """``df.iloc[order]``; a string column whose codes are known is rebuilt from its distinct values.

    Gathering a million strings from all over a big column is slow; gathering them from a column's
    few distinct values (by the reordered codes) gives the same column faster.
    """
    cols, hits = {}, {}
    for c in df.columns:
        s = df[c]
        arr = data_of(s)
        hit = memo_get((arr, "codes", id(arr))) if arr is not None and is_text(s) else None
        if hit is None:
            cols[c] = s.array.take(order)
        else:
            hits[c] = hit

    def gather(hit: tuple[np.ndarray, pd.Index]) -> tuple[np.ndarray, pd.Index, object]:
        codes, uniques = hit
        if codes.dtype != np.int32 and len(uniques) < 2**31:  # half the memory to gather from all over
            codes = codes.astype(np.int32)
        codes, uniques = _first_appearance(codes[order], uniques)
        return codes, uniques, uniques.array.take(codes, allow_fill=True)

    # numpy's gathers and Arrow's take release the GIL: a million-row shuffled file's five text columns are
    # rebuilt on two threads in about half the time (measured: 35 -> 20 ms for the takes alone).
    parallel = len(df) >= _PARALLEL_ROWS
    done = dict(zip(hits, on_threads(gather, list(hits.values())) if parallel else map(gather, hits.values())))
    cols.update({c: column for c, (_, _, column) in done.items()})
    out = pd.DataFrame(cols, index=df.index[order], columns=df.columns, copy=False)
    out.attrs = copy.deepcopy(df.attrs)  # as iloc does
    for c, (codes, uniques, _) in done.items():  # the summary counts the reordered columns again
        remember(out[c], codes, uniques)
    return out


def _first_appearance(codes: np.ndarray, uniques: pd.Index) -> tuple[np.ndarray, pd.Index]:
    """Codes (and their distinct values) renumbered in order of first appearance, as ``pandas.factorize`` numbers
    them: the agreement table's counting then takes them instead of hashing the column again
    (:func:`evalcore.data.hashing.known_codes`). Codes already in that order (the item ids, after the rows were
    grouped by item) are kept.

    Why a growing prefix: a column of a few values (languages, criteria, raters) shows them all within its first
    rows, so hashing those rows gives the order that hashing the million would (a few milliseconds saved per
    column); a column whose values keep coming (item ids) falls back to the whole column, as before.
    """
    m, checked = 4096, False
    while True:
        seen = pd.unique(codes[:m])
        seen = seen[seen >= 0]  # -1: a missing value, which stays -1
        in_order = bool((seen == np.arange(len(seen))).all())
        if len(seen) == len(uniques) or m >= len(codes):
            break
        if in_order and not checked:  # perhaps in order throughout (item ids): one look at the whole column
            checked = True
            reached = np.maximum.accumulate(codes)
            if reached[0] <= 0 and not (np.diff(reached) > 1).any():
                return codes, uniques
        m *= 8
    if len(seen) != len(uniques) or in_order:
        return codes, uniques
    renumber = np.full(len(uniques) + 1, -1, dtype=codes.dtype)  # the last entry: code -1 stays -1
    renumber[seen] = np.arange(len(seen), dtype=codes.dtype)
    return renumber[codes], uniques.take(seen)


def _stable_order(codes: np.ndarray) -> np.ndarray:
    """``np.argsort(codes, kind="stable")`` for non-negative codes, as numpy's radix sorts of 16-bit keys:
    one pass when the codes fit in 16 bits, else two (low half, then high half), 4-5x faster than the
    merge sort numpy uses for wider keys (a million rows: 22 ms against 107 ms)."""
    top = int(codes.max()) if len(codes) else 0
    if top < 2**16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    if top >= 2**32:
        return np.argsort(codes, kind="stable")
    low = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((codes[low] >> 16).astype(np.uint16), kind="stable")]


def _canonical_layout(df: pd.DataFrame, table: str) -> pd.DataFrame:
    """Ratings grouped by item; the row numbers dropped; canonical columns first, in their order."""
    df = df.drop(columns=[ROW])  # before any reordering: the row numbers need not be carried along
    if table == RATINGS:
        # Each item's judgments together, items in order of first appearance (a stable sort keeps each
        # item's rows in file order): how a long table reads, and what agreement.count_units counts fastest.
        codes = factorize(df["item_id"])[0]
        if len(codes) > 1 and (np.diff(codes) < 0).any():
            df = _reorder(df, _stable_order(codes))
    df = df.reset_index(drop=True)
    order = [c for c in column_names(table) if c in df.columns]
    return df[order + [c for c in df.columns if c not in order]]


def validate(frame: pd.DataFrame, *, table: str | None = None, file: str = "the file",
             blank_text: bool = False, scale: str | Mapping[str, str] | None = None,
             order: Mapping[str, str | Sequence[str]] | Sequence[str] | None = None) -> Validated:
    """Check a frame with canonical column names and return it with canonical types.

    Checks, each raising :class:`DataError` naming the file, row or column, and the fix:
    required columns present (with a hint for a misspelt one); no empty ids; known
    ``rater_kind``; scores that are numbers or text labels, read criterion by criterion
    (:func:`evalcore.data.categories.read_labels`); ``winner`` in a/b/tie; no duplicate judgments
    (same item, rater, criterion and sample; or same item, rater and order for
    comparisons); at least one human and one judge row.

    Cells that look like spreadsheet formulas or HTML are kept as text and reported
    in ``notes`` (they are neutralised on export by :func:`evalcore.data.export.csv_safe`).

    Parameters
    ----------
    frame
        Table with canonical column names (see :func:`evalcore.data.mapping.apply_mapping`).
    table
        ``ratings`` or ``comparisons``; guessed from the columns when omitted.
    file
        Name used in messages.
    blank_text
        The file cannot tell an empty cell from a missing one (CSV, TSV, Excel): a missing cell of a text
        column (:data:`TEXT_COLUMNS`) is then the empty text of its output, unless another row of the same
        output holds the text (a text written once per item) or the column holds no text at all. Either way
        an empty text is kept as an output of length 0, and a note counts them (:func:`_empty_texts`).
    scale
        Ratings: the scale of each criterion, ``{criterion: 'nominal' | 'ordinal' | 'interval'}`` (``'*'`` for
        every criterion), or one scale for all. By default text labels are nominal and numbers ordinal.
    order
        Ratings: ``{criterion: ['bad', 'ok', 'good']}``, the order of a criterion's text labels, lowest first:
        its scores become their positions 1..k (see :func:`evalcore.data.categories.declarations`).

    Examples
    --------
    >>> frame = pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"], "rater": ["ann", "gpt-4"] * 2,
    ...                       "rater_kind": ["human", "judge"] * 2, "score": ["yes", "no", "no", "no"]})
    >>> validate(frame).frame[["score", "category", "scale"]].values.tolist()[:2]
    [[nan, 'yes', 'nominal'], [nan, 'no', 'nominal']]
    >>> validate(frame, order={"overall": "no,yes"}).frame["score"].tolist()
    [2.0, 1.0, 1.0, 1.0]
    """
    if table is None:
        table = detect_table(frame.columns)
    if table not in TABLES:
        raise DataError(f"unknown table '{table}'", file=file, fix="use 'ratings' or 'comparisons'")
    if table == COMPARISONS and (scale or order):
        raise DataError("scales and orders are declared for the criteria of ratings, and this is a comparisons "
                        "table", file=file,
                        fix="leave the scales and orders out (--scale, --order): verdicts are a, b or tie")
    with shared_codes():
        return _validate(frame, table, file, blank_text, scale, order)


#: The columns holding the judged outputs' texts: an empty text is a real output, of length 0.
TEXT_COLUMNS = ("text", "text_a", "text_b")


def _empty_texts(df: pd.DataFrame, file: str, *, blank_text: bool) -> list[str]:
    """Keep empty texts as outputs of length 0 (and, with ``blank_text``, read blank cells so); the note counting them.

    Why: an output the generator left empty is a real output, the shortest there is. Read as missing, its
    item silently left every length-based measure (the length-controlled win rate of PandaLM's
    bloom-7b vs cerebras-gpt-6.7B went from 96 items to 92).
    """
    cols = [c for c in TEXT_COLUMNS if c in df.columns]
    if not cols:
        return []
    key = [df[k] for k in ("item_id", "system_a", "system_b") if k in df.columns]  # one output's rows
    counts = []
    for col in cols:
        s = df[col].astype("string")
        missing = s.isna()
        if blank_text and missing.any() and not missing.all():
            told = (~missing).groupby(key, dropna=False, sort=False).transform("any").to_numpy(dtype=bool)
            s = s.mask(missing & ~told, "")
            df[col] = s
        empty = (s == "").fillna(False).to_numpy(dtype=bool)
        if empty.any():
            n = len(pd.MultiIndex.from_arrays([k[empty] for k in key]).unique())
            counts.append(f"{col} of {n:,} item(s)")
    if not counts:
        return []
    return [f"{file}: empty output texts ({'; '.join(counts)}) were kept as outputs of length 0, not as missing "
            "texts, so their items stay in the length-based measures."]


def _stray_category(df: pd.DataFrame, file: str) -> tuple[pd.DataFrame, list[str]]:
    """A ratings table's ``category`` column without a ``scale`` column: not the labels evalcore writes (they
    come with their scale) but a column of the user's, kept as a segment under another name."""
    if CATEGORY not in df.columns or SCALE in df.columns:
        return df, []
    new = f"{CATEGORY}_in_file"
    while new in df.columns:
        new += "_"
    return df.rename(columns={CATEGORY: new}), [
        f"{file}: the column '{CATEGORY}' was kept as '{new}': evalcore's '{CATEGORY}' column holds the labels as "
        f"written, beside a '{SCALE}' column, and this file has none. Map the column with the ratings to score."]


#: From how many rows :func:`_validate` factorises the text columns on threads (below, the threads' start-up costs
#: about what they save).
_PARALLEL_ROWS = 100_000


def _validate(frame: pd.DataFrame, table: str, file: str, blank_text: bool = False, scale=None,
              order=None) -> Validated:
    if len(frame) == 0:
        raise DataError("has no data rows", file=file, fix="add at least one judgment below the header")
    keep, notes = keep_extra_columns(frame.columns, file=file)
    if len(keep) < frame.shape[1]:  # a file of thousands of columns: copy only those kept
        kept = set(keep)
        frame = frame.iloc[:, [i for i, c in enumerate(map(str, frame.columns)) if c in kept]]
    df = frame.copy()
    df.columns = [str(c) for c in df.columns]
    if ROW not in df.columns:
        df[ROW] = np.arange(len(df)) + 2
    if "criterion" not in df.columns and table == RATINGS:
        df["criterion"] = "overall"
    if table == RATINGS:
        df, moved = _stray_category(df, file)
        notes.extend(moved)
    _check_required(df, table, file)
    _check_look_alikes(df, table, file)
    if len(df) >= _PARALLEL_ROWS:  # the checks below factorise every text column: all at once, on threads
        prefactorize([df[c] for c in ("item_id", *df.columns) if c in df.columns and is_text(df[c])])
    _missing_words(df)
    _check_invisible(df, file)
    _check_ids(df, file)
    _check_rater_kind(df, file)
    if table == RATINGS:
        df, key, fix_dup = _check_ratings(df, file, notes, scale, order)
    else:
        df, key, fix_dup = _check_comparisons(df, file)
        notes.extend(_same_system_note(df, file))
    _check_duplicates(df, key, file, fix_dup)
    _check_both_kinds(df, file)
    notes.extend(_empty_texts(df, file, blank_text=blank_text))
    notes.extend(_text_warnings(df, file=file))
    return Validated(table=table, frame=_canonical_layout(df, table), notes=tuple(notes))

