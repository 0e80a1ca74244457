"""What ``validate`` says is what the analyses do: very wide files, comparisons that cannot give a
win rate, look-alike column names, and odd rater names (NUL bytes, ``NA``/``null``/``NaN``).

Every hostile file is generated here, in ``tmp_path``.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from evalcore.data import ingest, io, validation
from evalcore.data.summary import unlocks
from evalcore.errors import DataError

# --------------------------------------------------------------------------- defect 7: very wide files


def _wide_file(path, n_columns: int, rows: int = 40) -> None:
    """A long ratings file with ``n_columns`` columns in all: the five canonical ones and extras."""
    rng = np.random.default_rng(7)
    names = ["item_id", "rater", "rater_kind", "criterion", "score"] + [f"extra_{i}" for i in range(n_columns - 5)]
    lines = [",".join(names)]
    for r in range(rows):
        rater = ("alice", "bob", "gpt-4", "claude-3")[r % 4]
        first = [f"q{r // 4}", rater, "human" if r % 4 < 2 else "judge", "overall", str(1 + r % 5)]
        lines.append(",".join(first + [f"v{x}" for x in rng.integers(0, 100, n_columns - 5)]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_20000_column_file_validates_with_a_note_and_checks_only_the_columns_kept(tmp_path, monkeypatch):
    path = tmp_path / "wide.csv"
    _wide_file(path, 20_000)
    visited: list[int] = []
    real = validation._text_warnings

    def counting(frame, *, file):
        visited.append(frame.shape[1])
        return real(frame, file=file)

    monkeypatch.setattr(validation, "_text_warnings", counting)
    ing = ingest.load(path)
    kept = [c for c in ing.frame.columns if c.startswith("extra_")]
    assert kept == [f"extra_{i}" for i in range(validation.MAX_EXTRA_COLUMNS)]
    # The text checks saw the canonical columns, the extras kept and the row numbers: not 20,000 columns.
    assert visited == [5 + validation.MAX_EXTRA_COLUMNS + 1]
    note = next(n for n in ing.notes if "besides evalcore's own" in n)
    assert "wide.csv has 19,995 columns besides evalcore's own" in note
    assert "the first 200 ('extra_0' to 'extra_199') are kept as segments" in note
    assert "the other 19,795 ('extra_200', 'extra_201', 'extra_202', ...) were left out" in note
    assert len(ing.frame) == 40 and ing.frame["rater"].nunique() == 4


def test_a_wide_file_under_the_limit_keeps_every_column_without_a_note(tmp_path):
    path = tmp_path / "some.csv"
    _wide_file(path, 5 + validation.MAX_EXTRA_COLUMNS)
    ing = ingest.load(path)
    assert ing.frame.shape[1] == 5 + validation.MAX_EXTRA_COLUMNS
    assert not [n for n in ing.notes if "besides evalcore's own" in n]


def test_the_text_checks_still_find_a_formula_and_html_among_many_columns(tmp_path):
    frame = pd.DataFrame({"item_id": ["q1", "q1"], "rater": ["h", "gpt-4"], "rater_kind": ["human", "judge"],
                          "score": ["1", "2"], **{f"c{i}": ["x", "y"] for i in range(50)},
                          "note": pd.array(["=HYPERLINK(1)", "-1"], dtype="string"),
                          "html": ["<b>hi</b>", "plain"]})
    notes = validation.validate(frame, table="ratings", file="f.csv").notes
    assert any("column 'note': 1 cell(s) start like a spreadsheet formula (first at row 2" in n for n in notes)
    assert any("column 'html': 1 cell(s) hold HTML markup (first at row 2: '<b>hi</b>')" in n for n in notes)


def test_validate_called_directly_also_leaves_the_extra_columns_out(tmp_path):
    extras = {f"x{i}": [i, i] for i in range(validation.MAX_EXTRA_COLUMNS + 3)}
    frame = pd.DataFrame({"item_id": ["q1", "q1"], "rater": ["h", "gpt-4"], "rater_kind": ["human", "judge"],
                          "score": [1, 2], **extras})
    v = validation.validate(frame, table="ratings", file="f.csv")
    assert "x199" in v.frame.columns and "x200" not in v.frame.columns
    assert any("the other 3 ('x200', 'x201', 'x202', ...) were left out" in n for n in v.notes)


def test_a_wide_layout_with_many_rater_columns_keeps_every_rater(tmp_path):
    # One column per annotator: the rater columns are data, not extras, however many there are.
    n = validation.MAX_EXTRA_COLUMNS + 50
    frame = pd.DataFrame({"item_id": ["q1", "q2"], **{f"annotator_{i}": [1, 2] for i in range(n)},
                          "gpt-4": [2, 2]})
    ing = ingest.ingest_frame(frame, file="w.csv")
    assert ing.wide is not None
    assert ing.frame["rater"].nunique() == n + 1


# --------------------------------------------------------------------------- defect 9: validate says what the analyses do


def _comparisons(pairs_by_kind: dict[str, list[tuple[str, str]]], n_items: int = 6) -> pd.DataFrame:
    """Comparisons of the given (system_a, system_b) pairs by a human ('alice') and a judge ('gpt-4')."""
    rows = []
    for kind, rater in (("human", "alice"), ("judge", "gpt-4")):
        for a, b in pairs_by_kind.get(kind, []):
            for i in range(n_items):
                rows.append({"item_id": f"{a}-{b}-{i}", "system_a": a, "system_b": b, "rater": rater,
                             "rater_kind": kind, "winner": "a" if i % 3 else "b"})
    return pd.DataFrame(rows)


def _validate_json(capsys, path) -> dict:
    code = main(["validate", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _win_rates_run(frame: pd.DataFrame) -> bool:
    from evalcore.pairwise.pairs import NotApplicable
    from evalcore.pairwise.winrate import estimate_all

    try:
        return bool(estimate_all(frame, method="bwrs", prior="ratio:1", n_samples=200))
    except NotApplicable:
        return False


def test_a_system_compared_with_itself_does_not_unlock_win_rates(tmp_path, capsys):
    path = tmp_path / "same.csv"
    _comparisons({"human": [("m1", "m1")], "judge": [("m1", "m1")]}).to_csv(path, index=False)
    d = _validate_json(capsys, path)
    assert "win_rate" not in d["unlocks"]
    assert "same.csv: 12 row(s) compare a system with itself (system_a and system_b are both 'm1', first at row 2); " \
           "win rates leave them out." in d["notes"]
    av = unlocks(ingest.load(path).frame, table="comparisons").set_index("analysis")
    assert av.loc["win_rate", "missing"] == ("a comparison of two different systems (every row names the same "
                                             "system as system_a and system_b)")
    assert main(["winrate", str(path)]) == 1
    assert "no comparison names two different systems" in capsys.readouterr().err


@pytest.mark.parametrize("case, pairs_by_kind, available", [
    ("judged pair", {"human": [("m1", "m2")], "judge": [("m1", "m2")]}, True),
    ("only the judge compares a system with itself", {"human": [("m1", "m2")], "judge": [("m1", "m1")]}, False),
    ("a second pair only humans compared", {"human": [("m1", "m2"), ("m1", "m3")], "judge": [("m1", "m2")]}, True),
    ("some rows of the same system", {"human": [("m1", "m2"), ("m2", "m2")], "judge": [("m1", "m2"), ("m2", "m2")]},
     True),
])
def test_the_unlock_table_and_the_win_rates_agree(case, pairs_by_kind, available):
    frame = validation.validate(_comparisons(pairs_by_kind), table="comparisons", file="c.csv").frame
    av = unlocks(frame, table="comparisons").set_index("analysis")
    assert bool(av.loc["win_rate", "available"]) is available, av.loc["win_rate", "missing"]
    assert _win_rates_run(frame) is available
    if case == "only the judge compares a system with itself":
        assert av.loc["win_rate", "missing"].startswith("a judge verdict on two different systems")


def _two_scores(tmp_path, fmt: str):
    rows = []
    for i in range(6):
        for j, (rater, kind) in enumerate((("alice", "human"), ("bob", "human"), ("gpt-4", "judge"))):
            rows.append({"item_id": f"q{i}", "rater": rater, "rater_kind": kind, "score": 1 + i % 5,
                         "Score": 1 + (i + j) % 5})
    path = tmp_path / f"two_scores.{fmt}"
    frame = pd.DataFrame(rows)
    frame.to_parquet(path) if fmt == "parquet" else frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_score_beside_Score_is_one_clear_message(tmp_path, capsys, fmt):
    path = _two_scores(tmp_path, fmt)
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert (f"two_scores.{fmt}, column 'Score': two columns could be the 'score' column: 'score' and 'Score' (their "
            "names differ only in case or punctuation). Fix: map the one that holds the scores (CLI: --map "
            "'Score=score' or --map score=score; app: the column mapping)") in err
    with pytest.raises(DataError, match="two columns could be the 'score' column"):
        ingest.load(path)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_mapping_one_of_score_and_Score_leaves_the_other_out(tmp_path, fmt):
    path = _two_scores(tmp_path, fmt)
    used = ingest.load(path, mapping={"score": "score"})
    assert "Score" not in used.frame.columns
    assert f"two_scores.{fmt}: column(s) 'Score' look like the mapped 'score' and were left out." in used.notes
    other = ingest.load(path, mapping={"Score": "score"})
    raw = pd.read_parquet(path) if fmt == "parquet" else pd.read_csv(path)
    assert sorted(other.frame["score"]) == sorted(raw["Score"].astype(float))
    # The app's form passes the whole mapping (auto=False): the column chosen there is the one used.
    app = ingest.ingest_frame(io.read_table(path), file=path.name, auto=False, table="ratings",
                              mapping={"item_id": "item_id", "rater": "rater", "rater_kind": "rater_kind",
                                       "score": "score"})
    assert "Score" not in app.frame.columns
    assert unlocks(app.frame, table="ratings").set_index("analysis").loc["superficial_ratings",
                                                                                  "available"] == False  # noqa: E712


# --------------------------------------------------------------------------- defect 10: odd values in names


def _ratings(n_items: int = 300, raters=("alice", "bob", "gpt-4")) -> pd.DataFrame:
    rows = []
    for i in range(n_items):
        for r in raters:
            rows.append({"item_id": f"q{i}", "rater": r, "rater_kind": "judge" if r == "gpt-4" else "human",
                         "criterion": "overall", "score": 1 + i % 5, "comment": "fine"})
    return pd.DataFrame(rows)


def _with_nul_late(tmp_path, fmt: str, column: str) -> tuple:
    """A file whose last record has a NUL byte in ``column`` (well after the first 8 KB); its row as shown."""
    frame = _ratings()
    last = len(frame) - 1
    frame.loc[last, column] = str(frame.loc[last, column]) + "\x00"
    path = tmp_path / f"nul.{fmt}"
    if fmt == "csv":
        path.write_bytes(frame.to_csv(index=False).encode("utf-8"))
        row = last + 2
    elif fmt == "cp1252.csv":  # not UTF-8: the pandas path reads it
        frame.loc[0, "comment"] = "café"
        path.write_bytes(frame.to_csv(index=False).encode("cp1252"))
        row = last + 2
    else:  # JSON Lines, written by hand so that the NUL is a real \u0000 in the text
        path.write_text("\n".join(json.dumps(r) for r in frame.to_dict("records")) + "\n", encoding="utf-8")
        row = last + 1
    assert path.stat().st_size > 3 * 8192
    return path, row


@pytest.mark.parametrize("fmt", ["csv", "cp1252.csv", "jsonl"])
@pytest.mark.parametrize("column", ["rater", "item_id", "criterion"])
def test_a_nul_byte_in_a_name_after_the_first_8_kb_is_refused_with_its_row(tmp_path, fmt, column):
    path, row = _with_nul_late(tmp_path, fmt, column)
    what = column.replace("_", " ")
    with pytest.raises(DataError) as e:
        ingest.load(path)
    msg = str(e.value)
    assert f"row {row}, column '{column}': 1 {what} value(s) hold an invisible control character (a NUL byte)" in msg
    assert f"would count as another {what} than the one it looks like" in msg
    assert "Fix: delete the character" in msg


def test_a_control_character_in_a_system_name_is_refused(tmp_path):
    frame = _comparisons({"human": [("m1", "m2")], "judge": [("m1", "m2")]})
    frame.loc[3, "system_b"] = "m2\x1b"
    with pytest.raises(DataError, match=r"column 'system_b': 1 system b value\(s\) hold an invisible control "
                                        r"character \(U\+001B\): 'm2\\x1b'"):
        validation.validate(frame, table="comparisons", file="c.csv")


def _write(frame: pd.DataFrame, path) -> None:
    fmt = path.suffix
    if fmt == ".csv":
        frame.to_csv(path, index=False)
    elif fmt == ".tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif fmt == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        frame.to_json(path, orient="records")


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".xlsx", ".json"])
def test_raters_named_NA_null_or_NaN_are_raters(tmp_path, suffix):
    frame = _ratings(n_items=20, raters=("NA", "null", "NaN", "gpt-4"))
    frame["score"] = frame["score"].astype(object)
    frame.loc[frame.index[:3], "score"] = "NA"  # a score written NA is still a missing score
    path = tmp_path / f"names{suffix}"
    _write(frame, path)
    ing = ingest.load(path)
    assert sorted(ing.frame["rater"].unique()) == ["NA", "NaN", "gpt-4", "null"]
    assert ing.summary().human_raters == 3
    assert len(ing.frame) == len(frame) - 3
    assert f"names{suffix}: 3 row(s) with an empty score were left out." in ing.notes


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_items_criteria_and_systems_named_NA_are_names(tmp_path, suffix):
    frame = _comparisons({"human": [("NA", "null")], "judge": [("NA", "null")]})
    frame.loc[frame["item_id"].str.endswith("-0"), "item_id"] = "NA"
    path = tmp_path / f"systems{suffix}"
    _write(frame, path)
    ing = ingest.load(path)
    assert set(ing.frame["system_a"]) == {"NA"} and set(ing.frame["system_b"]) == {"null"}
    assert "NA" in set(ing.frame["item_id"])
    assert "win_rate" in ing.summary().unlocks
    ratings = _ratings(n_items=4)
    ratings.loc[ratings["item_id"] == "q1", "criterion"] = "NA"
    path = tmp_path / f"criteria{suffix}"
    _write(ratings, path)
    assert sorted(ingest.load(path).frame["criterion"].unique()) == ["NA", "overall"]


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".json"])
def test_only_an_empty_rater_cell_is_a_missing_rater(tmp_path, suffix):
    frame = _ratings(n_items=5, raters=("NA", "gpt-4"))
    frame["rater"] = frame["rater"].astype(object)
    frame.loc[4, "rater"] = None if suffix == ".json" else ""
    path = tmp_path / f"empty{suffix}"
    _write(frame, path)
    with pytest.raises(DataError, match=r"column 'rater': 1 row\(s\) have no rater"):
        ingest.load(path)


def test_words_for_missing_stay_missing_outside_the_names(tmp_path):
    # A verdict or a segment written NA is still missing, as before (only the name columns changed).
    frame = _comparisons({"human": [("m1", "m2")], "judge": [("m1", "m2")]})
    frame["language"] = "en"
    frame.loc[0, "language"] = "NA"
    frame["invalid"] = "false"
    frame.loc[1, ["winner", "invalid"]] = ["null", "true"]
    path = tmp_path / "c.csv"
    frame.to_csv(path, index=False)
    ing = ingest.load(path)
    assert ing.frame["language"].isna().sum() == 1
    assert ing.frame["winner"].isna().sum() == 1
    raw = io.read_table(path)
    assert raw.loc[0, "language"] == "NA"  # the reader keeps the word; validation decides by column
