"""The native Parquet write path (DuckDB's Parquet writer, snappy; server setting
``spark.filecommit.writer.native``, docs/writing.md "Native Parquet writer") against Spark's writer.

The same input is written twice on one server: through the native writer (an eligible write) and
through Spark's writer (the same write with a Spark writer option, which makes it ineligible). Both
tables must read back identically with delta-rs and with Spark + Delta, and the ``add.stats`` of
each task's file must be equal. A write with a type the native path does not take (nested) falls
back. The same Arrow table written by delta-rs, by Spark + Delta and through the native writer must
read back the same with both readers, with statistics that equal delta-rs's or, where delta-rs's
rules differ from Delta's, Delta's own (``SAME_AS_BOTH``, ``NO_BOUNDS`` and the string rule).
"""

import json
import os
import re

import pandas as pd
import pytest
from helpers import assert_both_readers, delta_rows, log_actions, spark_delta_rows

import filecommit

pytestmark = pytest.mark.slow

COLUMNS = ["id", "s", "d", "dt", "ts", "n", "b", "sh", "bin", "x", "f", "p"]
SETTING = "spark.filecommit.writer.native"


@pytest.fixture(autouse=True)
def native_on(spark):
    """The setting is auto by default; this module's session sets it too (a session's value wins)."""
    spark.conf.set(SETTING, "auto")
    yield
    spark.conf.unset(SETTING)


def test_native_by_default_and_off_writes_spark_snappy_files(spark, tmp_path):
    spark.conf.unset(SETTING)
    filecommit.write(_every_kind_df(spark), str(tmp_path / "default"))
    assert _created_by(str(tmp_path / "default")) == {"DuckDB"}
    spark.conf.set(SETTING, "off")
    path = str(tmp_path / "t")
    filecommit.write(_every_kind_df(spark), path)
    adds = [a["add"] for a in log_actions(path)[0] if "add" in a]
    assert adds and all(a["path"].endswith(".snappy.parquet") for a in adds), adds
    assert _created_by(path) == {"parquet-mr"}


def _every_kind_df(spark):
    # Two tasks; strings longer than the 32-character statistics prefix; nulls; every eligible kind.
    return spark.range(0, 3000, 1, 2).selectExpr(
        "id", "cast(id % 7 as string) as s", "cast(id / 3 as decimal(12,3)) as d",
        "date_add(date'2020-01-01', cast(id % 50 as int)) as dt", "timestamp_seconds(id * 3600) as ts",
        "case when id % 5 = 0 then null else concat('name-', repeat('x', cast(id % 40 as int))) end as n",
        "id % 2 = 0 as b", "cast(id % 300 as short) as sh",
        "case when id % 11 = 0 then null else cast(concat('bin-', id % 13) as binary) end as bin",
        "cast(id as double) / 7 as x",
        "case when id = 2999 then float('NaN') when id % 4 = 0 then null else cast(id % 9 as float) - 4 end as f",
        "cast(id % 3 as int) as p")


def _add_stats(path):
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
    df = _every_kind_df(spark)
    if source == "parquet":
        # A Parquet scan: the native writer reads its column batches (no ColumnarToRow rows).
        src = str(tmp_path / "src")
        df.write.parquet(src)
        df = spark.read.parquet(src)
    filecommit.write(df, native, partition_by=partition_by)
    filecommit.write(df, plain, partition_by=partition_by, options={"compression": "snappy"})
    got, want = _add_stats(native), _add_stats(plain)
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


@pytest.mark.parametrize("expr", ["named_struct('a', id, 'b', cast(id as string))", "array(id, id + 1)",
                                  "map(cast(id as string), id)"], ids=["struct", "array", "map"])
def test_nested_column_falls_back_to_spark_writer(spark, delta_spark, tmp_path, expr):
    path = str(tmp_path / "t")
    df = spark.range(0, 100, 1, 2).selectExpr("id", "cast(id as double) * 0.5 as x", f"{expr} as n")
    filecommit.write(df, path)
    assert _created_by(path) == {"parquet-mr"}
    adds = [a["add"] for a in log_actions(path)[0] if "add" in a]
    assert adds and all(re.search(r"-c000\.snappy\.parquet$", a["path"]) for a in adds), adds
    assert_both_readers(delta_spark, path, delta_rows(path, ["id", "x"]), ["id", "x"])


# --- The native writer against delta-rs's writer (and Delta's own rules) on the same Arrow table ---

def _arrow_table():
    """Twelve rows of every kind: integers of each width, floats with NaN, +-0.0, infinities and nulls,
    decimals, strings (non-ASCII, empty, longer than Delta's 32-character statistics prefix), binary,
    booleans, dates, timestamps (UTC and without time zone); ``p`` is the partition column."""
    import datetime
    import decimal

    import pyarrow as pa

    n = 12
    nan, inf = float("nan"), float("inf")
    f64 = [1.5, nan, -0.0, 0.0, None, -2.25, 3.0, inf, 7.0, None, -inf, 0.5]
    f32 = [0.0, -0.0, 1.25, None, -3.5, 2.0, nan, 4.0, None, 0.5, -1.0, 8.0]
    s = ["a", "", "é🙂x", None, "z" * 40, "Ω" * 33, "b", "ünï", None, "a" * 31 + "é", "mid", "x"]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "i8": pa.array([(-128, 127, 0, None)[i % 4] for i in range(n)], pa.int8()),
        "i16": pa.array([(-32768, 32767, 5, None)[i % 4] for i in range(n)], pa.int16()),
        "i32": pa.array([None if i == 3 else (-2**31 if i == 0 else 2**31 - 1 if i == 1 else i) for i in range(n)],
                        pa.int32()),
        "i64": pa.array([None if i == 5 else (-2**63 if i == 0 else 2**63 - 1 if i == 1 else i * 10)
                         for i in range(n)], pa.int64()),
        "f64": pa.array(f64, pa.float64()),
        "f32": pa.array(f32, pa.float32()),
        "f64b": pa.array([None if i == 3 else (-0.0, 0.0, 2.5, -1.25)[i % 4] * (i + 1) for i in range(n)],
                         pa.float64()),
        "dec": pa.array([None if i == 4 else decimal.Decimal(i * 125 - 500).scaleb(-2) for i in range(n)],
                        pa.decimal128(10, 2)),
        "dec38": pa.array([None if i == 5 else decimal.Decimal(10**31 * (i - 6) + i).scaleb(-6) for i in range(n)],
                          pa.decimal128(38, 6)),
        "s": pa.array(s, pa.string()),
        "s2": pa.array([None if i == 1 else ("é", "", "ab🙂", "Zz", "ä")[i % 5] for i in range(n)], pa.string()),
        "bin": pa.array([None if i == 2 else bytes([i, 255 - i]) * (i % 3) for i in range(n)], pa.binary()),
        "b": pa.array([None if i == 6 else i % 2 == 0 for i in range(n)], pa.bool_()),
        "d": pa.array([None if i == 7 else datetime.date(1969, 12, 30) + datetime.timedelta(days=i * 400)
                       for i in range(n)], pa.date32()),
        "ts": pa.array([None if i == 8 else datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
                        + datetime.timedelta(days=i, microseconds=i * 1001) for i in range(n)],
                       pa.timestamp("us", tz="UTC")),
        "ntz": pa.array([None if i == 9 else datetime.datetime(1999, 12, 31, 23, 59)
                         + datetime.timedelta(hours=i, microseconds=i * 7) for i in range(n)], pa.timestamp("us")),
        "p": pa.array([("x", "y", "ä b")[i % 3] for i in range(n)], pa.string()),
    })


def _created_by(path):
    """The ``created_by`` of each data file of the table's version 0 (DuckDB's, parquet-mr's, ...)."""
    from urllib.parse import unquote

    import pyarrow.parquet as pq

    return {pq.ParquetFile(os.path.join(path, unquote(a["add"]["path"]))).metadata.created_by.split(" ")[0]
            for a in log_actions(path)[0] if "add" in a}


def _stats(path):
    """numRecords and, per column, min of minValues, max of maxValues and sum of nullCount over the
    table's files (None when some file has no value: no bound for the table). Floats written as
    strings (Delta writes ``"NaN"``) are read as floats; NaN is the greatest value (Spark's order)
    and is given back as ``"NaN"``."""
    import math

    def num(v):
        return float(v) if isinstance(v, str) and v in ("NaN", "Infinity", "-Infinity") else v

    def key(v):
        return (1, 0) if isinstance(v, float) and math.isnan(v) else (0, v)

    files = [json.loads(a["add"]["stats"]) for a in log_actions(path)[0] if "add" in a]
    out = {"numRecords": sum(f["numRecords"] for f in files)}
    for kind in ("minValues", "maxValues", "nullCount"):
        for c in sorted({c for f in files for c in f.get(kind, {})}):
            vals = [num(f.get(kind, {}).get(c)) for f in files]
            v = None if any(v is None for v in vals) else sum(vals) if kind == "nullCount" \
                else min(vals, key=key) if kind == "minValues" else max(vals, key=key)
            out.setdefault(kind, {})[c] = "NaN" if isinstance(v, float) and math.isnan(v) else v
    return out


def _exact(rows):
    """Rows (dicts) by id with floats as exact bits (-0.0 and 0.0 differ, every NaN the same)."""
    import struct

    def norm(v):
        if isinstance(v, float):
            return "NaN" if v != v else struct.pack(">d", v).hex()
        if isinstance(v, (bytes, bytearray)):
            return bytes(v).hex()
        return v if v is None or isinstance(v, (int, str, bool)) else str(v)
    return sorted(({k: norm(v) for k, v in r.items()} for r in rows), key=lambda r: r["id"])


@pytest.mark.parametrize("partition_by", [None, ["p"]], ids=["unpartitioned", "partitioned"])
def test_native_writer_matches_delta_rs(spark, delta_spark, tmp_path, partition_by):
    import pyarrow.parquet as pq
    from deltalake import write_deltalake
    from helpers import delta_table

    table = _arrow_table()
    src, rs, fc, dl = (str(tmp_path / n) for n in ("src.parquet", "delta_rs", "native", "delta"))
    pq.write_table(table, src)
    write_deltalake(rs, table, partition_by=partition_by)
    # A Spark job over the Parquet file (rows sent with the command would be written by the driver).
    filecommit.write(spark.read.parquet(src), fc, partition_by=partition_by)
    part = f"PARTITIONED BY ({', '.join(partition_by)})" if partition_by else ""
    # Delta's own rules: Spark + Delta writes the same file's rows.
    ctas = f"CREATE TABLE {{table}} USING delta {part} AS SELECT * FROM parquet.`{src}`"
    made = delta_spark.make([{"name": "ref", "path": dl, "steps": [{"sql": ctas}]}])()
    assert made["ref"]["ok"], made
    # Both tables were written by their engines (floats, NaN included, go through DuckDB's writer).
    assert _created_by(fc) == {"DuckDB"} and _created_by(rs) == {"delta-rs"}, (_created_by(fc), _created_by(rs))
    cols = table.column_names
    # Contents, each reader on both tables: floats compared by their bits (-0.0 is not 0.0).
    got = _exact(delta_table(fc).to_pyarrow_table().select(cols).to_pylist())
    assert got == _exact(delta_table(rs).to_pyarrow_table().select(cols).to_pylist())
    assert got == _exact(table.to_pylist())
    reads = delta_spark.read([{"path": p, "kind": "table"} for p in (fc, rs, dl)])
    assert all(r["ok"] for r in reads), reads
    assert _exact(reads[0]["rows"]) == _exact(reads[1]["rows"]) == _exact(reads[2]["rows"])
    # Statistics: numRecords, nullCount of every column, min/max where filecommit writes them.
    mine, rs_stats, delta_stats = _stats(fc), _stats(rs), _stats(dl)
    assert mine["numRecords"] == rs_stats["numRecords"] == delta_stats["numRecords"] == 12
    data_cols = [c for c in cols if c not in (partition_by or [])]
    for c in data_cols:
        # delta-rs writes no null count for binary columns: Delta's is the reference there.
        ref = delta_stats if c == "bin" else rs_stats
        assert mine["nullCount"][c] == ref["nullCount"][c] == delta_stats["nullCount"][c], c
    for c in data_cols:
        lo, hi = mine.get("minValues", {}).get(c), mine.get("maxValues", {}).get(c)
        if c in SAME_AS_BOTH:
            want = [(rs_stats[k].get(c), delta_stats[k].get(c)) for k in ("minValues", "maxValues")]
            assert [(lo, lo), (hi, hi)] == want, (c, lo, hi, want)
        elif c in NO_BOUNDS:
            assert (lo, hi) == (None, None), (c, lo, hi, delta_stats["minValues"].get(c))
        else:
            assert c in ("s", "p"), c
            # Delta and delta-rs both truncate long strings to 32 characters and differ in the max
            # (Delta appends U+10FFFF, delta-rs increments the last character): filecommit writes
            # the min prefix as both do and no max when the longest string is longer than 32.
            assert lo == rs_stats["minValues"][c] == delta_stats["minValues"][c], c
            assert hi is None or hi == delta_stats["maxValues"][c], c


# Per column: which reference filecommit's bounds equal (data skipping safe in Spark's order).
SAME_AS_BOTH = {"id", "i8", "i16", "i32", "i64", "d", "s2", "f64b"}
# No min/max from filecommit (either writer): floats with NaN (Delta's max is "NaN", delta-rs leaves
# NaN out, which would skip NaN rows that Spark's order puts above all), infinities, and the kinds
# whose bounds filecommit does not collect (decimal, binary, boolean, timestamps: nullCount only).
NO_BOUNDS = {"f64", "f32", "dec", "dec38", "bin", "b", "ts", "ntz"}


def test_native_float_file_with_nan_in_a_later_row_group_has_no_bounds(spark, delta_spark, tmp_path):
    """DuckDB's row groups hold 122,880 rows: NaN only in the second one must still leave the
    file without min/max, or Delta's data skipping drops the NaN row of ``x > 1e9``."""
    import pyarrow.parquet as pq

    path = str(tmp_path / "t")
    df = spark.range(0, 123000, 1, 1).selectExpr(
        "id", "case when id = 122990 then double('NaN') else cast(id as double) end as x")
    filecommit.write(df, path)
    adds = [a["add"] for a in log_actions(path)[0] if "add" in a]
    assert len(adds) == 1 and _created_by(path) == {"DuckDB"}
    assert pq.ParquetFile(os.path.join(path, adds[0]["path"])).metadata.num_row_groups == 2
    stats = json.loads(adds[0]["stats"])
    assert "x" not in stats["minValues"] and "x" not in stats["maxValues"], stats
    got = delta_spark.read_one({"kind": "sql", "path": path, "sql": "SELECT count(*) AS n FROM {table} WHERE x > 1e9"})
    assert got["ok"] and got["rows"] == [{"n": 1}], got


@pytest.mark.parametrize("partition_by", [None, ["p"]], ids=["unpartitioned", "partitioned"])
def test_failed_native_write_leaves_no_files(spark, tmp_path, partition_by):
    """A task that fails after another task's files were written: the write fails, nothing is
    committed, and no data file nor native writer directory is left in the table."""
    from pyspark.errors import PySparkException

    path = str(tmp_path / "t")
    df = spark.range(0, 4000, 1, 2).selectExpr("id", "cast(id as double) / 3 as x", "cast(id % 3 as int) as p")
    filecommit.write(df, path, partition_by=partition_by)
    before = {os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs}
    bad = spark.range(0, 4000, 1, 2).selectExpr(
        "id", "if(id = 3999, cast(raise_error('boom') as double), id / 3.0d) as x", "cast(id % 3 as int) as p")
    with pytest.raises(PySparkException):
        filecommit.write(bad, path, partition_by=partition_by, mode="append")
    after = {os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs}
    assert after == before, sorted(after - before)
    assert not any("_filecommit_native" in d for d, _, _ in os.walk(path))
    assert sorted(log_actions(path)) == [0]
    assert _created_by(path) == {"DuckDB"}
