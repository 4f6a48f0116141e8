"""Every client command by table name (``table=``) instead of a path: the server resolves the name
through its catalog (``spark_catalog``) to the table's location, as for ``filecommit.write``.
Results are read back by delta-rs and Spark + Delta at the location, which know nothing of names.
"""

from __future__ import annotations

import os
import uuid

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from helpers import delta_rows, error_class, result_frame, rows_frame
from pyspark.errors import PySparkValueError
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

import filecommit

pytestmark = pytest.mark.slow

COLUMNS = ["id", "v"]


def _rows(*rows):
    return rows_frame(rows, COLUMNS)


def test_every_command_by_table_name(spark, delta_spark, table_path):
    name = f"default.names_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta LOCATION '{table_path}' "
              "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')").collect()
    df = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id long, v string")
    assert filecommit.write(df, table=name).version == 1

    r = filecommit.set_table_properties(spark, properties={"delta.appendOnly": "false"}, table=name)
    assert r.version == 2 and DeltaTable(table_path).metadata().configuration["delta.appendOnly"] == "false"

    r = filecommit.delete(spark, condition="id = 1", table=name)
    assert r.version == 3 and r.metrics.num_deleted_rows == 1
    r = filecommit.update(spark, set={"v": "'B'"}, condition="id = 2", table=name)
    assert r.version == 4 and r.metrics.num_updated_rows == 1
    source = spark.createDataFrame([(3, "C"), (4, "d")], "id long, v string")
    r = (filecommit.merge(source, on="target.id = source.id", table=name)
         .when_matched_update_all().when_not_matched_insert_all().execute())
    assert r.version == 5 and r.metrics.num_inserted_rows == 1 and r.metrics.num_updated_rows == 1
    pd.testing.assert_frame_equal(delta_rows(table_path, COLUMNS), _rows((2, "B"), (3, "C"), (4, "d")))

    r = filecommit.optimize(spark, table=name)
    assert r.version == 6 and r.table_path.endswith(table_path)

    commits = filecommit.history(spark, table=name)
    assert [c.version for c in commits] == [6, 5, 4, 3, 2, 1, 0]
    assert [c.operation for c in commits][:4] == ["OPTIMIZE", "MERGE", "UPDATE", "DELETE"]
    changes = (spark.read.format("filecommit").option("table", name).option("readChangeFeed", "true")
               .option("startingVersion", 3).option("endingVersion", 3).load())
    assert [(r["id"], r["_change_type"]) for r in changes.collect()] == [(1, "delete")]
    assert sorted(tuple(r) for r in spark.read.format("filecommit").option("table", name).load().collect()) == [
        (2, "B"), (3, "C"), (4, "d")]

    r = filecommit.restore(spark, version=1, table=name)
    assert r.version == 7
    pd.testing.assert_frame_equal(delta_rows(table_path, COLUMNS), _rows((1, "a"), (2, "b"), (3, "c")))

    v = filecommit.vacuum(spark, table=name, dry_run=True)
    assert v.dry_run and v.table_path.endswith(table_path)

    # Staging by name: stage, fetch, audit, publish; stage another and abort it; stage external files.
    staged = filecommit.write(spark.createDataFrame([(5, "e")], "id long, v string"), table=name, stage=True)
    assert filecommit.get_staged(spark, staged_id=staged.id, table=name).id == staged.id
    assert [tuple(r) for r in filecommit.read_staged(spark, staged=staged, table=name).collect()] == [(5, "e")]
    assert filecommit.commit(spark, staged=staged, table=name).version == 8
    other = filecommit.write(spark.createDataFrame([(6, "f")], "id long, v string"), table=name, stage=True)
    assert filecommit.abort(spark, staged=other, table=name) >= 1
    pq.write_table(pa.table({"id": pa.array([7], pa.int64()), "v": ["g"]}), os.path.join(table_path, "ext-7.parquet"))
    external = filecommit.stage_files(spark, files=["ext-7.parquet"], table=name)
    assert filecommit.commit(spark, staged=external, table=name).version == 9
    # Nothing to publish: committed=False, and the table's root, not "" (the name's location).
    empty = filecommit.commit(spark, staged=[], table=name)
    assert not empty.committed and empty.version == -1 and empty.table_path.endswith(table_path)

    want = _rows((1, "a"), (2, "b"), (3, "c"), (5, "e"), (7, "g"))
    pd.testing.assert_frame_equal(delta_rows(table_path, COLUMNS), want)
    out = delta_spark.read([{"kind": "table", "path": table_path}])[0]
    assert out.get("ok", True), out
    pd.testing.assert_frame_equal(result_frame(out, COLUMNS), want)
    assert out["latest_version"] == 9


def _commands(spark, path, table):
    """Every command by name or path, called with ``path`` and/or ``table``."""
    df = spark.createDataFrame([(1, "a")], "id long, v string")
    return {
        "write": lambda: filecommit.write(df, path, table=table),
        "set_table_properties": lambda: filecommit.set_table_properties(spark, path, {"a.b": "1"}, table=table),
        "delete": lambda: filecommit.delete(spark, path, "id = 1", table=table),
        "update": lambda: filecommit.update(spark, path, {"v": "'x'"}, table=table),
        "merge": lambda: filecommit.merge(df, path, "target.id = source.id", table=table)
        .when_matched_delete().execute(),
        "optimize": lambda: filecommit.optimize(spark, path, table=table),
        "vacuum": lambda: filecommit.vacuum(spark, path, table=table, dry_run=True),
        "restore": lambda: filecommit.restore(spark, path, version=0, table=table),
        "history": lambda: filecommit.history(spark, path, table=table),
        "commit": lambda: filecommit.commit(spark, path, "00000000-0000-0000-0000-000000000000", table=table),
        "abort": lambda: filecommit.abort(spark, path, "00000000-0000-0000-0000-000000000000", table=table),
        "get_staged": lambda: filecommit.get_staged(spark, path, "00000000-0000-0000-0000-000000000000", table=table),
        "read_staged": lambda: filecommit.read_staged(spark, path, "00000000-0000-0000-0000-000000000000",
                                                      table=table),
        "stage_files": lambda: filecommit.stage_files(spark, path, ["x.parquet"], table=table),
        "write_batch": lambda: filecommit.write_batch(df, path, batch_id=0, table=table),
    }


COMMANDS = ["write", "set_table_properties", "delete", "update", "merge", "optimize", "vacuum", "restore", "history",
            "commit", "abort", "get_staged", "read_staged", "stage_files", "write_batch"]


@pytest.mark.parametrize("command", COMMANDS)
def test_path_and_table_together_are_refused_before_sending(spark, table_path, command):
    with pytest.raises(PySparkValueError) as e:
        _commands(spark, table_path, "default.t")[command]()
    assert e.value.getCondition() == "CANNOT_SET_TOGETHER"
    assert not os.path.exists(table_path)


def test_unknown_table_name_is_refused_by_every_command(spark):
    missing = f"default.no_such_{uuid.uuid4().hex[:8]}"
    for command, call in _commands(spark, None, missing).items():
        with pytest.raises(SparkConnectGrpcException) as e:
            call()
        assert e.value.getCondition() == "DELTA_TABLE_NOT_FOUND", command


@pytest.mark.refused_in_shared_mode("creates a Parquet table by name")
def test_write_batch_by_parquet_table_name(spark, tmp_path):
    """``write_batch(table=)``: the batch goes to the location of a Parquet table of the catalog (the
    sink's root); Spark's reader of that table lists the sink's log; a Delta table's name is refused."""
    root = str(tmp_path / "sink")
    os.makedirs(root)
    name = f"s_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING) USING parquet LOCATION '{root}'").collect()
    r = filecommit.write_batch(spark.createDataFrame([(1, "a")], "id long, v string"), table=f"default.{name}",
                               batch_id=0)
    assert r.committed and r.files and all(root in f.path for f in r.files)
    assert os.path.exists(os.path.join(root, "_spark_metadata", "0"))
    from urllib.parse import unquote, urlparse

    files = [unquote(urlparse(f.path).path) for f in r.files]
    assert [tuple(x.values()) for x in pa.concat_tables([pq.read_table(f) for f in files]).select(COLUMNS)
            .to_pylist()] == [(1, "a")]
    assert [tuple(x) for x in spark.table(name).collect()] == [(1, "a")]
    delta = f"d_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {delta} (id BIGINT) USING delta LOCATION '{tmp_path / 'delta'}'").collect()
    with pytest.raises(SparkConnectGrpcException) as e:
        filecommit.write_batch(spark.range(1), table=delta, batch_id=0)
    assert e.value.getCondition() == "DELTA_TABLE_NOT_FOUND"
    assert not os.path.exists(tmp_path / "delta" / "_spark_metadata")


def test_drop_of_a_managed_table_waits_for_its_staged_commits(spark):
    """DROP TABLE of a managed table deletes its files at once, so it is refused by class while a
    staged commit of the table is pending (publishing it would reference deleted files), and so is
    DROP DATABASE ... CASCADE of its database; once the commit is aborted both go through."""
    db = f"drops_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {db}").collect()
    name = f"{db}.managed"
    spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta").collect()
    location = spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"]
    staged = filecommit.write(spark.createDataFrame([(1, "a")], "id long, v string"), table=name, stage=True)
    for statement in (f"DROP TABLE {name}", f"DROP DATABASE {db} CASCADE"):
        with pytest.raises(SparkConnectGrpcException) as e:
            spark.sql(statement).collect()
        assert error_class(e) == "FILECOMMIT_STAGED_COMMITS_PENDING", statement
    assert DeltaTable(location).version() == 0
    assert filecommit.abort(spark, staged=staged, table=name) == 1
    spark.sql(f"DROP DATABASE {db} CASCADE").collect()
    assert not os.path.exists(location.removeprefix("file:"))
