"""delta-spark's ``DeltaTable.convertToDelta(spark, identifier, partitionSchema)`` (Delta Connect's
``convert_to_delta`` relation) and the SQL ``CONVERT TO DELTA parquet.`/path` [PARTITIONED BY (...)]``
against the suite's filecommit server.

Each Parquet directory (written by pyarrow, Hive-partitioned ``col=value/`` directories for the
partitioned ones, with the hidden files a Spark job leaves) is copied twice: our server converts one
copy, Spark + Delta 4.4 runs ``CONVERT TO DELTA`` on the other. The version-0 logs must agree:
``metaData`` schema and partition columns, ``protocol``, the ``add`` actions' paths, partition values
and row counts, ``commitInfo`` operation and parameters; our table is read back by delta-rs and
Spark + Delta. Bad input is refused with Delta's error class (filecommit's for a path outside the
allowed roots, Spark's ``PATH_NOT_FOUND`` for a missing directory, where Delta raises a plain
``FileNotFoundException``) and nothing is committed.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta.tables import DeltaTable
from deltatable_support import refused
from helpers import assert_both_readers, canonical, log_actions
from pyspark.sql.types import IntegerType, StructField, StructType

pytestmark = pytest.mark.slow


def _write(root, rel: str, columns: dict) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table(columns), path)


def _hidden(root) -> None:
    """What a Spark job leaves next to its data files: skipped by a convert."""
    open(os.path.join(root, "_SUCCESS"), "w").close()
    open(os.path.join(root, ".hidden"), "w").close()


def _twin(tmp_path, make) -> tuple[str, str]:
    """Two copies (ours, theirs) of the Parquet directory ``make(root)`` writes."""
    ours = str(tmp_path / f"ours_{uuid.uuid4().hex[:6]}")
    os.makedirs(ours)
    make(ours)
    theirs = str(tmp_path / f"theirs_{uuid.uuid4().hex[:6]}")
    shutil.copytree(ours, theirs)
    return ours, theirs


def _unpartitioned(root) -> None:
    """Two files; the second has a column more (the schemas merge)."""
    _write(root, "part-0.parquet", {"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", None]})
    _write(root, "part-1.parquet", {"id": pa.array([4, 5], pa.int64()), "v": ["d", "e"],
                                    "w": pa.array([1.5, None], pa.float64())})
    _hidden(root)


def _partitioned(root) -> None:
    """Files under ``part=<string>/n=<int>/``: a value with a space, and the default partition."""
    for i, (part, n) in enumerate([("a", 1), ("a", 2), ("b c", 1), ("__HIVE_DEFAULT_PARTITION__", 3)]):
        _write(root, f"part={part}/n={n}/f{i}.parquet", {"id": pa.array([i * 10, i * 10 + 1], pa.int64())})
    _hidden(root)


def _delta_convert(delta_spark, path: str, partitioned_by: str = "") -> dict:
    stmt = f"CONVERT TO DELTA parquet.`{path}`" + (f" PARTITIONED BY ({partitioned_by})" if partitioned_by else "")
    return delta_spark.read_one({"kind": "sql", "sql": stmt})


def _version0(path: str) -> dict:
    """The parts of version 0 both writers must agree on."""
    actions = log_actions(path)
    assert sorted(actions) == [0], f"{path}: versions {sorted(actions)}"
    found = {"adds": {}, "stats": {}}
    for a in actions[0]:
        if "metaData" in a:
            md = a["metaData"]
            found["schema"] = json.loads(md["schemaString"])
            found["partitionColumns"] = md["partitionColumns"]
            found["configuration"] = md.get("configuration", {})
        elif "protocol" in a:
            found["protocol"] = a["protocol"]
        elif "add" in a:
            add = a["add"]
            assert add["dataChange"] is True
            assert add["size"] == os.path.getsize(os.path.join(path, _decoded(add["path"])))
            found["adds"][add["path"]] = (add["partitionValues"], json.loads(add["stats"])["numRecords"])
            found["stats"][add["path"]] = json.loads(add["stats"])
        elif "commitInfo" in a:
            info = a["commitInfo"]
            found["operation"] = info["operation"]
            # Delta writes numbers and booleans as JSON values, filecommit every parameter as a string
            found["parameters"] = {k: json.dumps(v) if isinstance(v, bool) else str(v)
                                   for k, v in info["operationParameters"].items()}
    return found


def _decoded(log_path: str) -> str:
    from urllib.parse import unquote

    return unquote(log_path)


def test_convert_unpartitioned_directory_matches_delta(spark, delta_spark, tmp_path):
    ours, theirs = _twin(tmp_path, _unpartitioned)
    table = DeltaTable.convertToDelta(spark, f"parquet.`{ours}`")
    assert table.toDF().count() == 5
    assert _delta_convert(delta_spark, theirs)["ok"]
    got, expected = _version0(ours), _version0(theirs)
    got_stats, expected_stats = got.pop("stats"), expected.pop("stats")
    assert got == expected
    assert [f["name"] for f in got["schema"]["fields"]] == ["id", "v", "w"]
    # footer statistics: Delta's, but no entry for the column part-0 lacks (Delta: all nulls)
    assert got_stats["part-1.parquet"] == expected_stats["part-1.parquet"]
    assert expected_stats["part-0.parquet"]["nullCount"].pop("w") == 3
    assert got_stats["part-0.parquet"] == expected_stats["part-0.parquet"]
    assert got["parameters"] == {"numFiles": "2", "partitionedBy": "[]", "collectStats": "true",
                                 "sourceFormat": "parquet"}
    columns = ["id", "v", "w"]
    expected_rows = canonical(pq.read_table(ours + "/part-0.parquet").to_pandas().merge(
        pq.read_table(ours + "/part-1.parquet").to_pandas(), how="outer"), columns)
    assert_both_readers(delta_spark, ours, expected_rows, columns)


def test_convert_partitioned_directory_matches_delta(spark, delta_spark, tmp_path):
    ours, theirs = _twin(tmp_path, _partitioned)
    DeltaTable.convertToDelta(spark, f"parquet.`{ours}`", "part STRING, n INT")
    assert _delta_convert(delta_spark, theirs, "part STRING, n INT")["ok"]
    got, expected = _version0(ours), _version0(theirs)
    assert got == expected
    assert got["partitionColumns"] == ["part", "n"]
    assert "part=b%20c/n=1/f2.parquet" in got["adds"]
    assert got["adds"]["part=__HIVE_DEFAULT_PARTITION__/n=3/f3.parquet"][0] == {"part": None, "n": "3"}
    columns = ["id", "part", "n"]
    rows = [(i * 10 + k, part, n) for i, (part, n) in enumerate([("a", 1), ("a", 2), ("b c", 1), (None, 3)])
            for k in (0, 1)]
    import pandas as pd

    assert_both_readers(delta_spark, ours, canonical(pd.DataFrame(rows, columns=columns, dtype=object), columns),
                        columns)


def test_sql_convert_through_our_server_then_convert_again_is_a_no_op(spark, tmp_path):
    ours, _ = _twin(tmp_path, _partitioned)
    assert spark.sql(f"CONVERT TO DELTA parquet.`{ours}` PARTITIONED BY (part STRING, n INT)").collect() == []
    first = _version0(ours)
    assert first["operation"] == "CONVERT" and first["partitionColumns"] == ["part", "n"]
    assert len(first["adds"]) == 4
    # Delta's convert of a Delta table commits nothing; a struct partition schema is accepted too
    schema = StructType([StructField("part", IntegerType()), StructField("n", IntegerType())])
    table = DeltaTable.convertToDelta(spark, f"parquet.`{ours}`", schema)
    assert table.toDF().count() == 8
    assert DeltaTable.convertToDelta(spark, f"delta.`{ours}`").toDF().count() == 8
    assert _version0(ours) == first


@pytest.mark.parametrize("case", ["missing_partition_schema", "wrong_partition_column", "bad_partition_value"])
def test_partition_schema_that_does_not_match_the_directories(spark, delta_spark, tmp_path, case):
    ours, theirs = _twin(tmp_path, _partitioned)
    given = {"missing_partition_schema": "", "wrong_partition_column": "part STRING, m INT",
             "bad_partition_value": "part INT, n INT"}[case]
    got = refused(lambda: DeltaTable.convertToDelta(spark, f"parquet.`{ours}`", given or None))
    answer = _delta_convert(delta_spark, theirs, given)
    assert not answer["ok"]
    assert got == answer["condition"] == {
        "missing_partition_schema": "DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME",
        "wrong_partition_column": "DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME",
        "bad_partition_value": "DELTA_FAILED_CAST_PARTITION_VALUE"}[case]
    assert not os.path.exists(os.path.join(ours, "_delta_log"))


def test_files_of_incompatible_schemas(spark, delta_spark, tmp_path):
    def make(root):
        _write(root, "a.parquet", {"id": pa.array([1], pa.int64())})
        _write(root, "b.parquet", {"id": ["x"]})

    ours, theirs = _twin(tmp_path, make)
    got = refused(lambda: DeltaTable.convertToDelta(spark, f"parquet.`{ours}`"))
    answer = _delta_convert(delta_spark, theirs)
    assert not answer["ok"]
    assert got == answer["condition"] == "DELTA_FAILED_TO_MERGE_FIELDS"
    assert not os.path.exists(os.path.join(ours, "_delta_log"))


def test_refusals(spark, delta_spark, tmp_path):
    ours, theirs = _twin(tmp_path, _unpartitioned)
    empty, empty_theirs = tmp_path / "empty", tmp_path / "empty_theirs"
    empty.mkdir()
    empty_theirs.mkdir()
    cases = {
        f"`{ours}`": "DELTA_MISSING_PROVIDER_FOR_CONVERT",
        f"json.`{ours}`": "DELTA_CONVERT_NON_PARQUET_TABLE",
        f"parquet.`{empty}`": "DELTA_EMPTY_DIRECTORY",
    }
    for identifier, expected in cases.items():
        assert refused(lambda i=identifier: DeltaTable.convertToDelta(spark, i)) == expected, identifier
        stmt = f"CONVERT TO DELTA {identifier.replace(ours, theirs).replace(str(empty), str(empty_theirs))}"
        assert delta_spark.read_one({"kind": "sql", "sql": stmt})["condition"] == expected, identifier
    missing = str(tmp_path / "missing")
    assert refused(lambda: DeltaTable.convertToDelta(spark, f"parquet.`{missing}`")) == "PATH_NOT_FOUND"
    assert not _delta_convert(delta_spark, missing)["ok"]
    outside = f"/filecommit-not-allowed-{uuid.uuid4().hex[:8]}/t"
    assert refused(lambda: DeltaTable.convertToDelta(spark, f"parquet.`{outside}`")) == "FILECOMMIT_PATH_NOT_ALLOWED"
    assert not os.path.exists(os.path.join(ours, "_delta_log"))
    assert not os.path.exists(os.path.join(str(empty), "_delta_log"))
