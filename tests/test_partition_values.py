"""Partition values read exactly as the log stores them (protocol "Partition Value Serialization").

A partition value lives in each file's ``partitionValues`` in the log; the directory name is only an
escaped copy of it (Hive escaping: ``%``, ``/``, ``=``, ``:``, ``#``, space and more become ``%XX``).
A reader must take the stored string as it is and never decode ``%`` sequences in it: a stored
``/%20%f`` is ``/%20%f``, not ``/ %f``. The empty string and null are both a null partition value.

Tables written by filecommit and by delta-spark 4.4.0 (``.venv-delta``) over the escaped characters
are read back through the plugin's reader (``format("filecommit")``) and compared with delta-rs and
Spark + Delta.
"""

from __future__ import annotations

import datetime

import pytest
from deltalake import DeltaTable
from helpers import log_actions

import filecommit

pytestmark = pytest.mark.slow

# Every character Hive path escaping escapes that a test can put in a value, %-sequences that decode
# to other characters, non-ASCII, and the empty string next to null.
VALUES = ["/%20%f", "100%", "%25", "%2F", "a/b", "k=v", "sp ace", "c:d", "h#sh", "q?x", "st*r", "ünï✓",
          "plain", "", None]
SCHEMA = "id long, p string, d date"
DAY = datetime.date(2024, 2, 29)


def _value_rows():
    return [(i, v, DAY if i % 2 else None) for i, v in enumerate(VALUES)]


def _expected():
    # "" and null are both a null partition value (protocol "Partition Value Serialization").
    return sorted((i, None if v == "" else v, str(d) if d else None) for i, v, d in _value_rows())


def _norm(rows):
    return sorted((int(r[0]), r[1], None if r[2] is None else str(r[2])) for r in rows)


def _lit(v):
    return "NULL" if v is None else "'" + v + "'"


FIXTURES = {
    "by_delta": [{"sql": "CREATE TABLE {table} (id BIGINT, p STRING, d DATE) USING delta PARTITIONED BY (p, d)"},
                 {"sql": "INSERT INTO {table} VALUES "
                         + ", ".join(f"({i}, {_lit(v)}, {_lit(str(d)) if d else 'NULL'})"
                                     for i, v, d in _value_rows())}],
}


def _stored(path):
    return [a["add"]["partitionValues"].get("p") for acts in log_actions(path).values() for a in acts if "add" in a]


def _check_readers(spark, delta_spark, path):
    ours = spark.read.format("filecommit").load(path)
    assert _norm(ours.select("id", "p", "d").collect()) == _expected()
    theirs = delta_spark.read_one({"path": path, "kind": "table"})
    assert theirs["ok"], theirs
    assert _norm([(r["id"], r["p"], r["d"]) for r in theirs["rows"]]) == _expected()
    df = DeltaTable(path).to_pandas()
    got = [(r.id, None if r.p is None or r.p != r.p else r.p, None if r.d is None or r.d != r.d else r.d)
           for r in df.itertuples()]
    assert _norm(got) == _expected()
    # Partition pruning works on the stored values too.
    for v in ("/%20%f", "%25", "a/b", "ünï✓"):
        hit = ours.where(ours.p == v).select("id").collect()
        assert [r.id for r in hit] == [VALUES.index(v)], v


def test_values_written_by_filecommit_read_as_stored(spark, delta_spark, table_path):
    df = spark.createDataFrame(_value_rows(), SCHEMA)
    assert filecommit.write(df, table_path, partition_by=["p", "d"]).version == 0
    stored = _stored(table_path)
    # The log stores the values themselves; "" is stored as null (as Spark's writer does).
    assert sorted(v for v in stored if v is not None) == sorted(v for v in VALUES if v)
    _check_readers(spark, delta_spark, table_path)


def test_values_written_by_delta_read_as_stored(spark, delta_spark, made):
    path = made["by_delta"]["path"]
    assert sorted(v for v in _stored(path) if v is not None) == sorted(v for v in VALUES if v)
    _check_readers(spark, delta_spark, path)
