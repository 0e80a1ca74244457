"""Analyses on data that need not fit in memory: the sufficient statistics as ibis expressions.

Every analysis here reduces to counts a GROUP BY computes (docs/engines.md).
:mod:`evalcore.engines.engine` connects to an engine (DuckDB by default, Spark, or any ibis
connection URL) and reads a file, a folder of Parquet files or a table into an ibis table;
:mod:`evalcore.engines.labels` reads the ratings' labels per criterion as the in-memory reader does;
:mod:`evalcore.engines.agreement` writes the agreement statistics once as ibis expressions, so only
the compressed counts come back to Python, and hands them to the same code as the in-process path
(:func:`evalcore.pointwise.agreement.table.agreement`).

ibis (and pyspark for ``spark``) come with the optional extra: ``pip install 'evalcore[engines]'``.
Nothing here is imported by the rest of evalcore unless an engine is asked for.
"""
