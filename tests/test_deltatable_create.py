"""delta-spark's ``DeltaTable`` builders (``DeltaTable.create / createIfNotExists / replace /
createOrReplace(spark) ... .execute()``, Delta Connect's ``CREATE_DELTA_TABLE`` command) against the
suite's filecommit server.

Each declaration is made twice: through ``DeltaTable`` on our server, and as the equivalent SQL
(``CREATE TABLE`` / ``REPLACE TABLE`` ...) by Spark + Delta 4.4 (the ``delta_spark`` worker). The
logs' ``metaData`` (schema with its identity / generated-column / comment metadata, partition
columns, configuration, description) and ``protocol`` (versions, features) must be equal, and so
must ``DESCRIBE DETAIL``; rows written into our table afterwards are read back by delta-rs and by
Spark + Delta. Bad declarations are refused with Delta's error class (or filecommit's for a path
outside the allowed roots) and nothing is committed.
"""

from __future__ import annotations

import json
import os
import uuid

import pytest
from delta.tables import DeltaTable, IdentityGenerator
from deltatable_support import refused, rows
from helpers import log_actions, spark_delta_sql
from pyspark.sql.types import LongType, StringType, StructField, StructType

import filecommit

pytestmark = pytest.mark.slow

FIXTURES: dict = {}

# DESCRIBE DETAIL columns that say what the declaration made (not where or when). Not numFiles: our
# first commit of an unpartitioned table holds one empty data file, Delta's none (the files hold the
# same rows: none).
DETAIL_KEYS = ("format", "description", "partitionColumns", "clusteringColumns", "properties",
               "minReaderVersion", "minWriterVersion", "tableFeatures")


def _paths(tmp_path):
    return str(tmp_path / "ours" / "t"), str(tmp_path / "theirs" / "t")


def _last(path: str, action: str) -> dict:
    """The last ``action`` (``metaData`` / ``protocol``) of the table's log."""
    found = [a[action] for _, actions in sorted(log_actions(path).items()) for a in actions if action in a]
    assert found, f"no {action} in {path}"
    return found[-1]


def _metadata(path: str) -> dict:
    md = _last(path, "metaData")
    return {"schema": json.loads(md["schemaString"]), "partitionColumns": md["partitionColumns"],
            "configuration": md["configuration"], "description": md.get("description")}


def _protocol(path: str) -> dict:
    p = _last(path, "protocol")
    return {"minReaderVersion": p["minReaderVersion"], "minWriterVersion": p["minWriterVersion"],
            "readerFeatures": sorted(p.get("readerFeatures") or []),
            "writerFeatures": sorted(p.get("writerFeatures") or [])}


def _detail(row: dict) -> dict:
    out = {k: row.get(k) for k in DETAIL_KEYS}
    out["tableFeatures"] = sorted(out["tableFeatures"] or [])
    return out


def assert_same_table(spark, delta_spark, ours: str, theirs: str) -> None:
    """Our table and Delta's have the same metadata, protocol and DESCRIBE DETAIL."""
    assert _metadata(ours) == _metadata(theirs)
    assert _protocol(ours) == _protocol(theirs)
    got = _detail(rows(DeltaTable.forPath(spark, ours).detail())[0])
    assert got == _detail(spark_delta_sql(delta_spark, theirs, "DESCRIBE DETAIL {table}")[0])


def both_read(delta_spark, path: str, columns) -> list[tuple]:
    """The table's rows (sorted tuples of ``columns``), equal as delta-rs and Spark + Delta read them."""
    import pyarrow as pa
    from deltalake import DeltaTable as RsTable
    from deltalake import QueryBuilder

    got = pa.table(QueryBuilder().register("t", RsTable(path)).execute(f"SELECT {', '.join(columns)} FROM t")
                   .read_all())
    by_rs = sorted(zip(*(got[c].to_pylist() for c in columns), strict=True))
    answer = delta_spark.read_one({"path": path, "kind": "table"})
    assert answer["ok"], answer
    assert sorted(tuple(r[c] for c in columns) for r in answer["rows"]) == by_rs
    return by_rs


def _ref(path: str) -> str:
    return "delta.`" + path + "`"


# (builder steps on DeltaTable.create(spark), equivalent column list + clauses of CREATE TABLE)
VARIANTS = {
    "partitioned_with_comment_and_property": (
        lambda b: b.addColumn("id", "BIGINT", nullable=False).addColumn("v", LongType())
        .addColumn("part", "STRING", comment="the partition").partitionedBy("part")
        .property("delta.appendOnly", "false").property("owner_note", "x").comment("a table"),
        "(id BIGINT NOT NULL, v BIGINT, part STRING COMMENT 'the partition') USING delta PARTITIONED BY (part) "
        "COMMENT 'a table' TBLPROPERTIES ('delta.appendOnly' = 'false', 'owner_note' = 'x')",
        "INSERT INTO {table} VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'a')",
        ("id", "v", "part"), [(1, 10, "a"), (2, 20, "b"), (3, 30, "a")]),
    "generated_column": (
        lambda b: b.addColumn("id", "BIGINT").addColumn("v", "BIGINT")
        .addColumn("d", "BIGINT", generatedAlwaysAs="id * 2", comment="doubled"),
        "(id BIGINT, v BIGINT, d BIGINT GENERATED ALWAYS AS (id * 2) COMMENT 'doubled') USING delta",
        "INSERT INTO {table} (id, v) VALUES (1, 10), (2, 20)",
        ("id", "v", "d"), [(1, 10, 2), (2, 20, 4)], ("id long, v long", [(1, 10), (2, 20)])),
    "identity_always": (
        lambda b: b.addColumn("id", "BIGINT", generatedAlwaysAs=IdentityGenerator(start=10, step=5))
        .addColumn("v", "BIGINT"),
        "(id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 5), v BIGINT) USING delta",
        "INSERT INTO {table} (v) VALUES (100)",
        ("id", "v"), [(10, 100)]),
    "identity_by_default": (
        lambda b: b.addColumn("id", "BIGINT", generatedByDefaultAs=IdentityGenerator(start=-1, step=-2))
        .addColumn("v", "BIGINT"),
        "(id BIGINT GENERATED BY DEFAULT AS IDENTITY (START WITH -1 INCREMENT BY -2), v BIGINT) USING delta",
        "INSERT INTO {table} (id, v) VALUES (7, 70)",
        ("id", "v"), [(7, 70)]),
    "clustered": (
        lambda b: b.addColumns(StructType([StructField("id", LongType()), StructField("s", StringType())]))
        .clusterBy("id"),
        "(id BIGINT, s STRING) USING delta CLUSTER BY (id)",
        "INSERT INTO {table} VALUES (1, 'x'), (2, 'y')",
        ("id", "s"), [(1, "x"), (2, "y")]),
    "table_features": (
        lambda b: b.addColumns([StructField("id", LongType(), False), StructField("s", StringType())])
        .property("delta.enableDeletionVectors", "true").property("delta.enableChangeDataFeed", "true")
        .property("delta.checkpointInterval", "5"),
        "(id BIGINT NOT NULL, s STRING) USING delta TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
        "'delta.enableChangeDataFeed' = 'true', 'delta.checkpointInterval' = '5')",
        "INSERT INTO {table} VALUES (1, 'x')",
        ("id", "s"), [(1, "x")]),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_create_by_location_matches_delta(spark, delta_spark, tmp_path, variant):
    build, ddl, insert, columns, expected, *frame = VARIANTS[variant]
    ours, theirs = _paths(tmp_path)
    table = build(DeltaTable.create(spark).location(ours)).execute()
    spark_delta_sql(delta_spark, theirs, "CREATE TABLE {table} " + ddl)
    assert sorted(log_actions(ours)) == [0]
    assert_same_table(spark, delta_spark, ours, theirs)
    # execute() answers DeltaTable.forPath(location): the new, empty table
    assert table.toDF().count() == 0
    # rows written into ours (through our server) read back the same with delta-rs and Spark + Delta
    if frame:  # the filecommit client's write computes the generated column (our SQL INSERT with a column
        # list would give it NULL, which the generated-column check refuses)
        filecommit.write(spark.createDataFrame(frame[0][1], frame[0][0]), ours, mode="append")
    else:
        spark.sql(insert.replace("{table}", _ref(ours))).collect()
    spark_delta_sql(delta_spark, theirs, insert)
    assert both_read(delta_spark, ours, columns) == sorted(expected)
    assert both_read(delta_spark, theirs, columns) == sorted(expected)
    assert _protocol(ours) == _protocol(theirs)


def test_create_by_name_with_location_and_managed(spark, delta_spark, tmp_path):
    ours, theirs = _paths(tmp_path)
    external = f"dt_create_{uuid.uuid4().hex[:8]}"
    managed = f"dt_create_{uuid.uuid4().hex[:8]}"
    try:
        t = DeltaTable.create(spark).tableName(external).location(ours).addColumn("id", "BIGINT") \
            .addColumn("part", "STRING").partitionedBy("part").execute()
        spark_delta_sql(delta_spark, theirs, "CREATE TABLE {table} (id BIGINT, part STRING) USING delta "
                        "PARTITIONED BY (part)")
        assert_same_table(spark, delta_spark, ours, theirs)
        detail = rows(t.detail())[0]
        assert detail["name"] == f"spark_catalog.default.{external}"
        spark.sql(f"INSERT INTO {external} VALUES (1, 'a')").collect()
        assert both_read(delta_spark, ours, ("id", "part")) == [(1, "a")]
        # a managed table: the session catalog's default location
        m = DeltaTable.create(spark).tableName(f"default.{managed}").addColumn("id", "BIGINT").execute()
        where = rows(m.detail())[0]["location"].removeprefix("file:")
        assert log_actions(where)[0]
        assert spark.table(managed).count() == 0
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {external}")
        spark.sql(f"DROP TABLE IF EXISTS {managed}")


def test_create_if_not_exists(spark, delta_spark, tmp_path):
    ours, theirs = _paths(tmp_path)
    DeltaTable.createIfNotExists(spark).location(ours).addColumn("id", "BIGINT").execute()
    spark.sql(f"INSERT INTO {_ref(ours)} VALUES (1)").collect()
    # an existing table: nothing committed, whatever the declaration says (as Delta)
    t = DeltaTable.createIfNotExists(spark).location(ours).addColumn("other", "STRING").execute()
    spark_delta_sql(delta_spark, theirs, "CREATE TABLE IF NOT EXISTS {table} (id BIGINT) USING delta")
    spark_delta_sql(delta_spark, theirs, "INSERT INTO {table} VALUES (1)")
    spark_delta_sql(delta_spark, theirs, "CREATE TABLE IF NOT EXISTS {table} (other STRING) USING delta")
    assert sorted(log_actions(ours)) == sorted(log_actions(theirs)) == [0, 1]
    assert _metadata(ours) == _metadata(theirs)
    assert [tuple(r) for r in t.toDF().collect()] == [(1,)]


@pytest.mark.parametrize("builder", ["replace", "createOrReplace"])
def test_replace_by_name_matches_delta(spark, delta_spark, tmp_path, builder):
    ours, theirs = _paths(tmp_path)
    name = f"dt_create_{uuid.uuid4().hex[:8]}"
    try:
        DeltaTable.create(spark).tableName(name).location(ours).addColumn("id", "BIGINT") \
            .addColumn("part", "STRING").partitionedBy("part").comment("before").execute()
        spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')").collect()
        spark_delta_sql(delta_spark, "", f"CREATE TABLE {name} (id BIGINT, part STRING) USING delta "
                        f"PARTITIONED BY (part) COMMENT 'before' LOCATION '{theirs}'")
        spark_delta_sql(delta_spark, "", f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')")
        t = getattr(DeltaTable, builder)(spark).tableName(name).location(ours) \
            .addColumn("k", "STRING", nullable=False).addColumn("n", "INT", generatedAlwaysAs="length(k)") \
            .property("delta.enableChangeDataFeed", "true").execute()
        verb = "REPLACE TABLE" if builder == "replace" else "CREATE OR REPLACE TABLE"
        spark_delta_sql(delta_spark, "", f"{verb} {name} (k STRING NOT NULL, n INT GENERATED ALWAYS AS "
                        f"(length(k))) USING delta TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true') "
                        f"LOCATION '{theirs}'")
        assert sorted(log_actions(ours)) == sorted(log_actions(theirs)) == [0, 1, 2]
        assert _metadata(ours)["description"] is None
        assert_same_table(spark, delta_spark, ours, theirs)
        assert t.toDF().count() == 0
        assert both_read(delta_spark, ours, ("k", "n")) == []
        filecommit.write(spark.createDataFrame([("abc",)], "k string"), ours, mode="append")
        assert both_read(delta_spark, ours, ("k", "n")) == [("abc", 3)]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark_delta_sql(delta_spark, "", f"DROP TABLE IF EXISTS {name}")


def test_replace_by_path_matches_delta(spark, delta_spark, tmp_path):
    ours, theirs = _paths(tmp_path)
    DeltaTable.create(spark).location(ours).addColumn("id", "BIGINT").addColumn("part", "STRING") \
        .partitionedBy("part").execute()
    spark.sql(f"INSERT INTO {_ref(ours)} VALUES (1, 'a')").collect()
    spark_delta_sql(delta_spark, theirs, "CREATE TABLE {table} (id BIGINT, part STRING) USING delta "
                    "PARTITIONED BY (part)")
    spark_delta_sql(delta_spark, theirs, "INSERT INTO {table} VALUES (1, 'a')")
    DeltaTable.replace(spark).location(ours).addColumn("k", "STRING").comment("after").execute()
    spark_delta_sql(delta_spark, theirs, "REPLACE TABLE {table} (k STRING) USING delta COMMENT 'after'")
    assert sorted(log_actions(ours)) == sorted(log_actions(theirs)) == [0, 1, 2]
    assert_same_table(spark, delta_spark, ours, theirs)
    assert both_read(delta_spark, ours, ("k",)) == []
    # Delta's CREATE OR REPLACE of an existing table by path: the same declaration commits nothing,
    # another is refused (ours DELTA_METADATA_MISMATCH, Delta's DELTA_CREATE_TABLE_SCHEME_MISMATCH)
    DeltaTable.createOrReplace(spark).location(ours).addColumn("k", "STRING").comment("after").execute()
    spark_delta_sql(delta_spark, theirs, "CREATE OR REPLACE TABLE {table} (k STRING) USING delta COMMENT 'after'")
    assert sorted(log_actions(ours)) == sorted(log_actions(theirs)) == [0, 1, 2]
    got = refused(lambda: DeltaTable.createOrReplace(spark).location(ours).addColumn("x", "BIGINT").execute())
    expected = delta_spark.read_one({"kind": "sql", "path": theirs,
                                     "sql": "CREATE OR REPLACE TABLE {table} (x BIGINT) USING delta"})
    assert (got, expected["condition"]) == ("DELTA_METADATA_MISMATCH", "DELTA_CREATE_TABLE_SCHEME_MISMATCH")
    assert sorted(log_actions(ours)) == [0, 1, 2]


def test_create_or_replace_creates_a_missing_table(spark, delta_spark, tmp_path):
    ours, theirs = _paths(tmp_path)
    DeltaTable.createOrReplace(spark).location(ours).addColumn("id", "BIGINT").comment("new").execute()
    spark_delta_sql(delta_spark, theirs, "CREATE OR REPLACE TABLE {table} (id BIGINT) USING delta COMMENT 'new'")
    assert_same_table(spark, delta_spark, ours, theirs)


def test_create_of_an_existing_table_is_refused_as_delta(spark, delta_spark, tmp_path):
    ours, theirs = _paths(tmp_path)
    DeltaTable.create(spark).location(ours).addColumn("id", "BIGINT").execute()
    spark_delta_sql(delta_spark, theirs, "CREATE TABLE {table} (id BIGINT) USING delta")
    got = refused(lambda: DeltaTable.create(spark).location(ours).addColumn("id", "BIGINT").execute())
    expected = delta_spark.read_one({"kind": "sql", "path": theirs,
                                     "sql": "CREATE TABLE {table} (id BIGINT) USING delta"})
    assert not expected["ok"]
    assert got == expected["condition"]
    assert sorted(log_actions(ours)) == [0]


def test_replace_of_a_missing_table_is_refused_as_delta(spark, delta_spark, tmp_path):
    ours, theirs = _paths(tmp_path)
    got = refused(lambda: DeltaTable.replace(spark).location(ours).addColumn("id", "BIGINT").execute())
    expected = delta_spark.read_one({"kind": "sql", "path": theirs,
                                     "sql": "REPLACE TABLE {table} (id BIGINT) USING delta"})
    assert not expected["ok"]
    assert got == expected["condition"]
    assert not os.path.exists(os.path.join(ours, "_delta_log"))
    name = f"dt_create_{uuid.uuid4().hex[:8]}"
    assert refused(lambda: DeltaTable.replace(spark).tableName(name).addColumn("id", "BIGINT").execute()) \
        == "TABLE_OR_VIEW_NOT_FOUND"


@pytest.mark.parametrize("ddl_type", ["nosuchtype", "BIGINT BIGINT"])
def test_a_bad_column_type_is_refused_as_delta(spark, delta_spark, tmp_path, ddl_type):
    ours, theirs = _paths(tmp_path)
    got = refused(lambda: DeltaTable.create(spark).location(ours).addColumn("id", ddl_type).execute())
    expected = delta_spark.read_one({"kind": "sql", "path": theirs,
                                     "sql": f"CREATE TABLE {{table}} (id {ddl_type}) USING delta"})
    assert not expected["ok"]
    assert got == expected["condition"]
    assert not os.path.exists(ours)


def test_bad_identity_and_layout_declarations_arerefused(spark, delta_spark, tmp_path):
    ours, theirs = _paths(tmp_path)
    got = refused(lambda: DeltaTable.create(spark).location(ours)
                   .addColumn("id", "INT", generatedAlwaysAs=IdentityGenerator()).execute())
    expected = delta_spark.read_one({"kind": "sql", "path": theirs,
                                     "sql": "CREATE TABLE {table} (id INT GENERATED ALWAYS AS IDENTITY) USING delta"})
    assert got == expected["condition"] == "DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE"
    got = refused(lambda: DeltaTable.create(spark).location(ours).addColumn("p", "STRING")
                   .addColumn("id", "BIGINT", generatedAlwaysAs=IdentityGenerator()).partitionedBy("id").execute())
    expected = delta_spark.read_one({"kind": "sql", "path": theirs, "sql": "CREATE TABLE {table} (p STRING, id BIGINT "
                                     "GENERATED ALWAYS AS IDENTITY) USING delta PARTITIONED BY (id)"})
    assert got == expected["condition"] == "DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED"
    builder = DeltaTable.create(spark).location(ours).addColumn("id", "BIGINT").addColumn("p", "STRING")
    builder._partitioningColumns, builder._clusteringColumns = ["p"], ["id"]  # the client does not check this
    assert refused(builder.execute) == "DELTA_CLUSTER_BY_WITH_PARTITIONED_BY"
    assert refused(lambda: DeltaTable.create(spark).addColumn("id", "BIGINT").execute()) \
        == "DELTA_CREATE_TABLE_MISSING_TABLE_NAME_OR_LOCATION"
    assert not os.path.exists(ours)
    assert not os.path.exists(theirs)


def test_a_generated_column_of_another_type_is_refused_as_delta(spark, delta_spark, tmp_path):
    ours, theirs = _paths(tmp_path)
    got = refused(lambda: DeltaTable.create(spark).location(ours).addColumn("k", "STRING")
                   .addColumn("n", "BIGINT", generatedAlwaysAs="length(k)").execute())
    expected = delta_spark.read_one({"kind": "sql", "path": theirs, "sql": "CREATE TABLE {table} (k STRING, "
                                     "n BIGINT GENERATED ALWAYS AS (length(k))) USING delta"})
    assert got == expected["condition"] == "DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH"
    assert not os.path.exists(ours)


def test_a_location_outside_the_allowed_roots_isrefused(spark):
    outside = f"/filecommit-not-allowed-{uuid.uuid4().hex[:8]}/t"
    for builder in (DeltaTable.create, DeltaTable.createIfNotExists, DeltaTable.replace, DeltaTable.createOrReplace):
        assert refused(lambda b=builder: b(spark).location(outside).addColumn("id", "BIGINT").execute()) \
            == "FILECOMMIT_PATH_NOT_ALLOWED"
    name = f"dt_create_{uuid.uuid4().hex[:8]}"
    assert refused(lambda: DeltaTable.create(spark).tableName(name).location(outside)
                    .addColumn("id", "BIGINT").execute()) == "FILECOMMIT_PATH_NOT_ALLOWED"
    assert not spark.catalog.tableExists(name)
    assert not os.path.exists(os.path.dirname(outside))
