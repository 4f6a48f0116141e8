"""Spark + Delta (delta-spark, from Maven Central) reads the tables we write: partitioned and
unpartitioned tables, their change data feed, versions and history.

The reader is independent of our code and of our Spark: the session's ``delta_spark`` worker
(``tests/delta_tables.py`` in ``.venv-delta``, ``make delta-reader``: Spark 4.2.0 + delta-spark
4.4.0, because no delta-spark build exists for our server's Spark 4.3.0). The module writes every
table first and then asks the reader once.
"""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import result_frame, rows_frame

import filecommit

pytestmark = pytest.mark.slow

CDF = {"delta.enableChangeDataFeed": "true"}
COLS = ["id", "name", "part"]
SCHEMA = "id long, name string, part string"
CHANGE_SCHEMA = SCHEMA + ", _change_type string"
BASE = [(1, "a", "x"), (2, "b", "y"), (3, "c", "a/b")]
# Change records and table rows in one input; partition values that need escaping in _change_data/.
BATCH = [
    (1, "a", "x", "update_preimage"),
    (1, "A", "x", "update_postimage"),
    (2, "b", "y", "delete"),
    (4, "d", "a/b", "insert"),
    (5, "e", "with space", "insert"),
    (1, "A", "x", None),
    (4, "d", "a/b", None),
    (5, "e", "with space", None),
]
# Appended to the plain table: values needing escaping, a null partition value.
APPEND_ROWS = [(4, "d", "a/b"), (5, "e", "with space"), (6, "f", None), (7, "g", "50%=:ü")]


def _reader_frame(result, columns):
    assert result["ok"], result.get("detail") or result.get("error")
    return result_frame(result, columns)


@pytest.fixture(scope="module")
def tables(spark, delta_spark, tmp_path_factory):
    """Writes the tables through filecommit, then reads them all with Spark + Delta."""
    root = tmp_path_factory.mktemp("delta_spark")
    t = {k: str(root / k) for k in ("cdf_part", "cdf_flat", "plain")}

    # 1. Partitioned, CDF on at creation; a change batch overwriting the touched partitions.
    filecommit.write(spark.createDataFrame(BASE, SCHEMA), t["cdf_part"], partition_by=["part"],
                     table_properties=CDF)
    r = filecommit.write(spark.createDataFrame(BATCH, CHANGE_SCHEMA), t["cdf_part"], mode="overwrite",
                         change_data=True,
                         options={"replaceWhere": "part IN ('x', 'y', 'a/b', 'with space')"})
    assert r.version == 1 and r.cdc_files

    # 2. Unpartitioned, CDF enabled later by a metadata-only commit, then an appended change batch.
    filecommit.write(spark.createDataFrame(BASE, SCHEMA), t["cdf_flat"])
    assert filecommit.set_table_properties(spark, t["cdf_flat"], CDF).version == 1
    r = filecommit.write(spark.createDataFrame(BATCH, CHANGE_SCHEMA), t["cdf_flat"], change_data=True)
    assert r.version == 2

    # 3. Plain partitioned table: append with values needing escaping and a null, then an overwrite.
    filecommit.write(spark.createDataFrame(BASE, SCHEMA), t["plain"], partition_by=["part"])
    filecommit.write(spark.createDataFrame(APPEND_ROWS, SCHEMA), t["plain"], partition_by=["part"])
    filecommit.write(spark.createDataFrame([(9, "z", "x")], SCHEMA), t["plain"], mode="overwrite")

    reads = [
        {"path": t["cdf_part"], "kind": "table"},
        {"path": t["cdf_part"], "kind": "cdf", "startingVersion": 1},
        {"path": t["cdf_flat"], "kind": "table"},
        {"path": t["cdf_flat"], "kind": "cdf", "startingVersion": 2},
        {"path": t["plain"], "kind": "table", "version": 1},
        {"path": t["plain"], "kind": "table"},
        {"path": t["plain"], "kind": "history"},
    ]
    results = delta_spark.read(reads)
    return dict(zip(["part_table", "part_cdf", "flat_table", "flat_cdf", "plain_v1", "plain_latest",
                     "plain_history"], results))


def _expected_changes(version):
    rows = [r + (version,) for r in BATCH if r[3] is not None]
    return rows_frame(rows, COLS + ["_change_type", "_commit_version"])


def test_change_feed_of_a_partitioned_table_with_escaped_values(tables):
    got = _reader_frame(tables["part_cdf"], COLS + ["_change_type", "_commit_version"])
    pd.testing.assert_frame_equal(got, _expected_changes(1))
    assert "_commit_timestamp" in tables["part_cdf"]["columns"]


def test_table_read_after_replace_where_with_change_data(tables):
    expected = rows_frame([r[:3] for r in BATCH if r[3] is None], COLS)
    pd.testing.assert_frame_equal(_reader_frame(tables["part_table"], COLS), expected)
    assert "_change_type" not in tables["part_table"]["columns"]
    assert tables["part_table"]["version"] == 1


def test_change_feed_of_an_unpartitioned_table_enabled_later(tables):
    got = _reader_frame(tables["flat_cdf"], COLS + ["_change_type", "_commit_version"])
    pd.testing.assert_frame_equal(got, _expected_changes(2))
    expected = rows_frame(BASE + [r[:3] for r in BATCH if r[3] is None], COLS)
    pd.testing.assert_frame_equal(_reader_frame(tables["flat_table"], COLS), expected)
    assert sorted(tables["flat_table"]["columns"]) == sorted(COLS)


def test_plain_table_versions_and_overwrite(tables):
    pd.testing.assert_frame_equal(_reader_frame(tables["plain_v1"], COLS), rows_frame(BASE + APPEND_ROWS, COLS))
    pd.testing.assert_frame_equal(_reader_frame(tables["plain_latest"], COLS), rows_frame([(9, "z", "x")], COLS))
    assert tables["plain_latest"]["version"] == 2


def test_history_shows_our_commits(tables):
    hist = {h["version"]: h for h in tables["plain_history"]["rows"]}
    assert sorted(hist) == [0, 1, 2]
    assert hist[2]["operationParameters"]["mode"] == "Overwrite"
    assert int(hist[1]["operationMetrics"]["numOutputRows"]) == len(APPEND_ROWS)
