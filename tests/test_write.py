"""End-to-end tests of filecommit.write through the shared local Connect server.

Every table is read back with delta-rs (an independent Delta reader) and the raw log JSON.
"""

from __future__ import annotations

import json
import os
import threading
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from helpers import (
    adds_in_log,
    delta_rows,
    delta_table,
    error_class,
    file_tree,
    log_actions,
    on_s3,
    rows_frame,
    second_session,
)
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

ESCAPE_VALUES = ["with space", "a/b", "100%", "k=v", "12:30", "Zürich 日本", "", None, "plain"]


def _df(spark, rows, schema="id long, name string, part string"):
    return spark.createDataFrame(rows, schema)


@pytest.mark.container
def test_partitioned_round_trip_with_values_needing_escaping(spark, table_path):
    rows = [(i, f"n{i}", ESCAPE_VALUES[i % len(ESCAPE_VALUES)]) for i in range(60)]
    result = filecommit.write(_df(spark, rows), table_path, partition_by=["part"])

    assert result.version == 0 and result.committed
    got = delta_rows(table_path, ["id", "name", "part"])
    # Spark and Delta store an empty-string partition value as NULL.
    expected = rows_frame([(i, n, p or None) for i, n, p in rows], ["id", "name", "part"])
    pd.testing.assert_frame_equal(got, expected)
    assert result.metrics.rows == 60
    # Partition directories exist on disk under their escaped names, one level deep.
    for add in result.add_files:
        rel = unquote(add.path)
        assert os.path.isfile(os.path.join(table_path, rel)), rel
        assert rel.count("/") == 1, rel
    assert {a.partition_values["part"] for a in result.add_files} == {v or None for v in ESCAPE_VALUES}


@pytest.mark.container
def test_returned_add_files_are_exactly_the_log_adds(spark, table_path):
    rows = [(i, f"n{i}", ["x", "y", None][i % 3]) for i in range(30)]
    result = filecommit.write(_df(spark, rows), table_path, partition_by=["part"])

    log_adds = {a["path"]: a for a in adds_in_log(table_path, result.version)}
    assert set(log_adds) == {a.path for a in result.add_files}
    for add in result.add_files:
        entry = log_adds[add.path]
        assert entry["size"] == add.size
        assert entry["modificationTime"] == add.modification_time
        assert entry["partitionValues"] == add.partition_values
        assert entry["dataChange"] is True and add.data_change
        assert entry["stats"] == add.stats

    # delta-rs' view of the same actions (independent parser of the log).
    actions = pa.table(DeltaTable(table_path).get_add_actions(flatten=True)).to_pandas()
    by_path = {unquote(p): r for p, r in zip(actions["path"], actions.to_dict("records"))}
    assert set(by_path) == {unquote(a.path) for a in result.add_files}
    for add in result.add_files:
        r = by_path[unquote(add.path)]
        assert r["size_bytes"] == add.size
        assert r["num_records"] == json.loads(add.stats)["numRecords"]


def test_stats_match_the_parquet_files(spark, table_path):
    rows = [(i, None if i % 4 == 0 else f"name-{i:03d}", "p") for i in range(40)]
    result = filecommit.write(_df(spark, rows).repartition(3), table_path)
    assert sum(json.loads(a.stats)["numRecords"] for a in result.add_files) == 40
    for add in result.add_files:
        table = pq.read_table(os.path.join(table_path, unquote(add.path)))
        stats = json.loads(add.stats)
        assert stats["numRecords"] == table.num_rows
        ids = table.column("id").to_pylist()
        names = [n for n in table.column("name").to_pylist() if n is not None]
        if ids:
            assert stats["minValues"]["id"] == min(ids) and stats["maxValues"]["id"] == max(ids)
            assert stats["nullCount"]["name"] == table.num_rows - len(names)
        if names:
            assert stats["minValues"]["name"] == min(names) and stats["maxValues"]["name"] == max(names)


def test_unpartitioned_file_names_and_protocol(spark, table_path):
    result = filecommit.write(_df(spark, [(1, "a", "x")]), table_path)
    assert [a.partition_values for a in result.add_files] == [{}]
    name = result.add_files[0].path
    assert name.startswith("part-0000") and name.endswith("-c000.snappy.parquet"), name
    v0 = log_actions(table_path)[0]
    protocol = next(a["protocol"] for a in v0 if "protocol" in a)
    meta = next(a["metaData"] for a in v0 if "metaData" in a)
    assert protocol == {"minReaderVersion": 1, "minWriterVersion": 2}
    assert meta["partitionColumns"] == [] and meta["format"]["provider"] == "parquet"
    assert [f["name"] for f in json.loads(meta["schemaString"])["fields"]] == ["id", "name", "part"]


@pytest.mark.container
@on_s3
def test_append_creates_consecutive_versions(spark, table_path):
    first = [(i, "a", "x") for i in range(5)]
    second = [(i, "b", "y") for i in range(5, 9)]
    r0 = filecommit.write(_df(spark, first), table_path, partition_by=["part"])
    r1 = filecommit.write(_df(spark, second), table_path, mode="append")
    assert (r0.version, r1.version) == (0, 1)
    assert delta_table(table_path).version() == 1
    pd.testing.assert_frame_equal(
        delta_rows(table_path, ["id", "name", "part"]),
        rows_frame(first + second, ["id", "name", "part"]),
    )
    pd.testing.assert_frame_equal(
        delta_rows(table_path, ["id", "name", "part"], version=0),
        rows_frame(first, ["id", "name", "part"]),
    )


def test_append_with_columns_in_other_order_and_case(spark, table_path):
    filecommit.write(_df(spark, [(1, "a", "x")]), table_path, partition_by=["part"])
    swapped = spark.createDataFrame([("y", 2, "b")], "PART string, Id long, NAME string")
    filecommit.write(swapped, table_path)
    got = delta_rows(table_path, ["id", "name", "part"])
    assert got.values.tolist() == [[1, "a", "x"], [2, "b", "y"]]


@pytest.mark.container
def test_overwrite_removes_all_previous_files(spark, table_path):
    r0 = filecommit.write(_df(spark, [(i, "old", "x") for i in range(6)]), table_path, partition_by=["part"])
    r1 = filecommit.write(_df(spark, [(100, "new", "z")]), table_path, mode="overwrite")
    assert r1.version == 1
    assert {r.path for r in r1.remove_files} == {a.path for a in r0.add_files}
    assert all(r.data_change and r.deletion_timestamp > 0 for r in r1.remove_files)
    removed_in_log = {a["remove"]["path"] for a in log_actions(table_path)[1] if "remove" in a}
    assert removed_in_log == {a.path for a in r0.add_files}
    assert delta_rows(table_path, ["id", "name", "part"]).values.tolist() == [[100, "new", "z"]]
    assert {unquote(p) for p in DeltaTable(table_path).file_uris()} == {
        os.path.join(table_path, unquote(a.path)) for a in r1.add_files
    }


def test_overwrite_schema_replaces_schema(spark, table_path):
    filecommit.write(_df(spark, [(1, "a", "x")]), table_path, partition_by=["part"])
    other = spark.createDataFrame([(1.5, "q")], "score double, tag string")
    with pytest.raises(PySparkException, match="Schema mismatch"):
        filecommit.write(other, table_path, mode="overwrite")
    r = filecommit.write(other, table_path, mode="overwrite", options={"overwriteSchema": "true"})
    assert r.version == 1
    assert delta_rows(table_path, ["score", "tag"]).values.tolist() == [[1.5, "q"]]
    assert DeltaTable(table_path).metadata().partition_columns == []


def _versions(path):
    return sorted(log_actions(path))


@pytest.mark.container
@on_s3
def test_error_if_exists_fails_and_commits_nothing(spark, table_path):
    filecommit.write(_df(spark, [(1, "a", "x")]), table_path)
    for mode in ("error", "errorifexists"):
        with pytest.raises(PySparkException, match="already exists") as info:
            filecommit.write(_df(spark, [(2, "b", "y")]), table_path, mode=mode)
        assert table_path in str(info.value)
    assert _versions(table_path) == [0]
    assert delta_rows(table_path, ["id"]).values.tolist() == [[1]]
    # On a new path, mode error creates the table.
    other = table_path + "_new"
    assert filecommit.write(_df(spark, [(3, "c", "z")]), other, mode="error").version == 0


def test_ignore_on_existing_table_does_nothing(spark, table_path):
    filecommit.write(_df(spark, [(1, "a", "x")]), table_path)
    r = filecommit.write(_df(spark, [(2, "b", "y")]), table_path, mode="ignore")
    assert r.committed is False and r.version == 0 and r.add_files == [] and r.metrics.files == 0
    assert _versions(table_path) == [0]
    assert delta_rows(table_path, ["id"]).values.tolist() == [[1]]


@pytest.mark.parametrize(
    "kwargs, schema, message",
    [
        ({"partition_by": ["nope"]}, None, "Partition column 'nope' is not in the data"),
        ({"partition_by": ["id", "name", "part"]}, None, "every column is a partition column"),
        ({"table_properties": {"delta.noSuchThing": "1"}}, None, "Unknown Delta table property 'delta.noSuchThing'"),
        ({"table_properties": {"delta.randomPrefixLength": "x"}}, None, "must be an integer, got 'x'"),
        ({"options": {"overwriteSchema": "true"}}, None, "overwriteSchema=true needs mode overwrite"),
        ({}, "id long, `bad name` string", "invalid character"),
    ],
)
def test_invalid_writes_to_a_new_path_leave_nothing(spark, table_path, kwargs, schema, message):
    df = spark.createDataFrame([(1, "a")], schema) if schema else _df(spark, [(1, "a", "x")])
    with pytest.raises(PySparkException, match=message):
        filecommit.write(df, table_path, **kwargs)
    assert not os.path.exists(os.path.join(table_path, "_delta_log")) or _versions(table_path) == []


@pytest.mark.parametrize(
    "data_schema, row, kwargs, message",
    [
        ("id string, name string, part string", ("1", "a", "x"), {}, "column 'id' has type string in the data but bigint"),
        ("id long, name string, part string, extra int", (1, "a", "x", 5), {}, "column 'extra'"),
        ("id long, name string", (1, "a"), {}, "Partition column 'part' is not in the data"),
        ("id long, name string, part string", (1, "a", "x"), {"partition_by": ["name"]}, "do not match"),
    ],
)
def test_invalid_appends_leave_the_table_unchanged(spark, table_path, data_schema, row, kwargs, message):
    filecommit.write(_df(spark, [(1, "a", "x")]), table_path, partition_by=["part"])
    files_before = sorted(os.listdir(table_path))
    with pytest.raises(PySparkException, match=message):
        filecommit.write(spark.createDataFrame([row], data_schema), table_path, **kwargs)
    assert _versions(table_path) == [0]
    assert delta_rows(table_path, ["id"]).values.tolist() == [[1]]
    if "Partition column" not in message:
        assert sorted(os.listdir(table_path)) == files_before, "rejected before any file was written"


def test_directory_with_foreign_files_is_refused_as_a_new_table(spark, tmp_path):
    """A directory of someone's files that is no table (no ``_delta_log``) does not become one: a
    later VACUUM would delete those files. Refused with Delta's class before anything is written;
    hidden entries (``.``/``_``) do not count."""
    target = tmp_path / "not_a_table"
    target.mkdir()
    (target / "notes.txt").write_text("hello")
    (target / "part-00000-0123abcd-0000-0000-0000-000000000000-c000.snappy.parquet").write_bytes(b"junk")
    before = file_tree(str(target))
    with pytest.raises(PySparkException) as e:
        filecommit.write(_df(spark, [(1, "a", "x")]), str(target))
    assert error_class(e) == "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
    assert file_tree(str(target)) == before
    assert not (target / "_delta_log").exists()
    hidden = tmp_path / "hidden_only"
    hidden.mkdir()
    (hidden / "_SUCCESS").write_text("")
    (hidden / ".keep").write_text("")
    assert filecommit.write(_df(spark, [(1, "a", "x")]), str(hidden)).version == 0


def test_sink_directory_is_refused_as_a_table(spark, tmp_path):
    target = str(tmp_path / "sink")
    filecommit.write_batch(_df(spark, [(1, "a", "x")]), target, batch_id=0)
    with pytest.raises(PySparkException, match="batch-id file sink"):
        filecommit.write(_df(spark, [(1, "a", "x")]), target)
    assert not os.path.exists(os.path.join(target, "_delta_log"))


def test_missing_nullable_column_is_filled_with_nulls(spark, table_path):
    filecommit.write(_df(spark, [(1, "a", "x")]), table_path)
    filecommit.write(spark.createDataFrame([(2, "y")], "id long, part string"), table_path)
    assert delta_rows(table_path, ["id", "name", "part"]).values.tolist() == [[1, "a", "x"], [2, None, "y"]]


def test_random_prefixes(spark, table_path):
    props = {"delta.randomizeFilePrefixes": "true", "delta.randomPrefixLength": "3"}
    rows = [(i, "n", ["x", "y"][i % 2]) for i in range(10)]
    r = filecommit.write(_df(spark, rows), table_path, partition_by=["part"], table_properties=props)
    for a in r.add_files:
        prefix, name = a.path.split("/")
        assert len(prefix) == 3 and prefix.isalnum() and name.startswith("part-")
        assert a.partition_values["part"] in ("x", "y")
    got = delta_rows(table_path, ["id", "name", "part"])
    assert got.equals(rows_frame(rows, ["id", "name", "part"]))


def test_client_side_validation_before_sending(spark, table_path):
    df = _df(spark, [(1, "a", "x")])
    with pytest.raises(ValueError, match="`mode` has to be amongst the following values") as e:
        filecommit.write(df, table_path, mode="upsert")
    assert e.value.getCondition() == "VALUE_NOT_ALLOWED"
    with pytest.raises(ValueError, match="`path` must be a non-empty string") as e:
        filecommit.write(df, "  ")
    assert e.value.getCondition() == "VALUE_NOT_NON_EMPTY_STR"
    with pytest.raises(TypeError, match="`options` should be a mapping of str to str, got list") as e:
        filecommit.write(df, table_path, options=["a"])
    assert e.value.getCondition() == "NOT_EXPECTED_TYPE"
    with pytest.raises(TypeError, match="Spark Connect DataFrame") as e:
        filecommit.write(pd.DataFrame({"a": [1]}), table_path)
    assert e.value.getCondition() == "NOT_EXPECTED_TYPE"
    assert not os.path.exists(table_path)


@pytest.mark.container
@on_s3
def test_two_clients_append_concurrently(spark, table_path):
    filecommit.write(_df(spark, [(0, "seed", "x")]), table_path, partition_by=["part"])
    other = second_session(spark)
    sessions = [spark, other]
    results, errors = {}, []
    barrier = threading.Barrier(2)

    def worker(i):
        try:
            df = _df(sessions[i], [(100 * (i + 1) + k, f"t{i}", "y") for k in range(20)])
            barrier.wait()
            results[i] = filecommit.write(df, table_path)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    other.stop()
    assert not errors, errors
    assert sorted(r.version for r in results.values()) == [1, 2]
    assert _versions(table_path) == [0, 1, 2]
    got = delta_rows(table_path, ["id"])
    assert len(got) == 41
    for r in results.values():
        assert {a["path"] for a in adds_in_log(table_path, r.version)} == {a.path for a in r.add_files}


@pytest.mark.slow
@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_shipped_rows_read_back_as_spark_reads_them(spark, table_path, nested):
    # Rows sent in the plan (createDataFrame) of every flat type, nulls included: the server reads
    # flat ones itself and leaves nested ones to Spark Connect's planner; either way delta-rs must
    # read back exactly what Spark reads from the same DataFrame.
    import datetime as dt
    import decimal

    schema = ("id long, b boolean, i int, s short, y byte, f float, d double, dec decimal(12,3), name string, "
              "bin binary, day date, ts timestamp, ntz timestamp_ntz")
    rows = [
        (1, True, 7, 3, 1, 1.5, float("nan"), decimal.Decimal("123456789.125"), "é ü", b"\x00\xff",
         dt.date(2024, 2, 29), dt.datetime(2024, 3, 1, 12, 30, 15, 123456, tzinfo=dt.timezone.utc),
         dt.datetime(1999, 12, 31, 23, 59, 59)),
        (2, None, None, None, None, None, None, None, None, None, None, None, None),
    ]
    if nested:
        schema += ", tags array<string>, point struct<x: double, y: double>"
        rows = [r + (["a", None], (1.0, 2.0)) for r in rows[:1]] + [rows[1] + (None, None)]
    df = spark.createDataFrame(rows, schema)
    filecommit.write(df, table_path)
    expected = df.toArrow().to_pylist()
    got = DeltaTable(table_path).to_pyarrow_table().to_pylist()
    got.sort(key=lambda r: r["id"])

    def same(a, b):
        return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)

    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        for k, v in e.items():
            gv = g[k]
            if isinstance(v, dt.datetime) and isinstance(gv, dt.datetime):
                gv, v = gv.replace(tzinfo=None) if v.tzinfo is None else gv, v
            assert same(gv, v) or (k == "point" and gv == v), (k, gv, v)


@pytest.mark.slow
def test_variant_columns_are_refused_by_feature_name_before_writing(spark, table_path):
    # A VARIANT column needs the variantType table feature, which filecommit does not write:
    # refused by name, before any file exists (a table without the feature would read back wrong).
    df = spark.sql("""select 1 as id, parse_json('{"a": 1}') as v""")
    with pytest.raises(PySparkException) as e:
        filecommit.write(df, table_path)
    assert e.value.getCondition() == "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", e.value
    assert "variantType" in str(e.value)
    assert not os.path.exists(table_path) or os.listdir(table_path) == []


@pytest.mark.slow
def test_writer_options_reach_the_parquet_files_of_a_small_write(spark, table_path):
    # Options go to Spark's Parquet writer on the driver-side path too: "compression" through
    # ParquetOptions, a Hadoop-level Parquet setting through the job's configuration.
    df = spark.createDataFrame([(i, "same") for i in range(50)], "id long, name string")
    r = filecommit.write(df, table_path, options={"compression": "gzip", "parquet.enable.dictionary": "false"})
    plain = filecommit.write(df, table_path)
    for result, codec, dictionary in ((r, "GZIP", False), (plain, "SNAPPY", True)):
        (add,) = result.add_files
        meta = pq.ParquetFile(os.path.join(table_path, unquote(add.path))).metadata
        col = meta.row_group(0).column(1)
        assert col.compression == codec
        assert any("DICTIONARY" in e for e in col.encodings) == dictionary, col.encodings
