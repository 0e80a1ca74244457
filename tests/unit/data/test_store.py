"""Tests of evalcore.data.store: the workspace database (location, round trips, atomicity,
durability across processes, concurrency, and the errors a user sees).

Processes are real: a "server restart" is a second Python process, a crash is SIGKILL,
and "another process holds the file" is another process holding a DuckDB connection.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from evalcore.data.store import NEEDS_MAPPING, READY, Workspace, default_path
from evalcore.errors import DataError, WorkspaceError
from tests.helpers import REPO

# --------------------------------------------------------------------------- helpers


def ratings_frame(n: int = 12, *, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    texts = ["plain", "héllo wörld", "数据集 漢字", "مرحبا", "emoji 🙂🚀", "tab\there", "line\nbreak",
             'quote " and \' and ,comma', "", "  spaced  ", "é (combining)", "NULL"]
    score = rng.integers(1, 6, n).astype(float)
    score[1] = np.nan
    return pd.DataFrame({
        "item_id": pd.array([f"item-{i // 3}" for i in range(n)], dtype="string"),
        "rater": pd.array([["ann-1", "ann-2", "gpt-4/score-only"][i % 3] for i in range(n)], dtype="string"),
        "rater_kind": pd.array([["human", "human", "judge"][i % 3] for i in range(n)], dtype="string"),
        "criterion": pd.array(["LA"] * (n - 1) + [None], dtype="string"),
        "score": score,
        "sample": np.arange(n, dtype="int64"),
        "position": pd.array([1, None] * (n // 2), dtype="Int64"),
        "perplexity": rng.gamma(2.0, 10.0, n),
        "text": pd.array([texts[i % len(texts)] for i in range(n)], dtype="string"),
        "language": pd.array(["fr", "zh", "ar", "hi"] * (n // 4), dtype="string"),
        "flag": np.array([i % 2 == 0 for i in range(n)]),
        "maybe": pd.array([True, None, False] * (n // 3), dtype="boolean"),
    })


def comparisons_frame(n: int = 10) -> pd.DataFrame:
    return pd.DataFrame({
        "item_id": pd.array([f"q{i}" for i in range(n)], dtype="string"),
        "system_a": pd.array(["gpt-4"] * n, dtype="string"),
        "system_b": pd.array(["llama-2 🦙"] * n, dtype="string"),
        "rater": pd.array(["judge-1"] * n, dtype="string"),
        "rater_kind": pd.array(["judge"] * n, dtype="string"),
        "winner": pd.array([["a", "b", "tie"][i % 3] for i in range(n)], dtype="string"),
        "swapped": np.array([i % 2 == 1 for i in range(n)]),
        "prob_a": np.linspace(0, 1, n),
        "prob_a_swap_position": np.r_[np.nan, np.linspace(0.1, 0.9, n - 1)],
        "score_a": np.arange(n, dtype="int64"),
        "subset": pd.array(["Natural", None] * (n // 2), dtype="string"),
    })


def big_frame(n: int, *, tag: str = "x") -> pd.DataFrame:
    return pd.DataFrame({
        "item_id": pd.array([f"{tag}-{i}" for i in range(n)], dtype="string"),
        "rater": pd.array(["r1", "r2", "judge"] * (n // 3) + ["r1"] * (n % 3), dtype="string"),
        "rater_kind": pd.array(["human", "human", "judge"] * (n // 3) + ["human"] * (n % 3), dtype="string"),
        "score": np.arange(n, dtype="float64") % 5 + 1,
        "sample": np.arange(n, dtype="int64"),
    })


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws.duckdb")


def _raw(path: Path):
    """A plain DuckDB connection for checking the file behind the API's back."""
    return duckdb.connect(str(path))


def _data_tables(path: Path) -> set[str]:
    with contextlib.closing(_raw(path)) as con:
        return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 't\\_%' ESCAPE '\\'").fetchall()}


def _count(path: Path, sql: str, params: list | None = None) -> int:
    with contextlib.closing(_raw(path)) as con:
        return con.execute(sql, params or []).fetchone()[0]


def _python(code: str, *args: str, **popen) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env, cwd=str(REPO),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def _run(code: str, *args: str, timeout: float = 60) -> str:
    proc = _python(code, *args)
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"subprocess failed ({proc.returncode}):\n{err}"
    return out


def _assert_consistent(path: Path) -> None:
    """Every dataset_tables row has its table and no data table is orphaned."""
    with contextlib.closing(_raw(path)) as con:
        listed = {r[0] for r in con.execute("SELECT data_table FROM dataset_tables").fetchall()}
        owners = {r[0] for r in con.execute("SELECT dataset_id FROM dataset_tables").fetchall()}
        ids = {r[0] for r in con.execute("SELECT id FROM datasets").fetchall()}
        orphans = {r[0] for r in con.execute(
            "SELECT dataset_id FROM uploads UNION SELECT dataset_id FROM results").fetchall()} - ids
    assert listed == _data_tables(path)
    assert owners <= ids
    assert not orphans


# --------------------------------------------------------------------------- location


def test_default_path_honours_evalcore_workspace(monkeypatch, tmp_path):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "mine.duckdb"))
    assert default_path() == tmp_path / "mine.duckdb"
    folder = tmp_path / "folder.v2"
    folder.mkdir()
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(folder))
    assert default_path() == folder / "workspace.duckdb"
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "not-yet-a-folder"))
    assert default_path() == tmp_path / "not-yet-a-folder" / "workspace.duckdb"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("EVALCORE_WORKSPACE", "~/ws/work.duckdb")
    assert default_path() == tmp_path / "ws" / "work.duckdb"
    # Workspace() with no path uses it, creates the folder and a working database.
    ws = Workspace()
    assert ws.path == tmp_path / "ws" / "work.duckdb" and ws.path.is_file()
    assert ws.list_datasets() == []


def test_default_path_is_xdg_or_home_and_never_in_the_repo(monkeypatch, tmp_path):
    monkeypatch.delenv("EVALCORE_WORKSPACE", raising=False)
    monkeypatch.setenv("EVALCORE_WORKSPACE", "   ")  # blank counts as unset
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "evalcore" / "workspace.duckdb"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "evalcore" / "workspace.duckdb"
    # A relative XDG_DATA_HOME is invalid per the XDG spec; it must not put the file under
    # the current folder (here: the repository).
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("XDG_DATA_HOME", "data")
    p = default_path()
    assert p.is_absolute()
    assert p == tmp_path / "home" / ".local" / "share" / "evalcore" / "workspace.duckdb"
    # And with the real environment (no override), the default is outside the repository.
    monkeypatch.undo()
    monkeypatch.delenv("EVALCORE_WORKSPACE", raising=False)
    real = default_path().resolve()
    assert real.is_absolute() and REPO not in real.parents, real
    assert real.name == "workspace.duckdb" and real.parent.name == "evalcore"


def test_a_folder_as_workspace_file_is_refused(tmp_path):
    (tmp_path / "dir.duckdb").mkdir()
    with pytest.raises(WorkspaceError, match="folder"):
        Workspace(tmp_path / "dir.duckdb")


# --------------------------------------------------------------------------- round trip


def _expected(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.reset_index(drop=True)


def test_round_trip_keeps_values_and_dtypes(ws):
    r, c = ratings_frame(), comparisons_frame()
    did = ws.save_dataset("Mixed 数据 🙂", {"ratings": r, "comparisons": c}, source="upload.csv",
                          mappings={"ratings": {"Item": "item_id", "Score": "score"}},
                          options={"ratings": {"sheet": "Sheet1", "wide": False, "n": np.int64(3)}},
                          notes={"ratings": ["3 rows had no score", "unicode ✓"], "comparisons": []})
    for kind, frame in (("ratings", r), ("comparisons", c)):
        got = ws.load_table(did, kind)
        pd.testing.assert_frame_equal(got, _expected(frame), check_exact=True)
    got = ws.load_table(did, "ratings")
    assert got["text"].tolist()[8] == ""  # empty text stays empty, not missing
    assert got["criterion"].isna().tolist()[-1] and got["score"].isna().sum() == 1
    assert got["text"].tolist()[:12] == ratings_frame()["text"].tolist()
    assert ws.table_meta(did, "ratings") == {
        "mapping": {"Item": "item_id", "Score": "score"},
        "options": {"sheet": "Sheet1", "wide": False, "n": 3},
        "notes": ["3 rows had no score", "unicode ✓"], "rows": 12}
    assert ws.table_meta(did, "comparisons") == {"mapping": {}, "options": {}, "notes": [], "rows": 10}
    info = ws.info(did)
    assert info.name == "Mixed 数据 🙂" and info.status == READY and info.source == "upload.csv"
    assert info.tables == {"ratings": 12, "comparisons": 10}
    assert json.loads(json.dumps(info.to_dict()))["tables"] == {"ratings": 12, "comparisons": 10}
    with pytest.raises(DataError, match="no comparisons table"):
        ws.load_table(ws.save_dataset("only ratings", {"ratings": r}), "comparisons")
    with pytest.raises(DataError, match="unknown table kind"):
        ws.save_dataset("bad", {"judgments": r})
    with pytest.raises(DataError, match="nothing to save"):
        ws.save_dataset("empty", {})


# duckdb 2.0 itself calls DataFrame.drop(inplace=True) when it returns a time-zone-aware column.
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.drop is deprecated")
def test_round_trip_of_untyped_columns(ws):
    """Object columns (as readers produce them) get a definite type before DuckDB guesses one.

    DuckDB infers an object column's type from its first rows; a late value of another
    type would make the import fail or change values.
    """
    n = 3000
    frame = pd.DataFrame({
        "item_id": [f"i{i}" for i in range(n)],  # pandas' default str dtype
        "late_text": pd.Series([i for i in range(n - 1)] + ["seven"], dtype=object),
        "bools": pd.Series([True, None, False] * (n // 3), dtype=object),
        "ints": pd.Series([1, None, 3] * (n // 3), dtype=object),
        "floats": pd.Series([1.5, None, 2] * (n // 3), dtype=object),
        "mixed": pd.Series([1, "a", 2.5] * (n // 3), dtype=object),
        "nothing": pd.Series([None] * n, dtype=object),
        "cplx": np.full(n, 1 + 2j),
        "period": pd.period_range("2020-01", periods=n, freq="D"),
        "when": pd.date_range("2024-01-01", periods=n, freq="h", tz="UTC"),
        "cat": pd.Categorical(["u", "v", "u"] * (n // 3)),
        7: np.arange(n),  # a non-string column name
    })
    did = ws.save_dataset("untyped", {"ratings": frame})
    got = ws.load_table(did, "ratings")
    assert list(got.columns) == [str(c) for c in frame.columns]
    assert got["item_id"].dtype == "string" and got["item_id"].tolist() == frame["item_id"].tolist()
    assert got["late_text"].dtype == "string"
    assert got["late_text"].tolist() == [str(i) for i in range(n - 1)] + ["seven"]
    assert got["bools"].dtype == "boolean" and got["bools"].tolist()[:3] == [True, pd.NA, False]
    assert got["ints"].dtype == "Int64" and got["ints"].tolist()[:3] == [1, pd.NA, 3]
    assert got["floats"].dtype == "float64" and np.allclose(got["floats"].to_numpy()[[0, 2]], [1.5, 2.0])
    assert np.isnan(got["floats"].iloc[1])
    assert got["mixed"].tolist()[:3] == ["1", "a", "2.5"]
    assert got["nothing"].isna().all()
    assert got["cplx"].iloc[0] == "(1+2j)" and got["period"].iloc[0] == "2020-01-01"
    assert (got["when"] == frame["when"]).all()
    assert got["cat"].astype(str).tolist() == frame["cat"].astype(str).tolist()
    assert got["7"].tolist() == list(range(n))


@pytest.mark.parametrize("columns", [["a", "a"], ["Task", "task"], ["a", " "]])
def test_columns_duckdb_cannot_keep_apart_are_refused(ws, columns):
    frame = pd.DataFrame([[1, 2]], columns=columns)
    with pytest.raises(DataError, match="column") as err:
        ws.save_dataset("dup", {"ratings": frame})
    assert "Fix:" in str(err.value)
    assert ws.list_datasets() == [] and _data_tables(ws.path) == set()


def test_results_round_trip(ws):
    did = ws.save_dataset("d", {"ratings": ratings_frame()})
    frame = pd.DataFrame({"language": pd.array(["fr", "zh 中文", None], dtype="string"),
                          "kappa": [0.5, np.nan, -0.1], "n": np.array([10, 20, 30], dtype="int64"),
                          "ok": [True, False, True]})
    ws.save_result(did, "agreement/pa", frame, meta={"seed": np.int64(1)})
    pd.testing.assert_frame_equal(ws.load_result(did, "agreement/pa"), frame)
    indexed = frame.set_index("language")
    ws.save_result(did, "indexed", indexed)
    pd.testing.assert_frame_equal(ws.load_result(did, "indexed"), indexed)
    value = {"p_mean": 0.61, "ci": [0.5, 0.7], "n": np.int64(400), "rate": np.float64(0.25),
             "draws": np.array([1.0, 2.0]), "label": "résumé ✓", "nested": {"nan": float("nan")},
             "flag": np.bool_(True)}
    ws.save_result(did, "winrate", value)
    got = ws.load_result(did, "winrate")
    assert got["n"] == 400 and isinstance(got["n"], int)  # not the string "400"
    assert got["rate"] == 0.25 and got["draws"] == [1.0, 2.0] and got["flag"] is True
    assert got["label"] == "résumé ✓" and got["ci"] == [0.5, 0.7] and np.isnan(got["nested"]["nan"])
    ws.save_result(did, "winrate", {"p_mean": 0.7})  # replaces
    assert ws.load_result(did, "winrate") == {"p_mean": 0.7}
    assert ws.result_keys(did) == ["agreement/pa", "indexed", "winrate"]
    assert ws.load_result(did, "missing") is None
    assert ws.result_keys("000000000000") == []


# --------------------------------------------------------------------------- uploads


def test_upload_bytes_round_trip_and_conversion(ws):
    files = [("judges ✓.jsonl", '{"a": "é"}\n'.encode()), ("a-test.json", b"[]"),
             ("binary.parquet", bytes(range(256)) * 64 + b"\x00\x00"), ("empty.csv", b"")]
    did = ws.save_upload(files, name="PandaLM", options={"preset": "pandalm"})
    assert ws.upload(did) == sorted(files)
    info = ws.info(did)
    assert info.status == NEEDS_MAPPING and info.tables == {} and info.name == "PandaLM"
    assert "binary.parquet" in info.source
    assert ws.save_upload([("x.csv", b"a\n1\n")]) != did
    assert ws.info(ws.list_datasets()[0].id).name in {"x", "PandaLM"}
    with pytest.raises(DataError, match="no file"):
        ws.save_upload([])
    with pytest.raises(DataError, match="named 'a.csv'"):  # same name from two folders
        ws.save_upload([("a.csv", b"1"), ("a.csv", b"2")])
    # Importing over the pending upload drops the raw bytes and marks it ready, same id and name.
    assert ws.save_dataset("PandaLM", {"comparisons": comparisons_frame()}, dataset_id=did) == did
    info = ws.info(did)
    assert info.status == READY and info.name == "PandaLM" and info.tables == {"comparisons": 10}
    assert _count(ws.path, "SELECT count(*) FROM uploads WHERE dataset_id = ?", [did]) == 0
    with pytest.raises(DataError, match="no pending upload"):
        ws.upload(did)


# --------------------------------------------------------------------------- rename / delete


def test_rename_makes_names_unique(ws):
    a = ws.save_dataset("study", {"ratings": ratings_frame()})
    b = ws.save_dataset("study", {"ratings": ratings_frame()})
    c = ws.save_upload([("study.csv", b"x")])
    assert [ws.info(i).name for i in (a, b, c)] == ["study", "study (2)", "study (3)"]
    assert ws.rename(a, "study") == "study"  # its own name is not a clash
    assert ws.rename(b, "  other  ") == "other"
    assert ws.rename(c, "other") == "other (2)"
    assert ws.rename(a, "other") == "other (3)"
    assert sorted(d.name for d in ws.list_datasets()) == ["other", "other (2)", "other (3)"]
    with pytest.raises(DataError, match="empty"):
        ws.rename(a, "   ")


def test_delete_removes_everything(ws):
    keep = ws.save_dataset("keep", {"ratings": ratings_frame()})
    gone = ws.save_dataset("gone", {"ratings": ratings_frame(), "comparisons": comparisons_frame()})
    pending = ws.save_upload([("f.csv", b"a,b\n1,2\n")])
    ws.save_result(gone, "k", {"x": 1})
    ws.save_result(keep, "k", {"x": 2})
    ws.set_setting("current_dataset", gone)
    ws.delete(gone)
    assert ws.get_setting("current_dataset") is None
    assert {d.id for d in ws.list_datasets()} == {keep, pending}
    assert _data_tables(ws.path) == {f"t_{keep}_ratings"}
    assert ws.result_keys(gone) == [] and ws.load_result(keep, "k") == {"x": 2}
    with pytest.raises(DataError, match="no longer in the workspace"):
        ws.info(gone)
    with pytest.raises(DataError):
        ws.load_table(gone, "ratings")
    with pytest.raises(DataError, match="no longer in the workspace"):
        ws.rename(gone, "back")
    ws.set_setting("current_dataset", keep)
    ws.delete(pending)  # a pending upload: raw bytes go too; other settings stay
    assert _count(ws.path, "SELECT count(*) FROM uploads") == 0
    assert ws.get_setting("current_dataset") == keep
    ws.delete(pending)  # deleting twice is harmless
    with pytest.raises(DataError, match="unknown dataset"):
        ws.load_table("'; DROP TABLE datasets; --", "ratings")
    _assert_consistent(ws.path)


# --------------------------------------------------------------------------- atomicity


class _FailingConnection:
    """Delegates to a DuckDB connection, failing the n-th statement that matches."""

    def __init__(self, con, prefix: str, nth: int, error: BaseException, counter: list[int]):
        self._con, self._prefix, self._nth, self._error, self._counter = con, prefix, nth, error, counter

    def execute(self, sql, *args, **kwargs):
        if sql.lstrip().startswith(self._prefix):
            self._counter[0] += 1
            if self._counter[0] == self._nth:
                raise self._error
        return self._con.execute(sql, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


@contextlib.contextmanager
def _fail_on(prefix: str, nth: int, error: BaseException):
    """Inside the block, the n-th SQL statement starting with ``prefix`` raises ``error``."""
    original = Workspace._connect
    counter = [0]

    @contextlib.contextmanager
    def connect(self):
        with original(self) as con:
            yield _FailingConnection(con, prefix, nth, error, counter)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Workspace, "_connect", connect)
        yield


@pytest.mark.parametrize("error, raised", [
    (RuntimeError("simulated crash"), RuntimeError),
    (duckdb.IOException("IO Error: No space left on device (simulated)"), WorkspaceError),
])
def test_failed_save_leaves_nothing(ws, error, raised):
    before = ws.save_dataset("before", {"ratings": ratings_frame()})
    with _fail_on('CREATE TABLE "t_', 2, error), pytest.raises(raised) as err:  # the second table's CREATE
        ws.save_dataset("half", {"ratings": ratings_frame(), "comparisons": comparisons_frame()})
    if raised is WorkspaceError:
        assert str(ws.path) in str(err.value) and "Fix:" in str(err.value)
    assert [d.id for d in ws.list_datasets()] == [before]
    assert _data_tables(ws.path) == {f"t_{before}_ratings"}
    assert _count(ws.path, "SELECT count(*) FROM dataset_tables") == 1
    assert _count(ws.path, "SELECT count(*) FROM datasets WHERE name = 'half'") == 0
    # The workspace still works after the failure.
    ws.save_dataset("after", {"ratings": ratings_frame()})
    assert sorted(d.name for d in ws.list_datasets()) == ["after", "before"]
    _assert_consistent(ws.path)


def test_failed_import_keeps_the_pending_upload(ws):
    files = [("scores.csv", b"item,score\n1,5\n")]
    did = ws.save_upload(files, name="scores")
    # Interrupted (Ctrl-C, a stopped Streamlit script) after the first table was written.
    with _fail_on("INSERT INTO dataset_tables", 2, KeyboardInterrupt()), pytest.raises(KeyboardInterrupt):
        ws.save_dataset("renamed", {"ratings": ratings_frame(), "comparisons": comparisons_frame()},
                        dataset_id=did)
    assert ws.upload(did) == files
    info = ws.info(did)
    assert info.status == NEEDS_MAPPING and info.name == "scores" and info.tables == {}
    assert _data_tables(ws.path) == set()
    # A frame the workspace refuses fails before anything is written, too.
    with pytest.raises(DataError):
        ws.save_dataset("x", {"ratings": ratings_frame(), "comparisons": pd.DataFrame([[1, 2]], columns=["a", "A"])},
                        dataset_id=did)
    assert ws.upload(did) == files and ws.info(did).status == NEEDS_MAPPING
    # Re-importing over a ready dataset that then fails keeps the old tables and results.
    ws.save_dataset("scores", {"ratings": ratings_frame(24)}, dataset_id=did)
    ws.save_result(did, "k", {"v": 1})
    with _fail_on('CREATE TABLE "t_', 1, RuntimeError("boom")), pytest.raises(RuntimeError):
        ws.save_dataset("scores", {"ratings": ratings_frame(12)}, dataset_id=did)
    assert len(ws.load_table(did, "ratings")) == 24 and ws.load_result(did, "k") == {"v": 1}
    _assert_consistent(ws.path)


_CRASH_WRITER = """
import sys, numpy as np, pandas as pd
from evalcore.data.store import Workspace
ws = Workspace(sys.argv[1])
n = int(sys.argv[2])
i = 0
while True:
    frame = pd.DataFrame({"item_id": pd.array([f"{i}-{k}" for k in range(n)], dtype="string"),
                          "rater": "r", "rater_kind": "human", "score": np.full(n, float(i))})
    did = ws.save_dataset(f"crash-{i}", {"ratings": frame, "comparisons": frame.assign(winner="a")})
    ws.save_result(did, "sum", {"score": float(i) * n})
    print(did, i, flush=True)
    i += 1
"""


@pytest.mark.slow
def test_kill_9_mid_write_leaves_only_complete_datasets(tmp_path):
    path = tmp_path / "crash.duckdb"
    n = 150_000
    committed: dict[str, int] = {}
    rng = random.Random(1)
    for round_ in range(3):
        proc = _python(_CRASH_WRITER, str(path), str(n))
        lines = []
        target = len(committed) + 2
        deadline = time.monotonic() + 60
        while len(committed) + len(lines) < target and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
        time.sleep(rng.uniform(0.02, 0.4))  # somewhere inside the next write or its checkpoint
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
        for line in lines + proc.stdout.readlines():
            did, i = line.split()
            committed[did] = int(i)
        assert len(committed) >= target, f"round {round_}: writer did not get going"
        ws = Workspace(path)
        listed = {d.id: d for d in ws.list_datasets()}
        # Everything reported as saved is there; at most one more (committed, not yet printed).
        assert set(committed) <= set(listed) and len(listed) - len(committed) <= 1
        for did, info in listed.items():
            assert info.tables == {"ratings": n, "comparisons": n}
            for kind in ("ratings", "comparisons"):
                t = ws.load_table(did, kind)
                assert len(t) == n and t["score"].nunique() == 1
                assert t["item_id"].iloc[-1].endswith(f"-{n - 1}")
        _assert_consistent(path)
        # A dataset committed but not yet reported is complete too: count it from now on.
        committed.update({did: -1 for did in listed if did not in committed})
    assert len(committed) >= 6


# --------------------------------------------------------------------------- durability


@pytest.mark.slow
def test_dataset_survives_a_server_restart(tmp_path):
    path = tmp_path / "restart.duckdb"
    frames = tmp_path / "frames.pkl"
    pd.to_pickle({"ratings": ratings_frame(), "comparisons": comparisons_frame()}, frames)
    did = _run("""
        import sys
        import pandas as pd
        from evalcore.data.store import Workspace
        ws = Workspace(sys.argv[1])
        did = ws.save_dataset("persisted ✓", pd.read_pickle(sys.argv[2]), notes={"ratings": ["kept"]})
        ws.save_result(did, "k", {"v": 1})
        ws.set_setting("current_dataset", did)
        print(did)
    """, str(path), str(frames)).strip()
    out = _run("""
        import sys, json
        from evalcore.data.store import Workspace
        ws = Workspace(sys.argv[1])
        did = ws.get_setting("current_dataset")
        r = ws.load_table(did, "ratings")
        print(json.dumps({"id": did, "name": ws.info(did).name, "rows": len(r), "text": r["text"].tolist(),
                          "notes": ws.table_meta(did, "ratings")["notes"], "result": ws.load_result(did, "k")}))
    """, str(path))
    got = json.loads(out)
    assert got == {"id": did, "name": "persisted ✓", "rows": 12, "text": ratings_frame()["text"].tolist(),
                   "notes": ["kept"], "result": {"v": 1}}
    ws = Workspace(path)  # and this process too
    pd.testing.assert_frame_equal(ws.load_table(did, "comparisons"), comparisons_frame())


# --------------------------------------------------------------------------- concurrency


@pytest.mark.slow
def test_threads_share_a_workspace(tmp_path):
    """8 sessions of one server saving, listing, loading, renaming and deleting at once."""
    path = tmp_path / "threads.duckdb"
    Workspace(path)
    n_threads, rounds = 8, 4
    barrier = threading.Barrier(n_threads)
    errors: list[BaseException] = []
    kept: dict[str, int] = {}
    deleted: set[str] = set()
    guard = threading.Lock()

    def session(t: int) -> None:
        try:
            rng = random.Random(t)
            barrier.wait()
            for i in range(rounds):
                ws = Workspace(path)  # as the app's cached table reader does, per call
                rows = 50 + 10 * t + i
                did = ws.save_dataset(f"s{t}", {"ratings": big_frame(rows, tag=f"{t}.{i}")})
                ws.save_result(did, "rows", {"n": rows})
                ws.set_setting("current_dataset", did)
                assert len(ws.load_table(did, "ratings")) == rows
                listing = ws.list_datasets()
                assert did in {d.id for d in listing}
                other = rng.choice(listing)
                try:  # another session may delete it meanwhile: then a DataError, nothing else
                    frame = ws.load_table(other.id, "ratings")
                    assert len(frame) == other.tables["ratings"]
                except DataError:
                    pass
                ws.rename(did, f"s{t}-{i}")
                if i % 2:
                    ws.delete(did)
                    with guard:
                        deleted.add(did)
                else:
                    with guard:
                        kept[did] = rows
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, [str(e) for e in errors]
    ws = Workspace(path)
    listing = ws.list_datasets()
    assert {d.id for d in listing} == set(kept) and not deleted & set(kept)
    assert len(deleted) == n_threads * rounds // 2
    assert len(listing) == n_threads * rounds // 2
    assert len({d.name for d in listing}) == len(listing)
    for d in listing:
        assert len(ws.load_table(d.id, "ratings")) == kept[d.id] == d.tables["ratings"]
        assert ws.load_result(d.id, "rows") == {"n": kept[d.id]}
    assert sum(d.tables["ratings"] for d in listing) == sum(kept.values())
    assert ws.get_setting("current_dataset") in set(kept) | {None}
    assert _count(path, "SELECT count(*) FROM results") == len(kept)
    _assert_consistent(path)


_PROCESS_WRITER = """
import sys, numpy as np, pandas as pd
from evalcore.data.store import Workspace
path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ws = Workspace(path, lock_timeout=60)
for i in range(n):
    rows = 1000 + i
    frame = pd.DataFrame({"item_id": pd.array([f"{tag}{i}-{k}" for k in range(rows)], dtype="string"),
                          "rater": tag, "rater_kind": "judge", "score": np.arange(rows, dtype=float)})
    did = ws.save_dataset(f"{tag}-{i}", {"ratings": frame})
    assert len(ws.load_table(did, "ratings")) == rows
    ws.list_datasets()
    print(did, rows, flush=True)
"""


@pytest.mark.slow
def test_two_processes_write_at_once(tmp_path):
    path = tmp_path / "procs.duckdb"
    n = 12
    procs = {tag: _python(_PROCESS_WRITER, str(path), tag, str(n)) for tag in ("A", "B")}
    saved: dict[str, int] = {}
    for tag, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, f"writer {tag} failed:\n{err}"
        for line in out.strip().splitlines():
            did, rows = line.split()
            saved[did] = int(rows)
    assert len(saved) == 2 * n
    ws = Workspace(path)
    listing = ws.list_datasets()
    assert {d.id: d.tables["ratings"] for d in listing} == saved
    assert Counter(d.name.split("-")[0] for d in listing) == {"A": n, "B": n}
    for d in listing:
        frame = ws.load_table(d.id, "ratings")
        assert len(frame) == saved[d.id] and frame["rater"].nunique() == 1
    _assert_consistent(path)


_HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("SELECT count(*) FROM datasets").fetchall()
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


@pytest.mark.slow
def test_a_process_holding_the_file_gives_a_clear_error(ws):
    did = ws.save_dataset("d", {"ratings": ratings_frame()})
    holder = _python(_HOLDER, str(ws.path), "60")
    try:
        assert holder.stdout.readline().strip() == "holding"
        ws.lock_timeout = 0.6
        start = time.monotonic()
        with pytest.raises(WorkspaceError) as err:
            ws.list_datasets()
        waited = time.monotonic() - start
        assert 0.5 <= waited < 10
        msg = str(err.value)
        assert str(ws.path) in msg and "in use by another program" in msg and f"process {holder.pid}" in msg
        assert "Fix:" in msg and "\n" not in msg
        assert not isinstance(err.value, duckdb.Error) and err.value.__cause__ is None
        with pytest.raises(WorkspaceError):
            ws.save_dataset("blocked", {"ratings": ratings_frame()})
        with pytest.raises(WorkspaceError):
            Workspace(ws.path, lock_timeout=0.3)
    finally:
        holder.kill()
        holder.wait(10)
    assert [d.id for d in ws.list_datasets()] == [did]  # nothing half-written by the blocked save


@pytest.mark.slow
def test_a_brief_lock_is_waited_for(ws):
    holder = _python(_HOLDER, str(ws.path), "1.0")
    assert holder.stdout.readline().strip() == "holding"
    ws.lock_timeout = 20
    start = time.monotonic()
    did = ws.save_dataset("after the wait", {"ratings": ratings_frame()})
    assert time.monotonic() - start > 0.3
    assert ws.info(did).name == "after the wait"
    holder.wait(10)


# --------------------------------------------------------------------------- broken files


@pytest.mark.parametrize("content", [os.urandom(1 << 16), b"", b"item,score\n1,5\n" * 100],
                         ids=["random-bytes", "empty", "csv-text"])
def test_a_corrupt_workspace_file_is_named_with_a_fix(tmp_path, content):
    path = tmp_path / "broken.duckdb"
    path.write_bytes(content)
    with pytest.raises(WorkspaceError) as err:
        Workspace(path)
    msg = str(err.value)
    assert str(path) in msg and "Fix:" in msg and "EVALCORE_WORKSPACE" in msg
    assert "move" in msg.lower() and "close other" not in msg  # not mistaken for a lock
    assert err.value.__cause__ is None
    assert path.read_bytes() == content  # never overwritten


def test_an_unwritable_folder_is_explained(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(WorkspaceError, match="Fix:"):
            Workspace(ro / "sub" / "ws.duckdb")
    finally:
        ro.chmod(0o700)


def test_the_same_upload_opens_the_same_dataset(ws):
    files = [("study.csv", b"item_id,rater,score\n1,a,2\n")]
    did = ws.save_upload(files)
    assert ws.save_upload(list(files)) == did  # pending: the same mapping to finish, not a copy
    assert ws.save_upload([("study.csv", b"item_id,rater,score\n1,a,3\n")]) != did  # other bytes: a new one
    assert ws.save_upload([("other.csv", files[0][1])]) != did  # other name: a new one
    ws.save_dataset("study", {"ratings": ratings_frame()}, dataset_id=did)
    assert ws.save_upload(list(files)) == did  # imported: the dataset it became
    ws.delete(did)
    assert ws.save_upload(list(files)) != did  # deleted: uploading again starts afresh
    assert [d.name for d in ws.list_datasets()].count("study") == 1
