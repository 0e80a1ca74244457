"""Connecting to an engine and reading the ratings as an ibis table, without loading the rows.

Engines
-------
``duckdb`` (the default)
    An in-process DuckDB database: no set-up. DuckDB streams a file or a folder of Parquet files
    from disk, so the data never has to fit in memory; only the query results come back. When its
    hash tables outgrow its memory limit (80% of RAM by default) it spills them to a temporary folder.
``spark``
    A Spark session through ibis. The master and the rest of the configuration come from the usual
    Spark settings (``spark-defaults.conf`` in ``SPARK_CONF_DIR``, ``PYSPARK_SUBMIT_ARGS``) or from
    ``EVALCORE_SPARK_MASTER``; without them, a local session on every core. The SQL warehouse goes
    to a temporary folder, so no ``spark-warehouse/`` is left in the working directory.
any ibis connection URL
    ``trino://user@host:8080/catalog/schema``, ``bigquery://project/dataset``,
    ``snowflake://...``: :func:`ibis.connect` opens it, and the input names a table there.

The expressions of :mod:`evalcore.engines.agreement` are the same for every engine (the portable
subset: filter, mutate, group_by, aggregate with ``where=``, one window for the ``sample`` rule).
Feed engines from Parquet or Arrow, not from pandas: a pandas nullable ``Int64`` column sent to
Spark through ibis 12 comes back all NULL.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path

from ..errors import DataError

#: How to install what the engines need.
INSTALL = "pip install 'evalcore[engines]'"


def require_ibis():
    """The ``ibis`` module, or a DataError naming the install command when it is missing.

    ibis is an optional dependency (the ``[engines]`` extra): the default install stays lean.
    """
    try:
        import ibis
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise DataError(f"engines need the ibis package, which is not installed ({exc})", fix=INSTALL) from None
    return ibis


def fetch(expr):
    """An expression's result as a pandas DataFrame, through Arrow (engines' own pandas conversions differ)."""
    return expr.to_pyarrow().to_pandas()


def spark_session(*, master: str | None = None, conf: dict[str, str] | None = None):
    """A Spark session for ibis: the active one, or one built from the usual Spark settings.

    Parameters
    ----------
    master
        The Spark master (``local[1]``, ``spark://host:7077``, ``yarn``...). Default:
        ``EVALCORE_SPARK_MASTER``, else what the Spark configuration says, else ``local[*]``.
    conf
        More Spark settings, e.g. ``{"spark.ui.enabled": "false"}`` in tests.

    Why a temporary warehouse: Spark creates ``spark-warehouse/`` in the working directory on
    first use of its catalog, and nothing here stores tables.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise DataError(f"--engine spark needs pyspark, which is not installed ({exc})", fix=INSTALL) from None
    active = SparkSession.getActiveSession()
    if active is not None and master is None and not conf:
        return active
    builder = SparkSession.builder.appName("evalcore")
    master = master or os.environ.get("EVALCORE_SPARK_MASTER")
    if master:
        builder = builder.master(master)
    warehouse = tempfile.mkdtemp(prefix="evalcore-spark-warehouse-")
    atexit.register(shutil.rmtree, warehouse, ignore_errors=True)
    settings = {"spark.sql.warehouse.dir": warehouse,
                "spark.sql.session.timeZone": "UTC", **(conf or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:  # Java missing, a master that cannot be reached
        raise DataError(f"could not start a Spark session ({type(exc).__name__}: {str(exc).splitlines()[0]})",
                        fix="install Java 17 or later, and check the Spark master settings") from None


#: What ``--engine`` accepts, for messages.
ENGINES = ("duckdb (the default), spark or spark:MASTER, or an ibis connection URL such as trino://host/catalog, "
           "bigquery://project/dataset or duckdb:///path/to/database.duckdb")
#: The URL schemes whose rest is the path of a database file (ibis reads ``duckdb://a.db`` as a relative path).
_FILE_SCHEMES = ("duckdb", "sqlite")
#: The first bytes of a database file of each: DuckDB writes its magic after an 8-byte checksum.
_FILE_MAGIC = {"duckdb": (8, b"DUCK"), "sqlite": (0, b"SQLite format 3\x00")}


def url_schemes() -> list[str]:
    """The URL schemes :func:`connect` accepts: the ibis backends installed (``postgresql`` is ``postgres``)."""
    from importlib.metadata import entry_points

    return sorted({e.name for e in entry_points(group="ibis.backends")})


def _shown(url: str) -> str:
    """``url`` for a message, its password (``user:secret@host``) masked, even in a URL that does not parse."""
    return re.sub(r"^([^:/]*://[^:/@]*:)[^@/]*@", r"\1***@", url)


def _check_url(url: str) -> None:
    """Refuse, with one message, a URL :func:`ibis.connect` would fail on obscurely or act on wrongly: an
    unknown scheme (ibis looks any word up among its attributes), and for ``duckdb://``/``sqlite://`` a path
    that is not a database file of that kind (DuckDB would create a missing one, and reject a foreign one
    with an IO error)."""
    import urllib.parse

    shown = _shown(url)
    try:
        parsed = urllib.parse.urlparse(url)
        parsed.port  # noqa: B018  (a port that is not a number raises here, not deep inside a driver)
    except ValueError as exc:
        raise DataError(f"the engine '{shown}' is not a valid URL ({exc})",
                        fix=f"use {ENGINES}, written scheme://user@host:port/database") from None
    scheme = parsed.scheme.replace("postgresql", "postgres")
    schemes = url_schemes()
    if scheme not in schemes:
        what = f"'{parsed.scheme}://' is not an engine evalcore can connect to" if parsed.scheme else \
            "it has no engine name before '://'"
        raise DataError(f"the engine '{shown}' cannot be used: {what}",
                        fix=f"use {ENGINES}; the URL schemes are {', '.join(schemes)}")
    if scheme not in _FILE_SCHEMES:
        return
    path = urllib.parse.unquote(parsed.netloc + parsed.path)
    if path in ("", ":memory:"):
        return  # an in-memory database
    target = Path(path)
    title = "DuckDB" if scheme == "duckdb" else "SQLite"
    fix = (f"give the path of an existing {title} database ({scheme}:///absolute/path or {scheme}://relative/path), "
           "or use --engine duckdb to read Parquet or CSV files")
    if not target.exists():
        raise DataError(f"the engine '{shown}' names {path}, which does not exist", fix=fix)
    if not target.is_file():
        raise DataError(f"the engine '{shown}' names {path}, which is a folder, not a {title} database file",
                        fix=fix)
    offset, magic = _FILE_MAGIC[scheme]
    try:
        with open(target, "rb") as fh:
            head = fh.read(offset + len(magic))
    except OSError as exc:
        raise DataError(f"the engine '{shown}' names {path}, which could not be read ({exc.strerror})",
                        fix="check the file's permissions") from None
    if head[offset:] != magic:
        raise DataError(f"the engine '{shown}' names {path}, which is not a {title} database file", fix=fix)


def connect(engine: str | None = "duckdb", *, spark_conf: dict[str, str] | None = None):
    """An ibis backend for ``engine``: ``duckdb`` (default), ``spark``, or an ibis connection URL.

    Parameters
    ----------
    engine
        ``duckdb``/None, ``spark`` (optionally ``spark:MASTER``, e.g. ``spark:local[1]``), or a URL
        that :func:`ibis.connect` understands (``trino://...``, ``bigquery://...``, ``duckdb:///path.db``)
        whose scheme is an installed ibis backend (:func:`url_schemes`).
    spark_conf
        Extra Spark settings when a Spark session is built.

    Raises
    ------
    DataError
        For an engine that is not one of these, a ``duckdb://``/``sqlite://`` URL that does not name a
        database file of that kind, a missing backend package, and a connection that fails; the
        message names the engine (a password in the URL masked) and what to give instead.
    """
    ibis = require_ibis()
    name = (engine or "duckdb").strip()
    if name.lower() == "duckdb":
        con = ibis.duckdb.connect()
        # DuckDB spills to ./.tmp when the hash tables outgrow its memory limit: a temporary folder instead,
        # so that nothing is written where the command runs.
        spill = tempfile.mkdtemp(prefix="evalcore-duckdb-spill-")
        atexit.register(shutil.rmtree, spill, ignore_errors=True)
        con.raw_sql(f"SET temp_directory = '{spill}'")
        return con
    if name.lower() == "spark" or name.lower().startswith("spark:"):
        master = name.split(":", 1)[1] if ":" in name else None
        return ibis.pyspark.connect(spark_session(master=master or None, conf=spark_conf))
    if "://" not in name:
        raise DataError(f"unknown engine '{engine}'", fix=f"use {ENGINES}")
    _check_url(name)
    scheme = name.split("://")[0]
    try:
        return ibis.connect(name)
    except ImportError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"the engine '{scheme}' needs a package that is not installed ({detail})",
                        fix=f"install ibis' backend for it, e.g. pip install 'ibis-framework[{scheme}]'") from None
    except Exception as exc:  # a server that cannot be reached, refused credentials, a damaged database file
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise DataError(f"could not connect to the engine '{_shown(name)}' ({type(exc).__name__}"
                        + (f": {detail})" if detail else ")"),
                        fix="check the URL, that the server is running and reachable, and the credentials") from None


def _parquet_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.parquet") if p.is_file())


def _unreadable(con, source: object, exc: Exception) -> DataError:
    """The engine's own error on reading ``source`` (DuckDB's "No magic bytes found", ...), as one message."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DataError(f"could not be read by the {getattr(con, 'name', 'engine')} engine ({detail})", file=str(source),
                     fix="check that it is a complete Parquet or CSV file (re-export it), or run without --engine "
                         "for the in-memory reader's diagnosis")


def read_files(con, paths: list[str]):
    """Several Parquet files, or several CSV files (by the first one's name), as one ibis table on ``con``.

    Raises DataError, naming the files, when the engine cannot read them (a damaged or foreign file).
    """
    try:
        return con.read_parquet(paths) if paths[0].lower().endswith((".parquet", ".pq")) else con.read_csv(paths)
    except Exception as exc:
        label = paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1:,} more"
        raise _unreadable(con, label, exc) from None


def read(con, source: str | os.PathLike):
    """The ratings at ``source`` as an ibis table on the backend ``con``, read lazily.

    ``source`` is a Parquet file, a folder of Parquet files (read as one table, however large:
    the engine streams it), a CSV file, a URL the engine reads itself (``s3a://...``, ``hdfs://...``),
    or, on a database engine, the name of a table there.
    Raises DataError when it is none of these, and when the engine cannot read it (a damaged file).
    """
    try:
        return _read(con, source)
    except DataError:
        raise
    except Exception as exc:  # the engine's own errors: InvalidInputException, IOException, AnalysisException...
        raise _unreadable(con, source, exc) from None


def _read(con, source: str | os.PathLike):
    text = str(source)
    if "://" in text:
        # A path the engine reads itself (s3a://, hdfs://, gs://...): a CSV file, else Parquet (a folder for
        # Spark; a glob such as s3://bucket/judgments/*.parquet for DuckDB).
        return con.read_csv(text) if text.lower().endswith((".csv", ".tsv")) else con.read_parquet(text)
    path = Path(source)
    backend = getattr(con, "name", "")
    if path.is_dir():
        files = _parquet_files(path)
        if not files:
            raise DataError(f"the folder {path} holds no .parquet file", file=str(path),
                            fix="give a folder of Parquet files, or one file")
        if backend == "duckdb":
            return con.read_parquet([str(f) for f in files])
        if backend == "pyspark":  # subfolders too, as for DuckDB (Spark reads only key=value subfolders)
            return con.read_parquet(str(path), recursiveFileLookup="true")
        return con.read_parquet(str(path))
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix in (".parquet", ".pq"):
            return con.read_parquet(str(path))
        if suffix in (".csv", ".tsv", ".txt"):
            return con.read_csv(str(path))
        raise DataError(f"an engine reads Parquet or CSV files, not '{path.suffix}'", file=str(path),
                        fix="convert the file to Parquet, or run without --engine")
    try:
        if "." in text:  # catalog.schema.table or schema.table
            *database, name = text.split(".")
            return con.table(name, database=tuple(database) if len(database) > 1 else database[0])
        return con.table(text)
    except Exception:
        raise DataError(f"'{source}' is neither a file, a folder of Parquet files nor a table of the engine",
                        file=str(source), fix="check the path, or give the name of a table the engine holds") from None
