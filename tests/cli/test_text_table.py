"""`text_table` (evalcore.cli.options) builds the terminal table itself: byte for byte what pandas'
``to_string(index=False)`` prints for the formatted copy, on the tables every command prints (sample and real
data) and on the edge cases of pandas' formatter."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import agreement, bias, main, position, superficial, winrate
from evalcore.cli.options import text_table
from tests.helpers import (
    HANNA,
    LLMBAR,
    PANDALM,
    ROOT,
    SAMPLE,
    SAMPLE_PAIRS,
    needs_datasets,
)


def reference(frame: pd.DataFrame, undefined: str = "") -> str:
    """text_table before it built the text itself: the formatted copy through pandas' to_string."""
    shown = frame.copy()
    for c in ("estimate", "ci_low", "ci_high"):
        blank = undefined if c == "estimate" else ""
        shown[c] = shown[c].map(lambda v, blank=blank: blank if v != v else f"{v:.3f}")
    return shown.to_string(index=False)


def fast(frame: pd.DataFrame, undefined: str, monkeypatch) -> str:
    """text_table with DataFrame.to_string unavailable: the frame must take the fast path."""
    def boom(*args, **kwargs):
        raise AssertionError("text_table fell back to DataFrame.to_string")

    with monkeypatch.context() as m:
        m.setattr(pd.DataFrame, "to_string", boom)
        return text_table(frame, undefined=undefined)


@pytest.fixture
def printed(monkeypatch):
    """Every (frame, undefined) a command passes to text_table, recorded as the command runs."""
    seen: list[tuple[pd.DataFrame, str]] = []

    def spy(frame, *, undefined=""):
        seen.append((frame.copy(), undefined))
        return text_table(frame, undefined=undefined)

    for module in (agreement, bias, position, superficial, winrate):
        monkeypatch.setattr(module, "text_table", spy)
    return seen


def run_and_compare(argv: list[str], printed, capsys, monkeypatch, *, tables: int = 1) -> list[pd.DataFrame]:
    """Run the command; each table it printed equals the reference and took the fast path."""
    assert main([str(a) for a in argv]) == 0
    out = capsys.readouterr().out
    assert len(printed) == tables
    for frame, undefined in printed:
        expected = reference(frame, undefined)
        got = fast(frame, undefined, monkeypatch)
        assert got == expected
        assert got in out
        assert got.count("\n") == len(frame)  # the header, then one line per row
    return [frame for frame, _ in printed]


SAMPLE_COMMANDS = {
    "agreement": (["agreement", SAMPLE, "--boot", "30", "--all"], 1),
    "agreement_no_intervals": (["agreement", SAMPLE, "--by", "none", "--boot", "0", "--all"], 1),
    "leaderboard": (["agreement", SAMPLE, "--leaderboard", "--boot", "20"], 1),
    "pairs": (["agreement", SAMPLE, "--pairs", "--boot", "20"], 1),
    "bias": (["bias", SAMPLE, "--boot", "100"], 2),
    "bias_by_language": (["bias", SAMPLE, "--by", "language", "--boot", "50"], 2),
    "accuracy": (["winrate", SAMPLE_PAIRS, "--accuracy", "--by", "subset", "--boot", "50"], 1),
    "superficial_pairwise": (["superficial", SAMPLE_PAIRS, "--q", "superficial", "--alphas", "0:1:0.25",
                              "--boot", "20"], 1),
    "superficial_pointwise": (["superficial", SAMPLE, "--q", "perplexity", "--alphas", "0:1:0.5", "--boot", "20"], 1),
    "position": (["position", SAMPLE_PAIRS, "--boot", "20"], 1),
}


@pytest.mark.parametrize("name", list(SAMPLE_COMMANDS))
def test_the_sample_tables_of_every_command(name, printed, capsys, monkeypatch):
    argv, tables = SAMPLE_COMMANDS[name]
    frames = run_and_compare(argv, printed, capsys, monkeypatch, tables=tables)
    assert all(len(f) > 0 for f in frames)


def test_what_the_sample_tables_hold(printed, capsys, monkeypatch):
    """The dtypes the fast path must match are really there: an Int64 rank, a bool, str, object and int columns."""
    (board,) = run_and_compare(["agreement", SAMPLE, "--leaderboard", "--boot", "20"], printed, capsys, monkeypatch)
    assert str(board["rank"].dtype) == "Int64" and board["worse_than_best"].dtype == bool
    assert board["diff_to_best"].dtype == float
    printed.clear()
    (table,) = run_and_compare(["agreement", SAMPLE, "--boot", "0", "--all"], printed, capsys, monkeypatch)
    assert table["judge"].dtype == object and table["n"].dtype == np.int64
    assert table["estimate"].isna().any()  # undefined estimates: "not defined"
    text = text_table(table, undefined="not defined")
    assert "not defined" in text and text.splitlines()[0].split() == list(table.columns)


def test_the_benchmark_table(tmp_path, printed, capsys, monkeypatch):
    """The agreement table of benchmarks/bench_agreement.py's file (8 languages x 5 criteria: 1,600 rows)."""
    spec = importlib.util.spec_from_file_location("bench_agreement", ROOT / "benchmarks" / "bench_agreement.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = tmp_path / "f.csv"
    bench.make_file(path, n_items=800)
    (table,) = run_and_compare(["agreement", path, "--boot", "20", "--all"], printed, capsys, monkeypatch)
    assert len(table) == 1600


def _llmbar(strategy: str) -> list[str]:
    return [str(LLMBAR / f"{subset}/evaluators/GPT-4/{strategy}/result.json")
            for subset in ("Natural", "Adversarial/Neighbor")]


REAL_COMMANDS = {
    "hanna_agreement": (["agreement", HANNA, "--preset", "hanna", "--by", "criterion", "--judge", "ChatGPT/prompt1",
                         "--boot", "20", "--all"], 1),
    "hanna_pairs": (["agreement", HANNA, "--preset", "hanna", "--pairs", "--judge", "ChatGPT/prompt1",
                     "--boot", "10"], 1),
    "hanna_bias": (["bias", HANNA, "--preset", "hanna", "--judge", "ChatGPT/prompt1", "--boot", "50"], 2),
    "hanna_superficial": (["superficial", HANNA, "--preset", "hanna", "--judge", "ChatGPT/prompt1", "--q",
                           "text_length", "--alphas", "0:1:0.5", "--boot", "20"], 1),
    "llmbar_position": (["position", *_llmbar("Vanilla_NoRules"), "--preset", "llmbar", "--boot", "20"], 1),
    "llmbar_superficial": (["superficial", *_llmbar("Rating_NoRules"), "--preset", "llmbar", "--by", "subset",
                            "--alphas", "0:1:0.25", "--boot", "20"], 1),
    "pandalm_accuracy": (["winrate", PANDALM, "--accuracy", "--by", "task", "--boot", "20"], 1),
    "pandalm_length_controlled": (["superficial", PANDALM, "--preset", "pandalm", "--length-controlled", "--judge",
                                   "pandalm-7b", "--boot", "20"], 1),
}


@needs_datasets
@pytest.mark.parametrize("name", list(REAL_COMMANDS))
def test_the_real_data_tables_of_every_command(name, printed, capsys, monkeypatch):
    argv, tables = REAL_COMMANDS[name]
    frames = run_and_compare(argv, printed, capsys, monkeypatch, tables=tables)
    assert all(len(f) > 0 for f in frames)


@needs_datasets
def test_hanna_agreement_has_integer_counts_with_gaps(printed, capsys, monkeypatch):
    """HANNA's agreement table with system-level rows: counts that a gap made floats are printed as whole
    numbers (issue 23: "360.0"), a missing count as nothing."""
    argv, _ = REAL_COMMANDS["hanna_agreement"]
    (table,) = run_and_compare(argv, printed, capsys, monkeypatch)
    counts = table["n_systems"].astype(str)
    assert (counts == "").any() and counts[counts != ""].str.fullmatch(r"\d+").all()


# --- edge cases, each compared with to_string of the same formatted copy ---------------------------------


def _frame(n: int = 3, **cols) -> pd.DataFrame:
    est = np.array([0.5, np.nan, -0.123456, 1.0, 12345.678, -0.0])[np.arange(n) % 6]
    return pd.DataFrame({**cols, "estimate": est, "ci_low": est - 0.1, "ci_high": np.where(np.isnan(est), 1.0, np.nan)})


EDGE = {
    "one row": _frame(1, judge=["gpt-4"]),
    "names longer than values": _frame(2, a_very_long_column_name=["x", "y"], count_of_things=[1, 2]),
    "values longer than names": _frame(2, j=["a judge with a long name", "b"], k=[123456789, -5]),
    "None NaN NA in an object column": _frame(4, judge=pd.Series(["h", None, np.nan, pd.NA], dtype=object)),
    "all missing object column": _frame(3, judge=pd.Series([None, np.nan, None], dtype=object)),
    "str dtype with NaN": _frame(3, lang=pd.Series(["en", None, "fr"], dtype="str")),
    "string dtype with NA": _frame(3, lang=pd.Series(["en", None, "fr"], dtype="string")),
    "bool": _frame(2, flagged=[True, False]),
    "nullable boolean": _frame(3, flagged=pd.array([True, None, False], dtype="boolean")),
    "Int64 with NA": _frame(3, rank=pd.array([1, None, 30], dtype="Int64")),
    "ints of other widths": _frame(3, a=np.array([1, 2, 255], dtype=np.uint8), b=np.array([-7, 0, 2**40])),
    "floats": _frame(4, p_value=[0.05, 1.0, np.nan, 0.123456789], q_value=[1e-9, 0.5, 1.0, np.nan]),
    "large floats": _frame(3, x=[1e7, 2.5, np.inf], y=[-np.inf, 0.0, -0.0]),
    "float NaN only": _frame(2, x=[np.nan, np.nan]),
    "Float64 with NA": _frame(3, x=pd.array([0.25, None, 3.0], dtype="Float64")),
    "categorical": _frame(3, crit=pd.Categorical(["LA", None, "OCQ"])),
    "int categorical": _frame(3, crit=pd.Categorical([1, 2, 1])),
    "multi-line, tab and carriage return": _frame(3, note=["line one\nline two", "a\tb", "c\r\nd"]),
    "multi-line str dtype": _frame(2, note=pd.Series(["x\ny", "z"], dtype="str")),
    "very long strings": _frame(2, note=["w" * 300, "short"]),
    "unicode and East Asian text": _frame(3, lang=["日本語", "Kiswahili", "বাংলা"], note=["é", "ß" * 3, "中文 text"]),
    "spaces and empty strings": _frame(3, note=["  leading", "trailing  ", ""]),
    "numbers in an object column": _frame(4, mixed=pd.Series(["a", 1, 2.5, None], dtype=object)),
    "floats in an object column": _frame(2, mixed=pd.Series([0.5, 1.25], dtype=object)),
    "bytes and lists in an object column": _frame(2, mixed=pd.Series([b"x", [1, 2]], dtype=object)),
    "NaT in an object column": _frame(2, mixed=pd.Series(["a", pd.NaT], dtype=object)),
    "datetimes and durations": _frame(2, when=pd.to_datetime(["2024-01-01", None]),
                                      took=pd.to_timedelta(["1s", "2 days"])),
    "time zones": _frame(2, when=pd.to_datetime(["2024-01-01 10:00", "2024-06-01 00:00"]).tz_localize("UTC")),
    "complex": _frame(2, z=[1 + 2j, -0.5j]),
    "a header with a line break": _frame(2, **{"two\nlines": ["a", "b"]}),
    "a header with leading spaces": _frame(2, **{"  indented": ["a", "b"]}),
    "non-string column names": _frame(2, judge=["a", "b"]).rename(columns={"judge": 7}),
    "only the estimate columns": _frame(3),
    "all estimates undefined": _frame(2, judge=["a", "b"]).assign(estimate=np.nan, ci_low=np.nan, ci_high=np.nan),
    "float32 estimates": _frame(2, judge=["a", "b"]).astype({"estimate": np.float32, "ci_low": np.float32}),
}


@pytest.mark.parametrize("name", list(EDGE))
@pytest.mark.parametrize("undefined", ["", "not defined"])
def test_edge_cases_take_the_fast_path_and_match(name, undefined, monkeypatch):
    frame = EDGE[name]
    assert fast(frame, undefined, monkeypatch) == reference(frame, undefined)


FALLBACK = {
    "empty frame": _frame(0, judge=pd.Series([], dtype=object)),
    "repeated column names": pd.concat([_frame(2, judge=["a", "b"]), pd.DataFrame({"judge": ["c", "d"]})], axis=1),
    "integer estimates": pd.DataFrame({"judge": ["a", "b"], "estimate": [1, 2], "ci_low": [0.0, 1.0],
                                       "ci_high": [2.0, 3.0]}),
    "no rows, only the estimate columns": _frame(0),
}


@pytest.mark.parametrize("name", list(FALLBACK))
def test_frames_outside_the_fast_path_use_to_string(name, monkeypatch):
    frame = FALLBACK[name]
    expected = reference(frame, "undefined")
    assert text_table(frame, undefined="undefined") == expected
    with pytest.raises(AssertionError, match="fell back"):
        fast(frame, "undefined", monkeypatch)
    if name == "empty frame":
        assert expected.startswith("Empty DataFrame")


def test_multiindex_columns_fail_as_before():
    """Two column levels: the estimate columns are not found by name, a KeyError as before."""
    frame = _frame(2, judge=["a", "b"])
    frame.columns = pd.MultiIndex.from_arrays([["x"] * 4, frame.columns])
    with pytest.raises(KeyError):
        reference(frame)
    with pytest.raises(KeyError):
        text_table(frame)


def test_display_options(monkeypatch):
    """Options to_string reads: the fast path follows them (precision) or leaves them to to_string."""
    frame = _frame(3, judge=["日本語", "b", "c"], p=[0.123456789, 2.0, np.nan], note=["w" * 80, "", "x"])
    for option, value, takes_fast_path in [("display.precision", 2, True), ("display.max_colwidth", 10, True),
                                           ("display.unicode.east_asian_width", True, False),
                                           ("display.colheader_justify", "left", False)]:
        with pd.option_context(option, value):
            expected = reference(frame, "undefined")
            assert text_table(frame, undefined="undefined") == expected
            if takes_fast_path:
                assert fast(frame, "undefined", monkeypatch) == expected
    with pd.option_context("display.unicode.east_asian_width", True):  # 日本語 counts as 6 columns there
        wide = text_table(frame, undefined="undefined")
    assert wide != text_table(frame, undefined="undefined")


def test_random_frames(monkeypatch):
    """Seeded random tables mixing every kind of column and missing value."""
    rng = np.random.default_rng(7)
    words = ["", "a", "gpt-4", "ann 3", "日本", "x\ny", "t\tab", "long " * 15, " pad ", "None", "NaN"]

    def column(kind: str, n: int):
        miss = rng.random(n) < 0.3
        if kind == "text":
            return pd.Series([None if m else words[i] for m, i in zip(miss, rng.integers(0, len(words), n))],
                             dtype=object)
        if kind == "str":
            return pd.Series([None if m else words[i] for m, i in zip(miss, rng.integers(0, len(words), n))],
                             dtype="str")
        if kind == "int":
            return pd.Series(rng.integers(-10**6, 10**6, n))
        if kind == "Int64":
            return pd.Series(pd.array([None if m else int(v) for m, v in zip(miss, rng.integers(0, 99, n))],
                                      dtype="Int64"))
        if kind == "float":
            v = rng.normal(0, 10.0 ** rng.integers(-8, 8), n)
            return pd.Series(np.where(miss, np.nan, v))
        if kind == "bool":
            return pd.Series(rng.random(n) < 0.5)
        return pd.Series(pd.Categorical([None if m else words[i % 4] for m, i in
                                         zip(miss, rng.integers(0, 4, n))]))

    kinds = ["text", "str", "int", "Int64", "float", "bool", "category"]
    for _ in range(60):
        n = int(rng.integers(1, 40))
        cols = {f"{k}{j}": column(k, n) for j, k in enumerate(rng.choice(kinds, int(rng.integers(1, 6))))}
        est = pd.Series(np.where(rng.random(n) < 0.2, np.nan, rng.normal(0, 2, n)))
        frame = pd.DataFrame({**cols, "estimate": est, "ci_low": est - 1, "ci_high": est + rng.random(n)})
        frame = frame[rng.permutation(frame.columns)]
        for undefined in ("", "undefined"):
            assert fast(frame, undefined, monkeypatch) == reference(frame, undefined)
