"""Delta tables by name and SQL on them: the ``spark_catalog`` plugin (``FileCommitCatalog``) and the
session extension (``FileCommitExtensions``) of the server ``filecommit.local_session()`` starts
(Spark's Hive metastore on embedded Derby in a directory of its own). Every statement is plain
Spark SQL or pyspark's standard DataFrame API; every result is read back by delta-rs and by
Spark + Delta, which know nothing of the catalog.
"""

from __future__ import annotations

import os
import uuid

import pandas as pd
import pytest
from deltalake import DeltaTable
from helpers import delta_rows, error_class, result_frame, rows_frame
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

pytestmark = pytest.mark.slow


def _name(prefix="t"):
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _spark_delta(delta_spark, path, columns):
    out = delta_spark.read([{"kind": "table", "path": path}])[0]
    assert out.get("ok", True), out
    return result_frame(out, columns), out["latest_version"]


def _expect(rows, columns):
    return rows_frame(rows, columns)


def _both(delta_spark, path, rows, columns):
    """delta-rs and Spark + Delta both read ``rows``; returns the latest version."""
    want = _expect(rows, columns)
    pd.testing.assert_frame_equal(delta_rows(path, columns), want)
    got, version = _spark_delta(delta_spark, path, columns)
    pd.testing.assert_frame_equal(got, want)
    return version




def test_create_table_sql_partitioned_with_location_and_properties(spark, delta_spark, table_path):
    name = _name()
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        f"LOCATION '{table_path}' TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"
    ).collect()
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')").collect()
    dt = DeltaTable(table_path)
    assert dt.metadata().partition_columns == ["part"]
    assert dt.metadata().configuration.get("delta.enableChangeDataFeed") == "true"
    assert _both(delta_spark, table_path, [(1, "a"), (2, "b")], ["id", "part"]) == 1
    assert sorted(tuple(r) for r in spark.table(name).collect()) == [(1, "a"), (2, "b")]
    # CREATE of an existing name commits nothing.
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta").collect()
    assert error_class(e) == "TABLE_OR_VIEW_ALREADY_EXISTS"
    assert DeltaTable(table_path).version() == 1


def test_row_level_sql_returns_delta_metrics(spark, delta_spark, table_path):
    name, src = _name(), _name("src")
    spark.sql(f"CREATE TABLE {name} USING delta LOCATION '{table_path}' AS "
              "SELECT * FROM VALUES (1L, 'a'), (2L, 'b'), (3L, 'c') AS v(id, name)").collect()
    assert DeltaTable(table_path).version() == 0  # CTAS is one commit
    assert [tuple(r) for r in spark.sql(f"DELETE FROM {name} WHERE id = 1").collect()] == [(1,)]
    assert [tuple(r) for r in spark.sql(f"UPDATE {name} SET name = 'B' WHERE id = 2").collect()] == [(1,)]
    spark.sql(f"CREATE TABLE {src} USING delta AS SELECT * FROM VALUES (3L, 'C'), (4L, 'd') AS v(id, name)").collect()
    merged = spark.sql(
        f"MERGE INTO {name} AS t USING {src} AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    ).collect()
    assert merged[0].asDict() == {"num_affected_rows": 2, "num_updated_rows": 1, "num_deleted_rows": 0,
                                  "num_inserted_rows": 1}
    assert _both(delta_spark, table_path, [(2, "B"), (3, "C"), (4, "d")], ["id", "name"]) == 3
    ops = [h["operation"] for h in DeltaTable(table_path).history()]
    assert ops[:3] == ["MERGE", "UPDATE", "DELETE"]
    # Time travel by SQL and by Delta's name suffix, as delta-rs reads the same version.
    v1 = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {name} VERSION AS OF 1").collect())
    assert v1 == [(2, "b"), (3, "c")]
    assert sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {name}@v1").collect()) == v1
    pd.testing.assert_frame_equal(delta_rows(table_path, ["id", "name"], version=1), _expect(v1, ["id", "name"]))


def test_path_identifier_sql_and_dataframe_merge_into(spark, delta_spark, table_path):
    """The issue's first tries: DELETE FROM delta.`/path` and pyspark's DataFrame.mergeInto."""
    spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string").write.format("delta").save(table_path)
    out = spark.sql(f"DELETE FROM delta.`{table_path}` WHERE id = 2").collect()
    assert out[0].num_affected_rows == 1
    name = _name()
    spark.sql(f"CREATE TABLE {name} USING delta LOCATION '{table_path}'").collect()  # registers the table as is
    from pyspark.sql import functions as F

    source = spark.createDataFrame([(1, "A"), (5, "e")], "id long, name string")
    (source.mergeInto(name, F.col(f"{name}.id") == source.id)
        .whenMatched().updateAll().whenNotMatched().insertAll().merge())
    assert _both(delta_spark, table_path, [(1, "A"), (5, "e")], ["id", "name"]) == 2


def test_dataframe_writers_by_name(spark, delta_spark):
    name = _name()
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, part string")
    df.write.format("delta").partitionBy("part").saveAsTable(name)
    path = DeltaTable_path(spark, name)
    spark.createDataFrame([(3, "a")], "id long, part string").write.format("delta").mode("append").saveAsTable(name)
    spark.createDataFrame([(4, "c")], "id long, part string").write.insertInto(name)
    spark.createDataFrame([(5, "b")], "id long, part string").writeTo(name).append()
    _both(delta_spark, path, [(1, "a"), (2, "b"), (3, "a"), (4, "c"), (5, "b")], ["id", "part"])
    # Dynamic partition overwrite replaces partition b only.
    spark.createDataFrame([(6, "b")], "id long, part string").writeTo(name).overwritePartitions()
    _both(delta_spark, path, [(1, "a"), (3, "a"), (4, "c"), (6, "b")], ["id", "part"])
    # INSERT ... REPLACE WHERE and INSERT OVERWRITE.
    spark.sql(f"INSERT INTO {name} REPLACE WHERE part = 'a' VALUES (7, 'a')").collect()
    _both(delta_spark, path, [(7, "a"), (4, "c"), (6, "b")], ["id", "part"])
    spark.sql(f"INSERT OVERWRITE {name} VALUES (8, 'z')").collect()
    version = _both(delta_spark, path, [(8, "z")], ["id", "part"])
    # writeTo(...).create() of a new name, then replace() of it: one commit each.
    other = _name()
    spark.range(2).writeTo(other).using("delta").create()
    spark.range(5, 6).writeTo(other).using("delta").replace()
    assert sorted(r.id for r in spark.table(other).collect()) == [5]
    assert DeltaTable(DeltaTable_path(spark, other)).version() == 1
    assert version == 6


def DeltaTable_path(spark, name):  # noqa: N802 - reads like the class it feeds
    """A catalog table's location, from DESCRIBE TABLE EXTENDED."""
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
    loc = [r.data_type for r in rows if r.col_name == "Location"][0]
    return loc[len("file:"):] if loc.startswith("file:") else loc


def test_alter_table_and_drop(spark, delta_spark, table_path):
    name = _name()
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '{table_path}' "
              "TBLPROPERTIES ('delta.constraints.positive' = 'id > 0')").collect()
    # ADD CONSTRAINT checks the table's rows (none yet), then commits Delta's property.
    spark.sql(f"ALTER TABLE {name} ADD CONSTRAINT small CHECK (id < 100)").collect()
    assert DeltaTable(table_path).version() == 1
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.appendOnly' = 'false', 'owner.team' = 'x')").collect()
    spark.sql(f"ALTER TABLE {name} ADD COLUMNS (note STRING)").collect()
    conf = DeltaTable(table_path).metadata().configuration
    assert conf["delta.constraints.positive"] == "id > 0"
    assert conf["delta.constraints.small"] == "id < 100"
    assert conf["owner.team"] == "x"
    detail = delta_spark.read([{"kind": "detail", "path": table_path}])[0]
    assert [f["name"] for f in detail["schema"]["fields"]] == ["id", "note"]
    before = DeltaTable(table_path).version()
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.sql(f"INSERT INTO {name} VALUES (-1, 'x')").collect()
    assert error_class(e) == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
    assert DeltaTable(table_path).version() == before
    # DROP of an external table keeps its files; the name is gone.
    spark.sql(f"DROP TABLE {name}").collect()
    assert DeltaTable(table_path).version() == before
    assert name not in [t.tableName for t in spark.sql("SHOW TABLES").collect()]
    # DROP of a managed table deletes its directory, as Spark does for managed tables.
    managed = _name()
    spark.sql(f"CREATE TABLE {managed} (id BIGINT) USING delta").collect()
    path = DeltaTable_path(spark, managed)
    assert os.path.isdir(os.path.join(path, "_delta_log"))
    spark.sql(f"DROP TABLE {managed}").collect()
    assert not os.path.exists(path)


def _statement_refused(spark, path, statement, condition):
    """``statement`` fails with ``condition`` and commits nothing; returns the error's parameters."""
    before = DeltaTable(path).version()
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.sql(statement).collect()
    assert error_class(e) == condition, str(e.value)[:400]
    assert DeltaTable(path).version() == before
    return e.value.getMessageParameters()


def test_check_constraints_on_a_table_with_rows(spark, delta_spark, table_path):
    """ALTER TABLE ADD / DROP CONSTRAINT as Delta's AlterTableAdd/DropConstraintDeltaCommand: the rows
    are checked first (false or null violates; rows a deletion vector deleted do not count), the
    errors are Delta's, and Spark + Delta reads the constraint and its writer feature."""
    import filecommit

    name = _name()
    spark.sql(f"CREATE TABLE {name} (id BIGINT, s STRING) USING delta LOCATION '{table_path}' "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')").collect()
    spark.createDataFrame([(1, "a"), (5, "b"), (None, "c"), (50, "d")], "id long, s string").coalesce(1)\
        .writeTo(name).append()
    spark.sql(f"DELETE FROM {name} WHERE id = 50").collect()
    delete_commit = os.path.join(table_path, "_delta_log", f"{DeltaTable(table_path).version():020d}.json")
    with open(delete_commit) as f:
        assert '"deletionVector":{' in f.read(), "the DELETE left a deletion vector"
    # 5 and NULL violate; 50 is deleted (by the deletion vector) and is not counted.
    params = _statement_refused(spark, table_path, f"ALTER TABLE {name} ADD CONSTRAINT small CHECK (id < 3)",
                                "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION")
    assert params["numRows"] == "2"
    _statement_refused(spark, table_path, f"ALTER TABLE {name} ADD CONSTRAINT bad CHECK (id + 1)",
                       "DELTA_NON_BOOLEAN_CHECK_CONSTRAINT")
    spark.sql(f"ALTER TABLE {name} ADD CONSTRAINT Small CHECK (id < 10 OR id IS NULL)").collect()
    version = DeltaTable(table_path).version()
    assert DeltaTable(table_path).metadata().configuration["delta.constraints.small"] == "id < 10 OR id IS NULL"
    detail = delta_spark.read([{"kind": "detail", "path": table_path}])[0]
    assert "checkConstraints" in detail["tableFeatures"]
    assert detail["properties"]["delta.constraints.small"] == "id < 10 OR id IS NULL"
    history = DeltaTable(table_path).history(1)[0]
    assert history["operation"] == "ADD CONSTRAINT"
    assert history["operationParameters"] == {"name": "Small", "expr": "id < 10 OR id IS NULL"}
    _statement_refused(spark, table_path, f"ALTER TABLE {name} ADD CONSTRAINT SMALL CHECK (id < 100)",
                       "DELTA_CONSTRAINT_ALREADY_EXISTS")
    _statement_refused(spark, table_path, f"INSERT INTO {name} VALUES (20, 'x')",
                       "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES")
    _statement_refused(spark, table_path, f"ALTER TABLE {name} DROP CONSTRAINT nope", "DELTA_CONSTRAINT_DOES_NOT_EXIST")
    # set_table_properties checks the rows the same way.
    with pytest.raises(SparkConnectGrpcException) as e:
        filecommit.set_table_properties(spark, table_path, {"delta.constraints.pos": "id > 1"})
    assert error_class(e) == "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION"
    assert e.value.getMessageParameters()["numRows"] == "2"
    assert DeltaTable(table_path).version() == version
    filecommit.set_table_properties(spark, table_path, {"delta.constraints.pos": "id > 0 OR id IS NULL"})
    # DROP IF EXISTS of a missing one commits the unchanged metadata, as Delta does; DROP removes it.
    spark.sql(f"ALTER TABLE {name} DROP CONSTRAINT IF EXISTS nope").collect()
    spark.sql(f"ALTER TABLE {name} DROP CONSTRAINT SMALL").collect()
    assert DeltaTable(table_path).version() == version + 3
    history = DeltaTable(table_path).history(1)[0]
    assert history["operation"] == "DROP CONSTRAINT"
    assert history["operationParameters"]["existed"] == "true"
    detail = delta_spark.read([{"kind": "detail", "path": table_path}])[0]
    assert "delta.constraints.small" not in detail["properties"]
    assert detail["properties"]["delta.constraints.pos"] == "id > 0 OR id IS NULL"
    spark.sql(f"INSERT INTO {name} VALUES (20, 'x')").collect()
    # delta-rs does not read deletion vectors: Spark + Delta reads the rows.
    got, _ = _spark_delta(delta_spark, table_path, ["id", "s"])
    pd.testing.assert_frame_equal(got, _expect([(1, "a"), (5, "b"), (None, "c"), (20, "x")], ["id", "s"]))


def test_allowed_roots_apply_to_locations_and_paths(spark, tmp_path):
    name = _name()
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '/proc/self/fc_{name}'").collect()
    assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
    assert name not in [t.tableName for t in spark.sql("SHOW TABLES").collect()]
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.sql("SELECT * FROM delta.`/proc/self/fc_none`").collect()
    assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.sql(f"SELECT * FROM delta.`{tmp_path}/missing`").collect()
    assert error_class(e) == "DELTA_MISSING_DELTA_TABLE"


def test_client_write_by_table_name(spark, table_path):
    import filecommit

    name = _name()
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '{table_path}'").collect()
    result = filecommit.write(spark.createDataFrame([(1,), (2,)], "id long"), table=f"default.{name}")
    assert result.version == 1 and len(result.add_files) >= 1
    pd.testing.assert_frame_equal(delta_rows(table_path, ["id"]), _expect([(1,), (2,)], ["id"]))
    with pytest.raises(SparkConnectGrpcException) as e:
        filecommit.write(spark.range(1), table=f"no_such_{name}")
    assert error_class(e) == "DELTA_TABLE_NOT_FOUND"
