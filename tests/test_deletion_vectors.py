"""Deletion vectors built on the executors, one decision per row, non-deterministic changes refused.

Tables are made by real delta-spark 4.4.0 (``.venv-delta``) with ``delta.enableDeletionVectors``;
results are read by Spark + Delta and by delta-rs (its DataFusion ``QueryBuilder``, which applies
deletion vectors; ``DeltaTable.to_pandas`` refuses DV tables), never by our own code. Refusals are
compared with what Delta Lake on Spark answers for the same statement.
"""

from __future__ import annotations

import json
import os
import re

import pandas as pd
import pytest
from delta_tables import log_file_names
from helpers import canonical, data_files, dv_id, log_actions, log_state, result_frame, sql_steps, values_sql
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

ROWS = [(i, i * 10, "abc"[i % 3]) for i in range(1, 601)]


_CREATE = "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
FIXTURES = {
    # 600 rows, 3 partitions, 3 INSERTs (9 files or more), deletion vectors and the change data feed on.
    "dv_cdf": sql_steps(
        _CREATE + "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true')",
        f"INSERT INTO {{table}} VALUES {values_sql(ROWS[:200])}",
        f"INSERT INTO {{table}} VALUES {values_sql(ROWS[200:400])}",
        f"INSERT INTO {{table}} VALUES {values_sql(ROWS[400:])}",
        "DELETE FROM {table} WHERE id % 50 = 7"),
    # Deletion vectors on and a CHECK constraint an update can break after its DVs are written.
    "dv_check": sql_steps(
        _CREATE + "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
        f"INSERT INTO {{table}} VALUES {values_sql(ROWS[:60])}",
        "ALTER TABLE {table} ADD CONSTRAINT v_small CHECK (v < 100000)"),
    "plain": sql_steps(
        _CREATE + "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')",
        f"INSERT INTO {{table}} VALUES {values_sql(ROWS[:60])}"),
}


def delta_rs_query(path) -> pd.DataFrame:
    """The table as delta-rs reads it, deletion vectors applied (DataFusion scan), canonical (sorted by id)."""
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    got = QueryBuilder().register("t", DeltaTable(path)).execute("SELECT id, v, part FROM t").read_all()
    return canonical(pa.table(got), ["id", "v", "part"])


def spark_delta_table_and_feed(delta_spark, path, cdf_version=None):
    reads = [{"path": path, "kind": "table"}]
    if cdf_version is not None:
        reads.append({"path": path, "kind": "cdf", "startingVersion": cdf_version, "endingVersion": cdf_version})
    got = delta_spark.read(reads)
    assert all(r["ok"] for r in got), got
    table = result_frame(got[0], ["id", "v", "part"])
    return (table, pd.DataFrame(got[1]["rows"])) if cdf_version is not None else table


def _state(path):
    return log_file_names(path), data_files(path)


# ---------------------------------------------------------------------------------------------
# Non-deterministic conditions and values: refused before anything is written
# ---------------------------------------------------------------------------------------------

def _nondeterministic_udf():
    from pyspark.sql import functions as F

    return F.udf(lambda i: i, "bigint").asNondeterministic()


REFUSALS = {
    # name: (call(spark, path), our class, Delta's statement or None when Delta accepts it)
    "update_condition_rand": (
        lambda spark, p: filecommit.update(spark, p, set={"v": "v + 1"}, condition="rand() < 0.5"),
        "INVALID_NON_DETERMINISTIC_EXPRESSIONS", "UPDATE {table} SET v = v + 1 WHERE rand() < 0.5"),
    "update_value_uuid": (
        lambda spark, p: filecommit.update(spark, p, set={"part": "uuid()"}, condition="id = 3"),
        "INVALID_NON_DETERMINISTIC_EXPRESSIONS", "UPDATE {table} SET part = uuid() WHERE id = 3"),
    "delete_rand": (
        lambda spark, p: filecommit.delete(spark, p, "id > 10 AND rand() < 0.5"),
        "INVALID_NON_DETERMINISTIC_EXPRESSIONS", "DELETE FROM {table} WHERE id > 10 AND rand() < 0.5"),
    "delete_python_udf": (
        lambda spark, p: filecommit.delete(spark, p, _nondeterministic_udf()("id") % 2 == 0),
        "INVALID_NON_DETERMINISTIC_EXPRESSIONS", None),
    "merge_on_rand": (
        lambda spark, p: filecommit.merge(_source(spark), p, "target.id = source.id AND rand() < 0.5")
        .when_matched_update({"v": "source.v"}).execute(),
        "DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED",
        "MERGE INTO {table} t USING (SELECT 3L AS id, 1L AS v) s ON t.id = s.id AND rand() < 0.5 "
        "WHEN MATCHED THEN UPDATE SET v = s.v"),
    "merge_clause_condition_rand": (
        lambda spark, p: filecommit.merge(_source(spark), p, "target.id = source.id")
        .when_matched_delete("rand() < 0.5").execute(),
        "DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED",
        "MERGE INTO {table} t USING (SELECT 3L AS id, 1L AS v) s ON t.id = s.id "
        "WHEN MATCHED AND rand() < 0.5 THEN DELETE"),
    "merge_insert_condition_udf": (
        lambda spark, p: filecommit.merge(_source(spark), p, "target.id = source.id")
        .when_not_matched_insert_all(_nondeterministic_udf()("source.id") > 0).execute(),
        "DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED", None),
    # Delta accepts a non-deterministic MERGE value; we refuse it: a row and its change rows are
    # separate expressions, so the table and its change feed would get different values.
    "merge_value_rand": (
        lambda spark, p: filecommit.merge(_source(spark), p, "target.id = source.id")
        .when_matched_update({"v": "CAST(rand() * 100 AS BIGINT)"}).execute(),
        "DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED", None),
}


def _source(spark):
    return spark.createDataFrame([(3, 1, "a"), (9999, 2, "b")], "id BIGINT, v BIGINT, part STRING")


@pytest.mark.parametrize("fixture", ["dv_cdf", "plain"])
@pytest.mark.parametrize("name", list(REFUSALS))
def test_non_deterministic_changes_are_refused_before_anything_is_written(spark, delta_spark, twin, name, fixture):
    from helpers import shared_mode

    if "udf" in name and shared_mode():
        pytest.skip("refused in shared mode: a Python UDF (FILECOMMIT_SHARED_MODE_REFUSED, docs/sharing.md)")
    ours, theirs, v0 = twin(fixture)
    call, condition, delta_statement = REFUSALS[name]
    before = _state(ours)
    with pytest.raises(PySparkException) as e:
        call(spark, ours)
    assert e.value.getCondition() == condition, str(e.value)
    assert e.value.getSqlState() == {"INVALID_NON_DETERMINISTIC_EXPRESSIONS": "42K0E",
                                     "DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED": "0AKDC"}[condition]
    assert _state(ours) == before, "no commit, no file"
    assert max(log_actions(ours)) == v0
    if delta_statement is not None and fixture == "plain":
        answer = delta_spark.read_one({"kind": "sql", "sql": delta_statement, "path": theirs})
        assert not answer["ok"] and answer["condition"] == condition, answer


# ---------------------------------------------------------------------------------------------
# One decision per row: the rows marked in the new DVs are the rows rewritten
# ---------------------------------------------------------------------------------------------

# current_timestamp() is one value per query; between two queries it moves, and so does this
# condition's answer for about half of the rows (997 is prime: no clock resolution hides a move).
MOVING = "(id + unix_micros(current_timestamp())) % 997 < 498"


def _newly_marked(path, state_before, version):
    """Rows the commit ``version`` marked, from the raw log alone: per removed (path, DV) pair, its
    live rows before minus the live rows of the file's new add (none: the file left whole)."""
    def live(add):
        return json.loads(add["stats"])["numRecords"] - (add.get("deletionVector") or {}).get("cardinality", 0)

    actions = log_actions(path)[version]
    adds = {a["add"]["path"]: a["add"] for a in actions if "add" in a}
    total = 0
    for rm in (a["remove"] for a in actions if "remove" in a):
        total += live(state_before[(rm["path"], dv_id(rm.get("deletionVector")))]) - (
            live(adds[rm["path"]]) if rm["path"] in adds else 0)
    return total


def test_update_with_current_timestamp_rewrites_exactly_the_rows_it_marks(spark, delta_spark, twin):
    ours, _, v0 = twin("dv_cdf")
    before = delta_rs_query(ours)
    state = log_state(ours)["active"]
    r = filecommit.update(spark, ours, set={"v": "-v - 1"}, condition=MOVING)
    assert r.committed and r.version == v0 + 1

    n = r.metrics.num_updated_rows
    assert 0 < n < len(before)
    # The rows marked in the new DVs minus the rows of the new files = rows updated (rows moved).
    written = sum(json.loads(a.stats)["numRecords"] for a in r.add_files if a.deletion_vector is None)
    assert _newly_marked(ours, state, v0 + 1) == n == written

    for reader, (table, feed) in {
        "delta-rs": (delta_rs_query(ours), None),
        "Spark + Delta": spark_delta_table_and_feed(delta_spark, ours, v0 + 1),
    }.items():
        assert len(table) == len(before), f"{reader}: row count changed"
        assert table["id"].is_unique and set(table["id"]) == set(before["id"]), f"{reader}: each id exactly once"
        merged = before.merge(table, on="id", suffixes=("_before", "_after"))
        updated = merged[merged["v_before"] != merged["v_after"]]
        assert len(updated) == n, f"{reader}: {len(updated)} rows changed, {n} marked"
        assert (updated["v_after"] == -updated["v_before"] - 1).all()
        if feed is not None:
            assert (feed["_change_type"] == "update_preimage").sum() == n
            pre = set(feed[feed["_change_type"] == "update_preimage"]["id"])
            assert pre == set(feed[feed["_change_type"] == "update_postimage"]["id"]) == set(updated["id"])


def test_delete_with_current_timestamp_writes_a_change_row_for_exactly_the_rows_it_marks(spark, delta_spark, twin):
    ours, _, v0 = twin("dv_cdf")
    before = delta_rs_query(ours)
    r = filecommit.delete(spark, ours, MOVING)
    assert r.committed and r.cdc_files
    table, feed = spark_delta_table_and_feed(delta_spark, ours, v0 + 1)
    gone = set(before["id"]) - set(table["id"])
    assert len(gone) == r.metrics.num_deleted_rows == len(before) - len(table) > 0
    assert set(delta_rs_query(ours)["id"]) == set(table["id"])
    assert (feed["_change_type"] == "delete").all()
    assert sorted(feed["id"]) == sorted(gone), "the delete change rows are the deleted rows"


# ---------------------------------------------------------------------------------------------
# DV files: one per task, named with the command's token, none left by a command that fails
# ---------------------------------------------------------------------------------------------

def _dv_files(path):
    return sorted(f for f in os.listdir(path) if f.startswith("deletion_vector_"))


def test_dv_files_carry_the_commands_token_and_readers_agree(spark, delta_spark, twin):
    ours, theirs, v0 = twin("dv_cdf")
    old = set(_dv_files(ours))
    r = filecommit.delete(spark, ours, "id % 4 = 1 OR v > 5900")
    new = sorted(set(_dv_files(ours)) - old)
    assert new and len(new) <= 4, f"one DV file per task (4 shuffle partitions): {new}"
    tokens = {re.match(r"deletion_vector_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4})-", f).group(1) for f in new}
    assert len(tokens) == 1, f"every DV file of one command starts with its token: {new}"
    assert all(a.deletion_vector.storage_type == "u" for a in r.add_files)
    # Our DVs on files that already had Delta's, then a second change reading through ours.
    filecommit.update(spark, ours, set={"v": "v + 1"}, condition="id % 5 = 0")
    for statement in ("DELETE FROM {table} WHERE id % 4 = 1 OR v > 5900",
                      "UPDATE {table} SET v = v + 1 WHERE id % 5 = 0"):
        assert delta_spark.read_one({"kind": "sql", "sql": statement, "path": theirs})["ok"]
    expected = spark_delta_table_and_feed(delta_spark, theirs)
    pd.testing.assert_frame_equal(spark_delta_table_and_feed(delta_spark, ours), expected)
    pd.testing.assert_frame_equal(delta_rs_query(ours), expected)
    assert max(log_actions(ours)) == v0 + 2


def test_update_failing_after_its_dvs_were_written_leaves_no_dv_file(spark, delta_spark, twin):
    ours, theirs, _ = twin("dv_check")
    before = _state(ours)
    with pytest.raises(PySparkException) as e:
        filecommit.update(spark, ours, set={"v": "v * 1000"}, condition="id % 2 = 0")
    assert e.value.getCondition() == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
    assert _state(ours) == before, "the DV files of pass 1 and the data files of pass 2 are deleted"
    answer = delta_spark.read_one({"kind": "sql", "sql": "UPDATE {table} SET v = v * 1000 WHERE id % 2 = 0",
                                   "path": theirs})
    assert not answer["ok"] and answer["condition"] == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"


def test_tables_that_filecommit_makes_take_deletion_vectors_by_property(spark, delta_spark, tmp_path):
    """``delta.enableDeletionVectors=true`` on a new table, or set on an existing one, adds the
    ``deletionVectors`` reader and writer features; DELETE then marks rows in DVs and both readers
    agree."""
    rows = ROWS[:90]
    new, upgraded = str(tmp_path / "new"), str(tmp_path / "upgraded")
    df = spark.createDataFrame(rows, "id long, v long, part string")
    filecommit.write(df, new, partition_by=["part"], table_properties={"delta.enableDeletionVectors": "true"})
    filecommit.write(df, upgraded, partition_by=["part"])
    before = log_state(upgraded)["protocol"]
    assert "readerFeatures" not in before
    filecommit.set_table_properties(spark, upgraded, {"delta.enableDeletionVectors": "true"})
    for path in (new, upgraded):
        protocol = log_state(path)["protocol"]
        assert protocol["minReaderVersion"] == 3 and protocol["minWriterVersion"] == 7
        assert "deletionVectors" in protocol["readerFeatures"] and "deletionVectors" in protocol["writerFeatures"]
        r = filecommit.delete(spark, path, "id % 5 = 0")
        assert r.committed and all(a.deletion_vector is not None for a in r.add_files)
        assert not [f for f in r.remove_files if f.path not in {a.path for a in r.add_files}], \
            "a DV delete keeps the files and marks rows"
        expect = sorted(i for i, _v, _p in rows if i % 5 != 0)
        assert sorted(delta_rs_query(path)["id"].tolist()) == expect
        assert sorted(spark_delta_table_and_feed(delta_spark, path)["id"].tolist()) == expect
