"""The workspace: uploaded datasets, their column mappings and computed results, in one DuckDB file.

Why DuckDB: it is an embedded, transactional database that stores pandas and Arrow
tables natively and queries them with SQL, so a dataset of millions of judgments is
written once and read back column-wise without a server.

Guarantees:

- **Atomic writes.** Every change runs in one transaction; a failed import leaves
  nothing behind.
- **Durable.** Data lives in a file outside the repository (``EVALCORE_WORKSPACE``,
  default ``$XDG_DATA_HOME/evalcore/workspace.duckdb``), so it survives a browser refresh
  and a server restart.
- **Safe under concurrency.** Connections are opened per operation and closed at once,
  so the file is locked only briefly; writers in one process take a lock, and a
  writer in another process that finds the file locked retries for a while before
  giving up with a clear :class:`~evalcore.errors.WorkspaceError`.

An *upload* is kept as the raw bytes of the user's file until its column mapping is
confirmed, so a refresh in the middle of mapping loses nothing. A *dataset* then holds
up to two canonical tables (``ratings`` and ``comparisons``).
"""

from __future__ import annotations

import contextlib
import io as _io
import json
import os
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from .columns import TABLES
from .errors import DataError, WorkspaceError

_LOCK = threading.RLock()
_SCHEMA_VERSION = 1
_DDL = [
    """CREATE TABLE IF NOT EXISTS datasets (
        id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, created TIMESTAMP NOT NULL,
        updated TIMESTAMP NOT NULL, source VARCHAR, preset VARCHAR, status VARCHAR NOT NULL,
        error VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS dataset_tables (
        dataset_id VARCHAR NOT NULL, kind VARCHAR NOT NULL, data_table VARCHAR NOT NULL,
        mapping JSON, options JSON, notes JSON, n_rows BIGINT, PRIMARY KEY (dataset_id, kind))""",
    """CREATE TABLE IF NOT EXISTS uploads (
        dataset_id VARCHAR NOT NULL, file_name VARCHAR NOT NULL, content BLOB NOT NULL,
        options JSON, PRIMARY KEY (dataset_id, file_name))""",
    """CREATE TABLE IF NOT EXISTS results (
        dataset_id VARCHAR NOT NULL, key VARCHAR NOT NULL, created TIMESTAMP NOT NULL,
        kind VARCHAR NOT NULL, payload BLOB NOT NULL, meta JSON, PRIMARY KEY (dataset_id, key))""",
    """CREATE TABLE IF NOT EXISTS settings (key VARCHAR PRIMARY KEY, value VARCHAR)""",
]

READY = "ready"
NEEDS_MAPPING = "needs_mapping"


def default_path() -> Path:
    """Where the workspace lives: ``EVALCORE_WORKSPACE`` or ``$XDG_DATA_HOME/evalcore/workspace.duckdb``.

    ``EVALCORE_WORKSPACE`` may name the database file or a folder to hold it.
    """
    env = os.environ.get("EVALCORE_WORKSPACE", "").strip()
    if env:
        p = Path(env).expanduser()
        return p / "workspace.duckdb" if (p.is_dir() or not p.suffix) else p
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "evalcore" / "workspace.duckdb"


@dataclass(frozen=True)
class DatasetInfo:
    """One saved dataset as listed on the landing page."""

    id: str
    name: str
    created: datetime
    updated: datetime
    source: str
    preset: str | None
    status: str  # READY or NEEDS_MAPPING
    tables: dict[str, int] = field(default_factory=dict)  # kind -> rows
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "created": self.created.isoformat(),
                "updated": self.updated.isoformat(), "source": self.source, "preset": self.preset,
                "status": self.status, "tables": dict(self.tables), "error": self.error}


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)  # stored as naive UTC: TIMESTAMPTZ needs pytz


def _table_name(dataset_id: str, kind: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{12}", dataset_id) or kind not in TABLES:
        raise DataError(f"unknown dataset '{dataset_id}'", fix="choose a dataset from the workspace list")
    return f"t_{dataset_id}_{kind}"


class Workspace:
    """A workspace database file. Cheap to create; holds no open connection.

    Parameters
    ----------
    path
        The DuckDB file; default :func:`default_path`.
    lock_timeout
        Seconds to keep retrying while another process holds the file.
    """

    def __init__(self, path: str | Path | None = None, *, lock_timeout: float = 20.0) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.lock_timeout = lock_timeout
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(
                f"The workspace folder {self.path.parent} cannot be created ({exc.strerror}). "
                "Fix: set EVALCORE_WORKSPACE to a writable folder."
            ) from None
        with self._connect() as con:
            for ddl in _DDL:
                con.execute(ddl)
            con.execute("INSERT OR IGNORE INTO settings VALUES ('schema_version', ?)", [str(_SCHEMA_VERSION)])

    # -- connections -------------------------------------------------------------------

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Any]:
        import duckdb

        deadline = time.monotonic() + self.lock_timeout
        delay = 0.02
        while True:
            try:
                con = duckdb.connect(str(self.path))
                break
            except duckdb.IOException as exc:
                # Another process holds the file lock: wait for it rather than fail.
                if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                    raise WorkspaceError(
                        f"The workspace {self.path} cannot be opened: {str(exc).splitlines()[0]}. "
                        "Fix: close other evalcore processes using it, or set EVALCORE_WORKSPACE to "
                        "another file."
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            except duckdb.Error as exc:
                raise WorkspaceError(
                    f"The workspace {self.path} cannot be opened ({str(exc).splitlines()[0]}). "
                    "Fix: move the file aside to start a new workspace, or set EVALCORE_WORKSPACE."
                ) from None
        try:
            yield con
        finally:
            con.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        with _LOCK, self._connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            else:
                con.execute("COMMIT")

    # -- datasets ----------------------------------------------------------------------

    def _unique_name(self, con: Any, name: str, *, exclude: str | None = None) -> str:
        name = (name or "dataset").strip()[:120] or "dataset"
        taken = {r[0] for r in con.execute("SELECT name FROM datasets WHERE id <> ?", [exclude or ""]).fetchall()}
        if name not in taken:
            return name
        k = 2
        while f"{name} ({k})" in taken:
            k += 1
        return f"{name} ({k})"

    def save_upload(self, files: list[tuple[str, bytes]], *, name: str | None = None,
                    options: dict | None = None) -> str:
        """Keep raw uploaded files until their mapping is confirmed; returns the new dataset id.

        ``files`` is a list of ``(file name, bytes)``: one file, or several for a preset
        that joins files (PandaLM).
        """
        if not files:
            raise DataError("no file was uploaded", fix="choose a file")
        did = uuid.uuid4().hex[:12]
        now = _now()
        label = ", ".join(f for f, _ in files)
        with self._transaction() as con:
            con.execute(
                "INSERT INTO datasets VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)",
                [did, self._unique_name(con, name or Path(files[0][0]).stem), now, now, label, NEEDS_MAPPING],
            )
            for file_name, content in files:
                con.execute("INSERT INTO uploads VALUES (?, ?, ?, ?)",
                            [did, file_name, content, json.dumps(options or {})])
        return did

    def upload(self, dataset_id: str) -> list[tuple[str, bytes]]:
        """The raw files of a dataset awaiting mapping, as ``(file name, bytes)``."""
        with self._connect() as con:
            rows = con.execute("SELECT file_name, content FROM uploads WHERE dataset_id = ? ORDER BY file_name",
                               [dataset_id]).fetchall()
        if not rows:
            raise DataError("this dataset has no pending upload", fix="upload the file again")
        return [(r[0], bytes(r[1])) for r in rows]

    def save_dataset(
        self,
        name: str,
        tables: dict[str, pd.DataFrame],
        *,
        source: str = "",
        preset: str | None = None,
        mappings: dict[str, dict] | None = None,
        options: dict[str, dict] | None = None,
        notes: dict[str, list[str]] | None = None,
        dataset_id: str | None = None,
    ) -> str:
        """Write validated canonical tables as one dataset, atomically.

        With ``dataset_id`` of a pending upload, the upload becomes this dataset (its raw
        bytes are dropped in the same transaction). Returns the dataset id.
        """
        if not tables:
            raise DataError("there is nothing to save", fix="import a ratings or comparisons table first")
        for kind in tables:
            if kind not in TABLES:
                raise DataError(f"unknown table kind '{kind}'", fix="use ratings or comparisons")
        did = dataset_id or uuid.uuid4().hex[:12]
        now = _now()
        with self._transaction() as con:
            exists = con.execute("SELECT 1 FROM datasets WHERE id = ?", [did]).fetchone()
            if exists:
                con.execute("UPDATE datasets SET name = ?, updated = ?, source = ?, preset = ?, status = ?, "
                            "error = NULL WHERE id = ?",
                            [self._unique_name(con, name, exclude=did), now, source, preset, READY, did])
                for (tbl,) in con.execute("SELECT data_table FROM dataset_tables WHERE dataset_id = ?", [did]).fetchall():
                    con.execute(f'DROP TABLE IF EXISTS "{tbl}"')
                con.execute("DELETE FROM dataset_tables WHERE dataset_id = ?", [did])
                con.execute("DELETE FROM uploads WHERE dataset_id = ?", [did])
                con.execute("DELETE FROM results WHERE dataset_id = ?", [did])
            else:
                con.execute("INSERT INTO datasets VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                            [did, self._unique_name(con, name), now, now, source, preset, READY])
            for kind, frame in tables.items():
                tbl = _table_name(did, kind)
                con.register("_incoming", _storable(frame))
                con.execute(f'CREATE TABLE "{tbl}" AS SELECT * FROM _incoming')
                con.unregister("_incoming")
                con.execute(
                    "INSERT INTO dataset_tables VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [did, kind, tbl, json.dumps((mappings or {}).get(kind, {})),
                     json.dumps((options or {}).get(kind, {})), json.dumps((notes or {}).get(kind, [])),
                     len(frame)],
                )
        return did

    def list_datasets(self) -> list[DatasetInfo]:
        """All datasets, newest first."""
        with self._connect() as con:
            rows = con.execute(
                "SELECT id, name, created, updated, source, preset, status, error FROM datasets "
                "ORDER BY updated DESC").fetchall()
            tabs = con.execute("SELECT dataset_id, kind, n_rows FROM dataset_tables").fetchall()
        by: dict[str, dict[str, int]] = {}
        for did, kind, n in tabs:
            by.setdefault(did, {})[kind] = int(n)
        return [DatasetInfo(id=r[0], name=r[1], created=r[2], updated=r[3], source=r[4] or "",
                            preset=r[5], status=r[6], tables=by.get(r[0], {}), error=r[7]) for r in rows]

    def info(self, dataset_id: str) -> DatasetInfo:
        """One dataset's listing; DataError if it was deleted."""
        for d in self.list_datasets():
            if d.id == dataset_id:
                return d
        raise DataError("this dataset is no longer in the workspace (it may have been deleted)",
                        fix="choose another dataset or load the sample data")

    def load_table(self, dataset_id: str, kind: str) -> pd.DataFrame:
        """One canonical table of a dataset."""
        tbl = _table_name(dataset_id, kind)
        with self._connect() as con:
            ok = con.execute("SELECT 1 FROM dataset_tables WHERE dataset_id = ? AND kind = ?",
                             [dataset_id, kind]).fetchone()
            if not ok:
                raise DataError(f"this dataset has no {kind} table",
                                fix=f"import a {kind} file into it, or choose another dataset")
            frame = con.execute(f'SELECT * FROM "{tbl}"').df()
        return _restored(frame)

    def table_meta(self, dataset_id: str, kind: str) -> dict[str, Any]:
        """The mapping, options and notes recorded when a table was imported."""
        with self._connect() as con:
            row = con.execute("SELECT mapping, options, notes, n_rows FROM dataset_tables "
                              "WHERE dataset_id = ? AND kind = ?", [dataset_id, kind]).fetchone()
        if row is None:
            raise DataError(f"this dataset has no {kind} table", fix="choose another dataset")
        return {"mapping": json.loads(row[0] or "{}"), "options": json.loads(row[1] or "{}"),
                "notes": json.loads(row[2] or "[]"), "rows": int(row[3])}

    def rename(self, dataset_id: str, new_name: str) -> str:
        """Rename a dataset (made unique by a suffix); returns the name given."""
        if not new_name or not new_name.strip():
            raise DataError("a dataset name cannot be empty", fix="type a name")
        with self._transaction() as con:
            if not con.execute("SELECT 1 FROM datasets WHERE id = ?", [dataset_id]).fetchone():
                raise DataError("this dataset is no longer in the workspace", fix="refresh the list")
            name = self._unique_name(con, new_name, exclude=dataset_id)
            con.execute("UPDATE datasets SET name = ?, updated = ? WHERE id = ?", [name, _now(), dataset_id])
        return name

    def delete(self, dataset_id: str) -> None:
        """Remove a dataset, its tables, pending upload and results, in one transaction."""
        with self._transaction() as con:
            for (tbl,) in con.execute("SELECT data_table FROM dataset_tables WHERE dataset_id = ?",
                                      [dataset_id]).fetchall():
                con.execute(f'DROP TABLE IF EXISTS "{tbl}"')
            for t in ("dataset_tables", "uploads", "results"):
                con.execute(f"DELETE FROM {t} WHERE dataset_id = ?", [dataset_id])
            con.execute("DELETE FROM datasets WHERE id = ?", [dataset_id])
            if self._get(con, "current_dataset") == dataset_id:
                con.execute("DELETE FROM settings WHERE key = 'current_dataset'")

    # -- results -----------------------------------------------------------------------

    def save_result(self, dataset_id: str, key: str, value: pd.DataFrame | dict, *, meta: dict | None = None) -> None:
        """Store a computed result (a DataFrame as Parquet, or a JSON-able dict) under ``key``."""
        if isinstance(value, pd.DataFrame):
            buf = _io.BytesIO()
            _storable(value).to_parquet(buf, index=False)
            kind, payload = "frame", buf.getvalue()
        else:
            kind, payload = "json", json.dumps(value, default=str).encode()
        with self._transaction() as con:
            con.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)",
                        [dataset_id, key, _now(), kind, payload, json.dumps(meta or {})])

    def load_result(self, dataset_id: str, key: str) -> pd.DataFrame | dict | None:
        """A stored result, or None when there is none."""
        with self._connect() as con:
            row = con.execute("SELECT kind, payload FROM results WHERE dataset_id = ? AND key = ?",
                              [dataset_id, key]).fetchone()
        if row is None:
            return None
        if row[0] == "frame":
            return _restored(pd.read_parquet(_io.BytesIO(bytes(row[1]))))
        return json.loads(bytes(row[1]).decode())

    def result_keys(self, dataset_id: str) -> list[str]:
        with self._connect() as con:
            return [r[0] for r in con.execute("SELECT key FROM results WHERE dataset_id = ? ORDER BY key",
                                              [dataset_id]).fetchall()]

    # -- settings ----------------------------------------------------------------------

    @staticmethod
    def _get(con: Any, key: str) -> str | None:
        row = con.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def get_setting(self, key: str) -> str | None:
        with self._connect() as con:
            return self._get(con, key)

    def set_setting(self, key: str, value: str | None) -> None:
        with self._transaction() as con:
            if value is None:
                con.execute("DELETE FROM settings WHERE key = ?", [key])
            else:
                con.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", [key, value])


def _storable(frame: pd.DataFrame) -> pd.DataFrame:
    # DuckDB and Parquet need plain column names; object columns of mixed types become text.
    out = frame.copy()
    out.columns = [str(c) for c in out.columns]
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(lambda v: v if v is None or isinstance(v, str) else str(v)).astype("string")
    return out.reset_index(drop=True)


def _restored(frame: pd.DataFrame) -> pd.DataFrame:
    for col in frame.columns:
        if frame[col].dtype == object:
            frame[col] = frame[col].astype("string")
    return frame
