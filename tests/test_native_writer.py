"""The native Parquet write path (DuckDB's Parquet writer, snappy; server setting
``spark.filecommit.writer.native``, docs/operators.md "Native Parquet writer") against Spark's writer.

The same input is written twice on one server: through the native writer (an eligible write) and
through Spark's writer (the same write with a Spark writer option, which makes it ineligible). Both
tables must read back identically with delta-rs and with Spark + Delta, and the ``add.stats`` of
each task's file must be equal. A write with a type the native path does not take falls back.
"""

import json
import os
import re

import pandas as pd
import pytest
from helpers import assert_both_readers, delta_rows, log_actions, spark_delta_rows

import filecommit

pytestmark = pytest.mark.slow

COLUMNS = ["id", "s", "d", "dt", "ts", "n", "b", "sh", "bin", "p"]
SETTING = "spark.filecommit.writer.native"


@pytest.fixture(autouse=True)
def native_on(spark):
    """The setting is off by default; this module's session opts in (a session's value wins)."""
    spark.conf.set(SETTING, "auto")
    yield
    spark.conf.unset(SETTING)


def test_off_by_default_writes_spark_snappy_files(spark, tmp_path):
    spark.conf.unset(SETTING)
    path = str(tmp_path / "t")
    filecommit.write(_df(spark), path)
    adds = [a["add"] for a in log_actions(path)[0] if "add" in a]
    assert adds and all(a["path"].endswith(".snappy.parquet") for a in adds), adds


def _df(spark):
    # Two tasks; strings longer than the 32-character statistics prefix; nulls; every eligible kind.
    return spark.range(0, 3000, 1, 2).selectExpr(
        "id", "cast(id % 7 as string) as s", "cast(id / 3 as decimal(12,3)) as d",
        "date_add(date'2020-01-01', cast(id % 50 as int)) as dt", "timestamp_seconds(id * 3600) as ts",
        "case when id % 5 = 0 then null else concat('name-', repeat('x', cast(id % 40 as int))) end as n",
        "id % 2 = 0 as b", "cast(id % 300 as short) as sh",
        "case when id % 11 = 0 then null else cast(concat('bin-', id % 13) as binary) end as bin",
        "cast(id % 3 as int) as p")


def _files(path):
    """(partition values, task number) -> stats of the table's AddFiles at version 0."""
    out = {}
    for a in log_actions(path)[0]:
        if "add" in a:
            add = a["add"]
            task = os.path.basename(add["path"]).split("-")[1]
            out[(json.dumps(add["partitionValues"], sort_keys=True), task)] = (add["path"], json.loads(add["stats"]))
    return out


def _codecs(file):
    import pyarrow.parquet as pq

    md = pq.ParquetFile(file).metadata
    return {md.row_group(g).column(c).compression for g in range(md.num_row_groups) for c in range(md.num_columns)}


@pytest.mark.parametrize(("source", "partition_by"),
                         [("range", None), ("range", ["p"]), ("parquet", None), ("parquet", ["p"])],
                         ids=["unpartitioned", "partitioned", "parquet-input", "parquet-input-partitioned"])
def test_native_and_spark_writers_agree(spark, delta_spark, tmp_path, source, partition_by):
    native, plain = str(tmp_path / "native"), str(tmp_path / "spark")
    df = _df(spark)
    if source == "parquet":
        # A Parquet scan: the native writer reads its column batches (no ColumnarToRow rows).
        src = str(tmp_path / "src")
        df.write.parquet(src)
        df = spark.read.parquet(src)
    filecommit.write(df, native, partition_by=partition_by)
    filecommit.write(df, plain, partition_by=partition_by, options={"compression": "snappy"})
    got, want = _files(native), _files(plain)
    # DuckDB's engine (duckdb_jdbc on the class path, as make native-jars puts it): snappy files.
    assert all(re.search(r"[-.]c000\.snappy\.parquet$", p) for p, _ in got.values()), got
    assert all(_codecs(os.path.join(native, p)) == {"SNAPPY"} for p, _ in got.values()), got
    assert all(re.search(r"[-.]c000\.snappy\.parquet$", p) for p, _ in want.values()), want
    assert sorted(got) == sorted(want)
    for key, (_, stats) in want.items():
        assert got[key][1] == stats, key
    # Each reader against itself (the two readers give decimals and timestamps in different shapes).
    expected = delta_rows(plain, COLUMNS)
    assert len(expected) == 3000
    pd.testing.assert_frame_equal(delta_rows(native, COLUMNS), expected)
    pd.testing.assert_frame_equal(spark_delta_rows(delta_spark, native, COLUMNS),
                                  spark_delta_rows(delta_spark, plain, COLUMNS))


def test_double_column_falls_back_to_spark_writer(spark, delta_spark, tmp_path):
    path = str(tmp_path / "t")
    df = spark.range(0, 100, 1, 2).selectExpr("id", "cast(id as double) * 0.5 as x")
    filecommit.write(df, path)
    adds = [a["add"] for a in log_actions(path)[0] if "add" in a]
    assert adds and all(re.search(r"-c000\.snappy\.parquet$", a["path"]) for a in adds), adds
    assert_both_readers(delta_spark, path, delta_rows(path, ["id", "x"]), ["id", "x"])
