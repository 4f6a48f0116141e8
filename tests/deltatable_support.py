"""What the modules of delta-spark's ``DeltaTable`` API over Spark Connect share
(``tests/test_deltatable_*.py``): the fixture table's columns and rows, the Spark + Delta steps that
make it, and the checks that read a result back with delta-rs and Spark + Delta."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import (
    error_class,
    log_actions,
    rows_frame,
    spark_delta_rows,
    sql_steps,
    values_sql,
    versioned_rows_delta_rs,
)
from pyspark.errors import PySparkException

COLUMNS = ["id", "v", "part"]
ROWS = [(i, i * 10, "abc"[i % 3]) for i in range(40)]


def steps(props: str) -> list[dict]:
    """Spark + Delta steps (``tests/delta_tables.py``) of the fixture table: (id BIGINT, v BIGINT,
    part STRING) partitioned by ``part``, ``ROWS`` in two INSERTs (versions 1 and 2), with ``props``
    (e.g. a ``TBLPROPERTIES`` clause) after the partitioning."""
    return sql_steps(
        f"CREATE TABLE {{table}} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) {props}",
        f"INSERT INTO {{table}} VALUES {values_sql(ROWS[:20])}",
        f"INSERT INTO {{table}} VALUES {values_sql(ROWS[20:])}",
    )


def latest_version(path: str) -> int:
    """The table's latest version, read from its ``_delta_log``."""
    return max(log_actions(path))


def both_read(delta_spark, path: str, expected_rows) -> None:
    """delta-rs (its DataFusion scan, which applies deletion vectors) and Spark + Delta both read
    exactly ``expected_rows`` ((id, v, part) tuples)."""
    assert versioned_rows_delta_rs(path, COLUMNS)[1] == sorted(expected_rows)
    expected = rows_frame(expected_rows, COLUMNS)
    pd.testing.assert_frame_equal(spark_delta_rows(delta_spark, path, COLUMNS), expected)


def delta_rs_reads(path: str, expected_rows) -> None:
    """delta-rs alone reads exactly ``expected_rows``: for Delta's own copy of a twin, whose rows
    are the expectation (Spark + Delta wrote it), and for a table a refused call left unchanged."""
    assert versioned_rows_delta_rs(path, COLUMNS)[1] == sorted(expected_rows)


def unchanged(path: str, version: int) -> None:
    """A refused call committed nothing: the log still ends at ``version`` and delta-rs reads the
    fixture's ``ROWS``. (The files are the fixture's, untouched, so one reader suffices.)"""
    assert latest_version(path) == version
    delta_rs_reads(path, ROWS)


def refused(call) -> str | None:
    """The error class of the pyspark error ``call()`` raises (it must raise one)."""
    with pytest.raises(PySparkException) as e:
        call()
    return error_class(e)


def delta_error(delta_spark, path: str, stmt: str) -> str | None:
    """The error class Spark + Delta raises for ``stmt`` on the table at ``path``."""
    answer = delta_spark.read_one({"kind": "sql", "path": path, "sql": stmt})
    assert not answer["ok"], f"Delta ran {stmt!r}"
    return answer["condition"]


def rows(df) -> list[dict]:
    """A Spark Connect DataFrame's rows as dicts (nested rows as dicts too)."""
    return [r.asDict(recursive=True) for r in df.collect()]
