"""delta-spark's ``DeltaTable`` API (``from delta.tables import DeltaTable``, delta-spark 4.4's Delta
Connect client, installed with ``--no-deps``) against the suite's filecommit server: ``forPath``,
``forName``, ``toDF``, ``alias``, ``isDeltaTable``, ``history``, ``detail``, ``delete`` with and
without a condition, and ``update``.

Tables are made by real Delta (``.venv-delta``, the module's ``FIXTURES``) and copied twice (``twin``):
our server changes one copy through ``DeltaTable``, Spark + Delta runs the same statement on the
other; the metric rows, history and detail columns are compared with Delta's, and every result is
read back by delta-rs and by Spark + Delta. Bad input is refused with Delta's error class (or
filecommit's for a path outside the allowed roots) and nothing is committed. Every other Delta
Connect message kind is refused with ``FILECOMMIT_DELTA_CONNECT_UNSUPPORTED``.
"""

from __future__ import annotations

import os
import threading
import uuid

import pytest
from delta.tables import DeltaTable
from deltatable_support import (COLUMNS, ROWS, both_read, delta_error, delta_rs_reads, latest_version, rows, steps,
                                unchanged)
from helpers import error_class, log_actions, race_held_commit, second_session, spark_delta_sql
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

pytestmark = pytest.mark.slow

FIXTURES = {
    "plain": steps(""),
    "dv": steps("TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"),
}


def test_for_path_to_df_reads_the_latest_version(spark, twin, delta_spark):
    ours, _, version = twin("plain")
    got = DeltaTable.forPath(spark, ours).toDF()
    assert got.columns == COLUMNS
    assert sorted(tuple(r) for r in got.collect()) == sorted(ROWS)
    both_read(delta_spark, ours, ROWS)
    assert latest_version(ours) == version  # a read commits nothing


def test_a_kept_data_frame_reads_the_latest_version(spark, twin, delta_spark):
    """As with Delta, ``toDF()`` reads the version of when it runs: a DataFrame the client keeps (and
    that Spark Connect's plan cache answers for) sees a later change, ours or another writer's."""
    ours, _, _ = twin("plain")
    t = DeltaTable.forPath(spark, ours)
    df = t.toDF()
    assert len(df.collect()) == len(ROWS)  # the scan itself is the root: Spark Connect caches its plan
    t.delete("id < 10")
    assert len(df.collect()) == len(ROWS) - 10
    assert t.toDF().count() == len(ROWS) - 10
    spark_delta_sql(delta_spark, ours, "DELETE FROM {table} WHERE id >= 30")  # another writer
    assert sorted(r.id for r in df.collect()) == list(range(10, 30))


def test_for_name_and_alias(spark, twin):
    ours, _, _ = twin("plain")
    name = f"dt_api_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} USING delta LOCATION '{ours}'").collect()
    try:
        t = DeltaTable.forName(spark, name).alias("t")
        got = t.toDF().where(F.col("t.id") < 5).select("t.id", "t.part").orderBy("id").collect()
        assert [tuple(r) for r in got] == [(i, "abc"[i % 3]) for i in range(5)]
        detail = rows(DeltaTable.forName(spark, name).detail())[0]
        assert detail["name"] == f"spark_catalog.default.{name}"
        # delta.`/path` names the path, as Delta's forName reads it.
        assert DeltaTable.forName(spark, f"delta.`{ours}`").toDF().count() == len(ROWS)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_is_delta_table(spark, twin, tmp_path):
    ours, _, _ = twin("plain")
    # delta-spark's client answers the value of a one-row pandas frame (a numpy bool)
    assert bool(DeltaTable.isDeltaTable(spark, ours)) is True
    assert bool(DeltaTable.isDeltaTable(spark, os.path.join(ours, "part=a"))) is False  # inside a table
    empty = tmp_path / "empty"
    empty.mkdir()
    assert bool(DeltaTable.isDeltaTable(spark, str(empty))) is False
    assert bool(DeltaTable.isDeltaTable(spark, str(tmp_path / "absent"))) is False


@pytest.mark.parametrize("fixture", ["plain", "dv"])
def test_delete_with_condition_matches_delta(spark, twin, delta_spark, fixture):
    ours, theirs, version = twin(fixture)
    got = DeltaTable.forPath(spark, ours).delete("id % 4 = 0 AND part <> 'c'")
    expected = spark_delta_sql(delta_spark, theirs, "DELETE FROM {table} WHERE id % 4 = 0 AND part <> 'c'")
    assert got.columns == ["num_affected_rows"]
    assert rows(got) == expected
    assert expected[0]["num_affected_rows"] > 0
    left = [r for r in ROWS if not (r[0] % 4 == 0 and r[2] != "c")]
    both_read(delta_spark, ours, left)
    delta_rs_reads(theirs, left)
    assert latest_version(ours) == version + 1
    info = next(a["commitInfo"] for a in log_actions(ours)[version + 1] if "commitInfo" in a)
    assert info["operation"] == "DELETE"


@pytest.mark.parametrize("fixture", ["plain", "dv"])
def test_delete_without_condition_matches_delta(spark, twin, delta_spark, fixture):
    ours, theirs, version = twin(fixture)
    got = DeltaTable.forPath(spark, ours).delete()
    expected = spark_delta_sql(delta_spark, theirs, "DELETE FROM {table}")
    assert rows(got) == expected
    assert expected == [{"num_affected_rows": len(ROWS)}]
    both_read(delta_spark, ours, [])
    assert latest_version(ours) == version + 1


def test_delete_with_a_column_condition_and_alias(spark, twin, delta_spark):
    ours, theirs, _ = twin("plain")
    got = DeltaTable.forPath(spark, ours).alias("t").delete(F.col("t.v") >= 300)
    expected = spark_delta_sql(delta_spark, theirs, "DELETE FROM {table} AS t WHERE t.v >= 300")
    assert rows(got) == expected
    both_read(delta_spark, ours, [r for r in ROWS if r[1] < 300])


@pytest.mark.parametrize("fixture", ["plain", "dv"])
def test_update_matches_delta(spark, twin, delta_spark, fixture):
    ours, theirs, version = twin(fixture)
    got = DeltaTable.forPath(spark, ours).update(condition="part = 'a' AND id < 30", set={"v": "v * 2 + 1"})
    expected = spark_delta_sql(delta_spark, theirs, "UPDATE {table} SET v = v * 2 + 1 WHERE part = 'a' AND id < 30")
    assert got.columns == ["num_affected_rows"]
    assert rows(got) == expected
    changed = [(i, v * 2 + 1 if p == "a" and i < 30 else v, p) for i, v, p in ROWS]
    both_read(delta_spark, ours, changed)
    delta_rs_reads(theirs, changed)
    assert latest_version(ours) == version + 1


def test_update_with_columns_and_alias(spark, twin, delta_spark):
    ours, theirs, _ = twin("plain")
    got = DeltaTable.forPath(spark, ours).alias("t").update(F.col("t.id") >= 35, {"v": F.col("t.v") - F.lit(1)})
    expected = spark_delta_sql(delta_spark, theirs, "UPDATE {table} AS t SET v = t.v - 1 WHERE t.id >= 35")
    assert rows(got) == expected == [{"num_affected_rows": 5}]
    both_read(delta_spark, ours, [(i, v - 1 if i >= 35 else v, p) for i, v, p in ROWS])


def test_history_matches_delta(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    DeltaTable.forPath(spark, ours).delete("id = 3")
    spark_delta_sql(delta_spark, theirs, "DELETE FROM {table} WHERE id = 3")
    DeltaTable.forPath(spark, ours).update(condition="id = 4", set={"v": "0"})
    spark_delta_sql(delta_spark, theirs, "UPDATE {table} SET v = 0 WHERE id = 4")

    got = DeltaTable.forPath(spark, ours).history()
    expected = delta_spark.read_one({"kind": "sql", "path": theirs, "sql": "DESCRIBE HISTORY {table}"})
    assert expected["ok"], expected
    assert got.columns == expected["columns"]
    ours_rows, their_rows = rows(got), expected["rows"]
    assert [r["version"] for r in ours_rows] == [r["version"] for r in their_rows] == list(range(version + 2, -1, -1))
    assert [r["operation"] for r in ours_rows] == [r["operation"] for r in their_rows]
    for o, t in zip(ours_rows[:2], their_rows[:2], strict=True):  # our DELETE and UPDATE, newest first
        # isolationLevel differs: filecommit's DELETE / UPDATE record the table's level
        # (WriteSerializable by default), Delta 4.4's DELETE records Serializable
        assert (o["readVersion"], o["isBlindAppend"]) == (t["readVersion"], t["isBlindAppend"])
        assert o["operationMetrics"]["numUpdatedRows" if o["operation"] == "UPDATE" else "numDeletedRows"] == \
            t["operationMetrics"]["numUpdatedRows" if t["operation"] == "UPDATE" else "numDeletedRows"]
    assert [r["version"] for r in rows(DeltaTable.forPath(spark, ours).history(1))] == [version + 2]


def test_detail_matches_delta(spark, twin, delta_spark):
    ours, theirs, _ = twin("dv")
    got = DeltaTable.forPath(spark, ours).detail()
    expected = delta_spark.read_one({"kind": "sql", "path": theirs, "sql": "DESCRIBE DETAIL {table}"})
    assert expected["ok"], expected
    assert got.columns == expected["columns"]
    o, t = rows(got)[0], expected["rows"][0]
    for key in ("format", "id", "name", "description", "partitionColumns", "clusteringColumns", "numFiles",
                "sizeInBytes", "properties", "minReaderVersion", "minWriterVersion", "tableFeatures"):
        assert o[key] == t[key], key
    assert o["location"].rstrip("/").endswith(os.path.basename(ours))


def test_unknown_column_is_delta_class_and_commits_nothing(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    t = DeltaTable.forPath(spark, ours)
    with pytest.raises(PySparkException) as e:
        t.delete("nope = 1")
    assert error_class(e) == delta_error(delta_spark, theirs, "DELETE FROM {table} WHERE nope = 1")
    with pytest.raises(PySparkException) as e:
        t.update(condition="id = 1", set={"v": "nope + 1"})
    assert error_class(e) == delta_error(delta_spark, theirs, "UPDATE {table} SET v = nope + 1 WHERE id = 1")
    with pytest.raises(PySparkException) as e:
        t.update(set={"nope": "1"})
    assert error_class(e) is not None
    unchanged(ours, version)


def test_path_outside_the_allowed_roots(spark):
    outside = f"/filecommit-not-allowed-{uuid.uuid4().hex[:8]}/t"
    calls = [lambda: DeltaTable.forPath(spark, outside).toDF().collect(),
             lambda: DeltaTable.forPath(spark, outside).delete("id = 1"),
             lambda: DeltaTable.forPath(spark, outside).history().collect(),
             lambda: DeltaTable.isDeltaTable(spark, outside)]
    for call in calls:
        with pytest.raises(PySparkException) as e:
            call()
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
    assert not os.path.exists(os.path.dirname(outside))


def test_table_that_does_not_exist(spark, delta_spark, tmp_path):
    missing = tmp_path / "missing"
    missing.mkdir()
    calls = [lambda: DeltaTable.forPath(spark, str(missing)).toDF().collect(),
             lambda: DeltaTable.forPath(spark, str(missing)).delete(),
             lambda: DeltaTable.forPath(spark, str(missing)).update(set={"v": "1"}),
             lambda: DeltaTable.forPath(spark, str(missing)).history().collect(),
             lambda: DeltaTable.forPath(spark, str(missing)).detail().collect(),
             lambda: DeltaTable.forName(spark, f"default.nope_{uuid.uuid4().hex[:8]}").toDF().collect()]
    for call in calls:
        with pytest.raises(PySparkException) as e:
            call()
        assert error_class(e) == "DELTA_MISSING_DELTA_TABLE"
    assert os.listdir(missing) == []


@pytest.mark.parametrize("call, kind", [
    (lambda t, spark: t.generate("symlink_format_manifest"), "GENERATE"),
])
def test_other_kinds_are_refused_by_name(spark, twin, call, kind):
    ours, _, version = twin("plain")
    with pytest.raises(PySparkException) as e:
        call(DeltaTable.forPath(spark, ours), spark)
    assert error_class(e) == "FILECOMMIT_DELTA_CONNECT_UNSUPPORTED"
    assert e.value.getMessageParameters()["operation"] == kind
    assert latest_version(ours) == version


@pytest.mark.usefixtures("faults_available")
@pytest.mark.parametrize("fixture", ["plain", "dv"])
def test_two_clients_the_loser_gets_deltas_exception_type(spark, twin, delta_spark, fixture):
    """Two clients delete overlapping rows at once: the first reads, then its commit is held (the
    fault-injection jar) while the second commits; the first then loses with Delta's conflict class
    for a winner that rewrote files whose rows the loser's condition reads (Delta's
    ``ConflictChecker``: files added by a non-blind-append winner that match the read predicate,
    WriteSerializable), raised as delta-spark's type, and commits nothing."""
    import delta.connect.exceptions
    import delta.exceptions

    ours, _, version = twin(fixture)
    other = second_session(spark)

    def winner_deleted_five(got) -> None:
        assert got == [{"num_affected_rows": 5}], got

    try:
        outcome, _ = race_held_commit(
            ours, version + 1,
            lambda: rows(DeltaTable.forPath(spark, ours).delete("id < 10")),
            lambda: rows(DeltaTable.forPath(other, ours).delete("id < 5")),
            check=winner_deleted_five)
    finally:
        other.stop()
    e = outcome.get("error")
    assert isinstance(e, delta.exceptions.ConcurrentAppendException), outcome
    assert isinstance(e, delta.connect.exceptions.ConcurrentAppendException)  # delta-spark's Spark Connect type
    assert error_class(e) == "DELTA_CONCURRENT_APPEND" and e.getSqlState() == "2D521"
    assert latest_version(ours) == version + 1  # the winner's commit only
    both_read(delta_spark, ours, [r for r in ROWS if r[0] >= 5])


def test_two_clients_in_other_partitions_both_commit(spark, twin, delta_spark):
    """A DeltaTable delete in one partition and another client's append to another partition at the
    same time do not conflict (Delta's rules: the delete reads partition 'a' only), whichever commits
    first."""
    ours, _, version = twin("plain")
    other = second_session(spark)
    new_rows = [(100 + i, i, "b") for i in range(3)]
    errors: list = []

    def append() -> None:
        try:
            other.createDataFrame(new_rows, "id long, v long, part string").write.format("delta").mode("append") \
                .save(ours)
        except Exception as e:  # noqa: BLE001 - asserted below
            errors.append(e)

    t = threading.Thread(target=append)
    t.start()
    try:
        got = rows(DeltaTable.forPath(spark, ours).delete("part = 'a'"))
    finally:
        t.join(timeout=120)
        other.stop()
    assert errors == []
    assert got == [{"num_affected_rows": len([r for r in ROWS if r[2] == "a"])}]
    assert latest_version(ours) == version + 2
    both_read(delta_spark, ours, [r for r in ROWS if r[2] != "a"] + new_rows)
