"""``history(spark, path)``: the commits of a Delta table as typed :class:`Commit` objects.

Reads them on the server through the plugin's data source (``spark.read.format("filecommit")``
with option ``history = true``), which lists every JSON commit still in ``_delta_log`` as Delta's
``DESCRIBE HISTORY`` does (Delta's ``DeltaHistoryManager.getHistory``; PROTOCOL.md "Commit
Provenance Information"). Reading a table needs nothing from this package: any Spark Connect
client can use ``spark.read.format("filecommit").load(path)`` with Delta's options
(``versionAsOf``, ``timestampAsOf``, ``readChangeFeed`` + ``startingVersion`` ...), and with
``option("table", "db.t").load()`` instead of a path, the catalog table of that name.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from filecommit._checks import int64_at_least_zero, path_or_table

FORMAT = "filecommit"
"""The short name of the plugin's data source."""

if TYPE_CHECKING:
    from filecommit._typing import AnySparkSession as SparkSession


@dataclass(frozen=True)
class Commit:
    """One commit of a Delta table (its ``commitInfo`` action).

    Attributes:
        version: the table version the commit created.
        timestamp: the commit's time (naive datetime in the Spark session's time zone, as pyspark
            returns timestamps): the in-commit timestamp where the table has them, else the commit
            file's modification time, made strictly increasing as Delta does.
        operation: Delta's operation name, e.g. ``WRITE``, ``DELETE``, ``MERGE``; None for a
            commit without ``commitInfo``.
        parameters: the operation's parameters (values as strings; JSON text for non-strings).
        metrics: the operation's metrics (values as strings, e.g. ``numOutputRows``).
        read_version: the version the transaction read, None for a table's first commit.
        isolation_level: ``Serializable`` / ``WriteSerializable``, or None.
        is_blind_append: whether the commit only added files without reading the table, or None.
        engine_info: the writer, e.g. ``filecommit/0.1.0 Apache-Spark/4.3.0``, or None.
        user_id: who committed (``commitInfo.userId``: the verified principal on a server that
            authenticates its clients), or None.
        user_name: who committed, by name (``commitInfo.userName``), or None.
    """

    version: int
    timestamp: datetime.datetime
    operation: str | None
    parameters: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)
    read_version: int | None = None
    isolation_level: str | None = None
    is_blind_append: bool | None = None
    engine_info: str | None = None
    user_id: str | None = None
    user_name: str | None = None


def history(
    spark: SparkSession, path: str | None = None, limit: int | None = None, *, table: str | None = None
) -> list[Commit]:
    """The commits of the Delta table at ``path`` (or of the catalog table ``table``), newest first.

    Args:
        spark: a Spark Connect session to a server with the filecommit plugin.
        path: the table root as the server sees it.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``; the reader's ``table`` option, resolved on the server to its
            location); give exactly one of ``path`` and ``table`` (``CANNOT_SET_TOGETHER``
            otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server for an unknown name).
        limit: at most this many commits (the newest), or all when None.

    Returns:
        :class:`Commit` objects, descending by version; only commits whose JSON file is still in
        the log (log clean-up removes old ones, as for Delta's ``DESCRIBE HISTORY``).

    Raises:
        pyspark.errors.PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for an empty path,
            ``NEGATIVE_VALUE`` for a negative ``limit``.
        pyspark.errors.PySparkTypeError: ``NOT_EXPECTED_TYPE`` for a ``limit`` that is not an int.
        pyspark.errors.exceptions.connect.AnalysisException: (or another pyspark exception) with
            error class ``DELTA_MISSING_DELTA_TABLE`` when ``path`` holds no Delta table.
    """
    path, table = path_or_table(path, table)
    if limit is not None:
        int64_at_least_zero("limit", limit)
    reader = spark.read.format(FORMAT).option("history", "true")
    df = reader.option("table", table).load() if table else reader.load(path)
    out = []
    for r in (df if limit is None else df.limit(limit)).collect():
        out.append(Commit(version=r["version"], timestamp=r["timestamp"], operation=r["operation"],
                          parameters=dict(r["operationParameters"] or {}), metrics=dict(r["operationMetrics"] or {}),
                          read_version=r["readVersion"], isolation_level=r["isolationLevel"],
                          is_blind_append=r["isBlindAppend"], engine_info=r["engineInfo"],
                          user_id=r["userId"], user_name=r["userName"]))
    return sorted(out, key=lambda c: -c.version)
