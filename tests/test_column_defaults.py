"""Column defaults (protocol "Default Columns", writer feature ``allowColumnDefaults``).

A table made by delta-spark 4.4.0 with ``DEFAULT`` columns (their SQL text in the column metadata
key ``CURRENT_DEFAULT``): filecommit's appends, overwrites and MERGE inserts from input lacking those
columns write the defaults; Spark + Delta reads exactly those rows and then writes on with its own
writer.
"""

from __future__ import annotations

import os
import shutil

import pytest
from helpers import shared_dir

import filecommit

pytestmark = pytest.mark.slow


FIXTURES = {
    "defaults": [
        {"sql": "CREATE TABLE {table} (id BIGINT, n INT DEFAULT 42, s STRING DEFAULT 'dflt', part STRING) "
                "USING delta PARTITIONED BY (part) "
                "TBLPROPERTIES ('delta.feature.allowColumnDefaults'='supported')"},
        {"sql": "INSERT INTO {table} (id, part) VALUES (1, 'a')"},
    ],
}


def _copy_defaults(made, tmp_path):
    path = os.path.join(shared_dir(tmp_path), "t")
    shutil.copytree(made["defaults"]["path"], path)
    return path


def _spark_delta_rows(delta_spark, path):
    r = delta_spark.read_one({"path": path, "kind": "table"})
    assert r["ok"], r
    return sorted((x["id"], x["n"], x["s"], x["part"]) for x in r["rows"])


def test_append_overwrite_merge_fill_defaults(spark, delta_spark, made, tmp_path):
    path = _copy_defaults(made, tmp_path)
    detail = delta_spark.read_one({"path": path, "kind": "detail"})
    assert "allowColumnDefaults" in detail["tableFeatures"]
    assert made["defaults"]["rows"][0]["n"] == 42  # Delta's own insert used the default

    filecommit.write(spark.createDataFrame([(2, "a"), (3, "b")], "id long, part string"), path)
    filecommit.write(spark.createDataFrame([(4, 7, "b")], "id long, n int, part string"), path)
    assert _spark_delta_rows(delta_spark, path) == [(1, 42, "dflt", "a"), (2, 42, "dflt", "a"), (3, 42, "dflt", "b"),
                                                    (4, 7, "dflt", "b")]

    filecommit.write(spark.createDataFrame([(5, "x", "b")], "id long, s string, part string"), path,
                     mode="overwrite", options={"replaceWhere": "part = 'b'"})
    src = spark.createDataFrame([(1, "a"), (6, "c")], "id long, part string")
    filecommit.merge(src, path, "t.id = s.id", target_alias="t", source_alias="s") \
        .when_not_matched_insert({"id": "s.id", "part": "s.part"}).execute()
    filecommit.merge(spark.createDataFrame([(7, "c")], "id long, part string"), path, "t.id = s.id",
                     target_alias="t", source_alias="s").when_not_matched_insert_all().execute()
    expected = [(1, 42, "dflt", "a"), (2, 42, "dflt", "a"), (5, 42, "x", "b"), (6, 42, "dflt", "c"),
                (7, 42, "dflt", "c")]
    assert _spark_delta_rows(delta_spark, path) == expected

    # Delta's writer goes on, its defaults intact.
    ins = delta_spark.read_one({"path": path, "kind": "sql", "sql": "INSERT INTO {table} (id, part) VALUES (8, 'd')"})
    assert ins["ok"], ins
    assert _spark_delta_rows(delta_spark, path) == [*expected, (8, 42, "dflt", "d")]
