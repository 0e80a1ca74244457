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
- **Safe under concurrency.** The file is opened for the duration of an operation and
  closed as soon as no operation of this process needs it, so it is locked only briefly
  (sessions of one server share the open handle, each with its own cursor). Writers in
  one process take a lock; reads see one consistent snapshot; a process that finds the
  file locked by another retries for ``lock_timeout`` seconds before giving up with a
  clear :class:`~evalcore.errors.WorkspaceError`. Database failures never surface as raw
  duckdb exceptions.
- **Readable when read-only.** A workspace whose file or folder cannot be written (permissions,
  an immutable folder, a read-only mount) is opened read-only: its datasets can be read, and
  every write is refused with a :class:`~evalcore.errors.WorkspaceError` that says why.
- **Faithful.** Tables come back with the values and column types they were saved with
  (text as pandas ``string``); untyped object columns are given a definite type first.

An *upload* is kept as the raw bytes of the user's file until its column mapping is
confirmed, so a refresh in the middle of mapping loses nothing. A *dataset* then holds
up to two canonical tables (``ratings`` and ``comparisons``). Readers that need the upload as
files (the presets read paths) get owner-only copies in the folder ``<workspace file>.uploads``
next to the database (:meth:`Workspace.upload_paths`, :meth:`Workspace.scratch_files`), removed
when the upload is imported or deleted.
"""

from __future__ import annotations

import contextlib
import io as _io
import hashlib
import json
import os
import random
import re
import shutil
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from ..columns import TABLES
from ..errors import DataError, WorkspaceError
from .export import safe_file_name

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
    # What an upload held (a digest of its files' names and bytes): the same files uploaded again open the
    # dataset they became instead of a copy named "name (2)".
    """CREATE TABLE IF NOT EXISTS upload_digests (dataset_id VARCHAR PRIMARY KEY, digest VARCHAR NOT NULL)""",
]

def upload_digest(files: list[tuple[str, bytes]]) -> str:
    """SHA-256 of an upload's files (names and bytes, in name order): the same files give the same digest.

    >>> upload_digest([("a.csv", b"x")]) == upload_digest([("a.csv", b"x")]) != upload_digest([("a.csv", b"y")])
    True
    """
    h = hashlib.sha256()
    for name, content in sorted(files, key=lambda f: f[0]):
        h.update(name.encode("utf-8") + b"\0" + len(content).to_bytes(8, "little") + bytes(content))
    return h.hexdigest()


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
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    # The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored (it would
    # otherwise put the workspace under the current folder, e.g. inside the repository).
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
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


class _Shared:
    """The database handle this process has open on one workspace file, if any."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.con: Any = None
        self.users = 0


_SHARED: dict[str, _Shared] = {}
_SHARED_LOCK = threading.Lock()


def _forget_handles_after_fork() -> None:
    # A forked child must not use (or wait on locks held for) the parent's open handles.
    global _SHARED_LOCK, _LOCK
    _SHARED.clear()
    _SHARED_LOCK = threading.Lock()
    _LOCK = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_handles_after_fork)


def _shared(path: Path) -> _Shared:
    key = os.path.abspath(path)
    with _SHARED_LOCK:
        return _SHARED.setdefault(key, _Shared())


def _is_lock_conflict(exc: Exception) -> bool:
    text = str(exc).lower()
    return "could not set lock" in text or "conflicting lock" in text


def _is_permission_error(exc: BaseException) -> bool:
    """Whether ``exc`` says the file system refused a write (permissions, immutable, read-only mount)."""
    text = str(exc).lower()
    return any(w in text for w in ("permission denied", "operation not permitted", "read-only file system",
                                   "read only file system"))


#: Owner-only modes of the uploaded files' copies: an upload may hold data nobody else on the machine may read.
_DIR_MODE, _FILE_MODE = 0o700, 0o600


def _json(value: Any) -> str:
    """JSON text of a mapping/result; numpy scalars and arrays become plain numbers and lists."""
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalars/arrays, pandas arrays
        return value.tolist()
    if isinstance(value, (datetime, pd.Timestamp)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if value is pd.NA or value is pd.NaT:
        return None
    return str(value)


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

    Attributes
    ----------
    read_only
        True when the file or its folder cannot be written: datasets can be read, writes are refused.
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
        if self.path.is_dir():
            raise WorkspaceError(
                f"The workspace {self.path} is a folder, not a database file. "
                "Fix: set EVALCORE_WORKSPACE to a file path such as ~/evalcore/workspace.duckdb."
            )
        self._why_read_only = self._unwritable()
        if self._why_read_only and not self.path.exists():
            raise WorkspaceError(
                f"The workspace folder {self.path.parent} is read-only ({self._why_read_only}), so no workspace "
                "can be created in it. Fix: set EVALCORE_WORKSPACE to a writable folder, or make this folder "
                "writable and restart the app."
            )
        import duckdb

        # Create the tables once; concurrent sessions of this process serialise on _LOCK,
        # and the check avoids a write (and a lock wait) when the workspace already exists.
        with self._connect() as con:
            try:
                ready = con.execute("SELECT 1 FROM settings WHERE key = 'schema_version'").fetchone()
            except duckdb.CatalogException:
                ready = None
        if not ready:
            with self._transaction() as con:
                for ddl in _DDL:
                    con.execute(ddl)
                con.execute("INSERT OR IGNORE INTO settings VALUES ('schema_version', ?)", [str(_SCHEMA_VERSION)])

    @property
    def read_only(self) -> bool:
        """Whether the workspace can only be read (its file or folder cannot be written)."""
        return bool(self._why_read_only)

    def read_only_message(self) -> str:
        """Why nothing can be written to this workspace, and the fix (empty when it is writable)."""
        if not self._why_read_only:
            return ""
        return (f"The workspace {self.path} is read-only ({self._why_read_only}): its datasets can be opened, but "
                "nothing can be uploaded, imported, renamed or deleted, and results are not kept. Fix: set "
                "EVALCORE_WORKSPACE to a writable folder, or make the file and its folder writable and restart the "
                "app.")

    def _unwritable(self) -> str | None:
        """Why the database or its folder cannot be written, or None when both can.

        Tried, not inferred from the permission bits: root ignores them, an immutable folder or a read-only
        mount refuses root too. DuckDB writes its log next to the file, so the folder must be writable.
        """
        try:
            fd, probe = tempfile.mkstemp(prefix=".evalcore-probe-", dir=self.path.parent)
            os.close(fd)
            os.unlink(probe)
            if self.path.exists():
                with open(self.path, "r+b"):
                    pass
        except OSError as exc:
            return (exc.strerror or type(exc).__name__).lower()
        return None

    # -- connections -------------------------------------------------------------------

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Any]:
        """A connection for one operation; waits while another process holds the file.

        DuckDB lets one process at a time open a file. Within this process, all
        operations in flight share one database handle (each gets its own cursor) and the
        handle is closed as soon as the last of them ends, releasing the file for other
        processes. Opening and closing are serialised per file: DuckDB fails when one
        thread opens the file while another is still closing it.
        Database errors raised while the connection is in use become
        :class:`~evalcore.errors.WorkspaceError` (never a raw duckdb exception).
        """
        import duckdb

        shared = _shared(self.path)
        with shared.lock:
            if shared.con is None:
                shared.con = self._open()
            try:
                con = shared.con.cursor()
            except duckdb.Error as exc:
                if shared.users == 0:
                    with contextlib.suppress(Exception):
                        shared.con.close()
                    shared.con = None
                raise self._error(exc) from None
            shared.users += 1
        try:
            yield con
        except duckdb.Error as exc:
            raise self._error(exc) from exc
        finally:
            with shared.lock:
                shared.users -= 1
                with contextlib.suppress(Exception):
                    con.close()
                if shared.users == 0 and shared.con is not None:
                    # Closing checkpoints the write-ahead log into the file and releases the
                    # lock; a failed checkpoint loses nothing (the log is replayed on open).
                    with contextlib.suppress(Exception):
                        shared.con.close()
                    shared.con = None

    def _error(self, exc: Exception) -> WorkspaceError:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if _is_permission_error(exc):  # e.g. the folder became read-only while the app ran
            return WorkspaceError(
                f"The workspace {self.path} cannot be written ({first}). Nothing was changed by this step. "
                "Fix: set EVALCORE_WORKSPACE to a writable folder, or make the file and its folder writable."
            )
        return WorkspaceError(
            f"The workspace {self.path} could not be used ({first}). Nothing was changed by "
            "this step. Fix: try again; if it keeps failing, check free disk space or move the "
            "file aside to start a new workspace."
        )

    def _open(self) -> Any:
        import duckdb

        deadline = time.monotonic() + self.lock_timeout
        delay = 0.01
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=self.read_only)
            except duckdb.Error as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                if _is_lock_conflict(exc):
                    # Another process holds the file lock: wait for it rather than fail.
                    if time.monotonic() < deadline:
                        time.sleep(delay * (0.5 + random.random()))  # jitter: no lock-step retries
                        delay = min(delay * 1.5, 0.2)
                        continue
                    pid = re.search(r"PID (\d+)", str(exc))
                    raise WorkspaceError(
                        f"The workspace {self.path} is in use by another program"
                        f"{f' (process {pid.group(1)})' if pid else ''} and was still locked after "
                        f"{self.lock_timeout:g} s. Fix: close the other program that has this file open (or wait "
                        "for it to finish) and reload the page, or set EVALCORE_WORKSPACE to another file."
                    ) from None
                if not self.read_only and _is_permission_error(exc) and self.path.exists():
                    # Not writable after all (the check at start-up passed): read what is there.
                    self._why_read_only = "the file system refused to open it for writing"
                    continue
                low = first.lower()
                if any(w in low for w in ("not a valid duckdb", "invalid", "corrupt", "serializ", "checksum")):
                    raise WorkspaceError(
                        f"The workspace {self.path} is not a readable evalcore workspace ({first}). "
                        f"Fix: move or rename the file (e.g. to {self.path.name}.broken) to start a new "
                        "workspace, or set EVALCORE_WORKSPACE to another file."
                    ) from None
                raise WorkspaceError(
                    f"The workspace {self.path} cannot be opened ({first}). Fix: check that the file "
                    "and its folder are readable and writable, or set EVALCORE_WORKSPACE to another file."
                ) from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        """A write transaction: all or nothing, one writer per process at a time."""
        if self._why_read_only:
            raise WorkspaceError(self.read_only_message())
        with _LOCK, self._connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                with contextlib.suppress(Exception):
                    con.execute("ROLLBACK")
                raise
            else:
                con.execute("COMMIT")

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[Any]:
        """A read-only transaction: several queries see one consistent state.

        Without it, a dataset deleted by another session between two queries would show
        up half (listed without tables, or with a table that no longer exists).
        """
        with self._connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            finally:
                with contextlib.suppress(Exception):
                    con.execute("ROLLBACK")

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
        names = [f for f, _ in files]
        twice = sorted({f for f in names if names.count(f) > 1})
        if twice:
            raise DataError(f"two of the uploaded files are named '{twice[0]}'", file=twice[0],
                            fix="rename one of them, or upload them one at a time")
        digest = upload_digest(files)
        did = uuid.uuid4().hex[:12]
        now = _now()
        label = ", ".join(f for f, _ in files)
        with self._transaction() as con:
            # The check is part of the insert's transaction: two sessions (or processes) uploading the same
            # files at once would otherwise both find nothing and store two copies.
            same = self._find_upload(con, digest)
            if same is not None:
                return same
            con.execute("INSERT INTO upload_digests VALUES (?, ?)", [did, digest])
            con.execute(
                "INSERT INTO datasets VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)",
                [did, self._unique_name(con, name or Path(files[0][0]).stem), now, now, label, NEEDS_MAPPING],
            )
            for file_name, content in files:
                con.execute("INSERT INTO uploads VALUES (?, ?, ?, ?)",
                            [did, file_name, bytes(content), _json(options or {})])
        return did

    def find_upload(self, digest: str) -> str | None:
        """The dataset an upload with this :func:`upload_digest` became (or awaits mapping as), if any."""
        with self._connect() as con:
            return self._find_upload(con, digest)

    @staticmethod
    def _find_upload(con: Any, digest: str) -> str | None:
        row = con.execute("SELECT d.dataset_id FROM upload_digests d JOIN datasets s ON s.id = d.dataset_id "
                          "WHERE d.digest = ? ORDER BY s.created LIMIT 1", [digest]).fetchone()
        return row[0] if row else None

    # -- the uploads' files ------------------------------------------------------------

    @property
    def files_dir(self) -> Path:
        """The owner-only folder of the uploads' file copies, next to the database (``<file>.uploads``)."""
        return self.path.with_name(self.path.name + ".uploads")

    def _private_dir(self, folder: Path) -> Path:
        """``folder`` (under :attr:`files_dir`) created owner-only; a WorkspaceError when it cannot be."""
        try:
            for d in (self.files_dir, folder):
                d.mkdir(mode=_DIR_MODE, exist_ok=True)
                os.chmod(d, _DIR_MODE)  # also an older, looser folder; mkdir's mode is cut by the umask
        except OSError as exc:
            raise self._files_error(exc) from None
        return folder

    @staticmethod
    def _write_files(folder: Path, files: list[tuple[str, bytes]]) -> list[Path]:
        out = []
        for name, data in files:
            base = Path(str(name)).name
            if base in ("", ".", "..") or "\0" in base or len(base.encode("utf-8", "replace")) > 200:
                base = safe_file_name(str(name).replace("\0", "_"))  # a name no file system takes as given
            p = folder / base
            if not p.exists() or p.stat().st_size != len(data):
                tmp = folder / f".{uuid.uuid4().hex}.part"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _FILE_MODE)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(bytes(data))
                tmp.replace(p)
            os.chmod(p, _FILE_MODE)
            out.append(p)
        return out

    def upload_paths(self, dataset_id: str, files: list[tuple[str, bytes]]) -> list[Path]:
        """The files of a pending upload (:meth:`upload`) as owner-only files, for readers that take paths.

        Written once per upload (later calls reuse them) and removed when the upload is imported or deleted.
        """
        _table_name(dataset_id, TABLES[0])  # an id of the workspace, never a path
        folder = self._private_dir(self.files_dir / dataset_id)
        try:
            return self._write_files(folder, files)
        except OSError as exc:
            raise self._files_error(exc) from None

    @contextlib.contextmanager
    def scratch_files(self, files: list[tuple[str, bytes]]) -> Iterator[list[Path]]:
        """``files`` as owner-only files for the duration of the block (a look at an upload not stored yet),
        removed afterwards whatever happens."""
        self._private_dir(self.files_dir / "scratch")
        try:
            folder = Path(tempfile.mkdtemp(prefix="probe-", dir=self.files_dir / "scratch"))  # mode 0o700
        except OSError as exc:
            raise self._files_error(exc) from None
        try:
            try:
                paths = self._write_files(folder, files)
            except OSError as exc:
                raise self._files_error(exc) from None
            yield paths
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _files_error(self, exc: OSError) -> WorkspaceError:
        return WorkspaceError(
            f"The uploaded files cannot be written next to the workspace, in {self.files_dir} "
            f"({exc.strerror or type(exc).__name__}). Nothing was stored. Fix: set EVALCORE_WORKSPACE to a "
            "writable folder (with free space), or make the workspace's folder writable."
        )

    def _discard_files(self, dataset_id: str) -> None:
        # After the commit: a copy left by a failed removal is harmless, a removed copy of a kept upload is not.
        if re.fullmatch(r"[0-9a-f]{12}", dataset_id):
            shutil.rmtree(self.files_dir / dataset_id, ignore_errors=True)

    def upload(self, dataset_id: str) -> list[tuple[str, bytes]]:
        """The raw files of a dataset awaiting mapping, as ``(file name, bytes)``."""
        with self._connect() as con:
            rows = con.execute("SELECT file_name, content FROM uploads WHERE dataset_id = ? ORDER BY file_name",
                               [dataset_id]).fetchall()
        if not rows:
            raise DataError("this dataset has no pending upload", fix="upload the file again")
        return [(r[0], bytes(r[1])) for r in rows]

    def upload_options(self, dataset_id: str) -> dict:
        """The options saved with a pending upload (:meth:`save_upload`, :meth:`set_upload_options`): what the
        analyst chose while mapping it, such as each criterion's scale. Empty when none were saved."""
        with self._connect() as con:
            row = con.execute("SELECT options FROM uploads WHERE dataset_id = ? ORDER BY file_name LIMIT 1",
                              [dataset_id]).fetchone()
        if row is None:
            raise DataError("this dataset has no pending upload", fix="upload the file again")
        return json.loads(row[0] or "{}")

    def set_upload_options(self, dataset_id: str, options: dict) -> None:
        """Save ``options`` with a pending upload, replacing those it had: the choices made while mapping it stay
        for other sessions and after a reload, until the upload is imported or deleted."""
        with self._transaction() as con:
            if not con.execute("SELECT 1 FROM uploads WHERE dataset_id = ?", [dataset_id]).fetchone():
                raise DataError("this dataset has no pending upload", fix="upload the file again")
            con.execute("UPDATE uploads SET options = ? WHERE dataset_id = ?", [_json(options), dataset_id])

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
        prepared = {kind: _storable(frame, what=f"the {kind} table") for kind, frame in tables.items()}
        for kind, frame in prepared.items():
            if frame.shape[1] == 0:
                raise DataError(f"the {kind} table has no columns", fix="import a file with data")
        for kind in prepared:
            _table_name(did, kind)
        meta = {kind: (_json((mappings or {}).get(kind, {})), _json((options or {}).get(kind, {})),
                       _json(list((notes or {}).get(kind, []))))
                for kind in prepared}
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
            for kind, frame in prepared.items():
                tbl = _table_name(did, kind)
                con.register("_incoming", frame)
                try:
                    con.execute(f'CREATE TABLE "{tbl}" AS SELECT * FROM _incoming')
                finally:
                    con.unregister("_incoming")
                con.execute("INSERT INTO dataset_tables VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [did, kind, tbl, *meta[kind], len(frame)])
        self._discard_files(did)  # the upload's raw bytes are gone from the database: so are its copies
        return did

    def _file_state(self) -> tuple:
        """What changes whenever anything writes to the workspace: the database file's and its write-ahead
        log's modification time and size (DuckDB commits to the log, and a checkpoint rewrites the file)."""
        out = []
        for f in (self.path, self.path.with_name(self.path.name + ".wal")):
            try:
                st = f.stat()
                out.append((st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    def list_datasets(self) -> list[DatasetInfo]:
        """All datasets, newest first.

        A page asks for the list a dozen times per run (the sidebar, the current dataset, ...); opening the
        database each time cost ~50 ms. The list is kept until the workspace files change, which any write,
        from this process or another (a second app server on the same file), does.
        """
        state = self._file_state()
        kept = getattr(self, "_listing", None)
        if kept is not None and kept[0] == state and state[0] is not None:
            return list(kept[1])
        listing = self._list_datasets()
        if self._file_state() == state:  # nothing was written while reading: the list matches this state
            self._listing = (state, listing)
        return list(listing)

    def _list_datasets(self) -> list[DatasetInfo]:
        with self._snapshot() as con:
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
        with self._snapshot() as con:
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
        """Remove a dataset, its tables, pending upload and results, in one transaction, then its files' copies."""
        with self._transaction() as con:
            for (tbl,) in con.execute("SELECT data_table FROM dataset_tables WHERE dataset_id = ?",
                                      [dataset_id]).fetchall():
                con.execute(f'DROP TABLE IF EXISTS "{tbl}"')
            for t in ("dataset_tables", "uploads", "results", "upload_digests"):
                con.execute(f"DELETE FROM {t} WHERE dataset_id = ?", [dataset_id])
            con.execute("DELETE FROM datasets WHERE id = ?", [dataset_id])
            if self._get(con, "current_dataset") == dataset_id:
                con.execute("DELETE FROM settings WHERE key = 'current_dataset'")
        self._discard_files(dataset_id)

    # -- results -----------------------------------------------------------------------

    def save_result(self, dataset_id: str, key: str, value: pd.DataFrame | dict, *, meta: dict | None = None) -> None:
        """Store a computed result (a DataFrame as Parquet, or a JSON-able dict) under ``key``."""
        if isinstance(value, pd.DataFrame):
            buf = _io.BytesIO()
            _storable(value, what=f"the result '{key}'", keep_index=True).to_parquet(buf)
            kind, payload = "frame", buf.getvalue()
        else:
            kind, payload = "json", _json(value).encode()
        with self._transaction() as con:
            con.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)",
                        [dataset_id, key, _now(), kind, payload, _json(meta or {})])

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


def _storable(frame: pd.DataFrame, *, what: str = "the table", keep_index: bool = False) -> pd.DataFrame:
    """A copy of ``frame`` that DuckDB and Parquet store faithfully.

    DuckDB guesses the type of an object column from its first values and fails (or
    silently changes values) when a later value does not fit, and it rejects some pandas
    types; so every column is given a definite type here, before any write begins:
    object columns holding only booleans, integers or numbers keep that type, text and
    anything mixed become text, and types DuckDB cannot store become text.
    Column names are made strings; names DuckDB would rename (duplicates, also when they
    differ only in case) are refused.
    """
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{what} is not a table (got {type(frame).__name__})", fix="pass a pandas DataFrame")
    index = frame.index
    out = frame.reset_index(drop=True)
    out.columns = [str(c) for c in out.columns]
    seen: dict[str, str] = {}
    for col in out.columns:
        if not col.strip():
            raise DataError(f"{what} has a column without a name", fix="name every column")
        if col.lower() in seen:
            other = seen[col.lower()]
            pair = f"'{col}' twice" if other == col else f"both '{other}' and '{col}'"
            raise DataError(f"{what} has a column named {pair} (the workspace does not tell them apart)",
                            column=col, fix="rename one of the two columns")
        seen[col.lower()] = col
    result = pd.DataFrame({col: _storable_column(out.iloc[:, i]) for i, col in enumerate(out.columns)},
                          columns=list(out.columns))
    if keep_index:
        result.index = index
    return result


def _as_text(s: pd.Series) -> pd.Series:
    na = s.isna()
    text = s.map(lambda v: v if isinstance(v, str) else str(v)).astype("string")
    return text.mask(na, pd.NA)


def _storable_column(s: pd.Series) -> pd.Series:
    dtype = s.dtype
    if dtype == object:
        kind = pd.api.types.infer_dtype(s, skipna=True)
        try:
            if kind in ("string", "empty"):
                return s.astype("string")
            if kind == "boolean":
                return s.astype("boolean")
            if kind == "integer":
                return s.astype("Int64")
            if kind in ("floating", "mixed-integer-float", "integer-na"):
                return s.astype("float64")
        except (TypeError, ValueError, OverflowError):
            pass
        return _as_text(s)
    if isinstance(dtype, (pd.PeriodDtype, pd.IntervalDtype, pd.SparseDtype)) or getattr(dtype, "kind", "") in "cSUV":
        return _as_text(s)
    if isinstance(dtype, pd.CategoricalDtype) and pd.api.types.infer_dtype(dtype.categories, skipna=True) not in (
            "string", "integer", "floating", "boolean"):
        return _as_text(s.astype(object))
    return s


def _restored(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns come back as pandas' ``string`` dtype (missing = ``pd.NA``), as
    :mod:`evalcore.data.validation` makes them; DuckDB returns them as ``object`` or ``str``."""
    for col in frame.columns:
        dtype = frame[col].dtype
        if isinstance(dtype, pd.StringDtype) and dtype.na_value is pd.NA:
            continue
        if dtype == object or isinstance(dtype, pd.StringDtype):
            frame[col] = frame[col].astype("string")
    index = frame.index
    if not isinstance(index, pd.MultiIndex) and (index.dtype == object or isinstance(index.dtype, pd.StringDtype)) \
            and not (isinstance(index.dtype, pd.StringDtype) and index.dtype.na_value is pd.NA):
        frame.index = index.astype("string")
    return frame
