"""Conflicts for every read: a command that decides from what it read ("the table is empty", "no
row violates this constraint") records that read, so a commit that lands between its check and
its own commit is a conflict, never silently committed over.

* A CHECK constraint added to an existing table (``delta.constraints.<name>``, PROTOCOL.md "Check
  Constraints") records a read of the whole table, as Delta's constraint scan does: an append that
  lands between its check and its commit is ``DELTA_CONCURRENT_APPEND``, so the constraint never
  commits over rows that violate it.
* RESTORE's check that the files it re-adds exist is covered against a concurrent VACUUM by the
  server's registry of writes in flight: ``tests/test_retention_floor.py``
  (``test_restore_between_its_check_and_its_commit_keeps_its_files_from_vacuum``), next to the
  other in-flight protections it shares its machinery with.

The tables are judged by the raw log, delta-rs and Spark + Delta (the ``delta_spark`` fixture); the
race is made deterministic with the fault-injection jar's ``commit.hold`` point (``tests/faults.py``).
"""

from __future__ import annotations

import os

import pytest
from delta_tables import commit_versions
from fault_checks import check_log
from helpers import data_files, error_class, log_actions, race_held_commit
from pyspark.errors import PySparkException

import filecommit
from filecommit import errors

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("faults_available")]


CONSTRAINT = {"delta.constraints.v_positive": "v > 0"}
VIOLATING = [(1, "a", -10), (2, "b", -20)]


def _violating_rows_spark(delta_spark, table: str) -> int:
    res = delta_spark.read_one({"kind": "sql", "path": table,
                                "sql": "SELECT count(*) AS n FROM {table} WHERE NOT (v > 0)"})
    assert res["ok"], res
    return res["rows"][0]["n"]


def _latest_configuration(table: str) -> dict:
    conf: dict = {}
    for _, actions in sorted(log_actions(table).items()):
        for a in actions:
            if "metaData" in a:
                conf = a["metaData"].get("configuration") or {}
    return conf


def _empty_table(delta_spark, table: str) -> None:
    """Version 0, no rows and no files, made by Spark + Delta."""
    made = delta_spark.make([{"name": "empty", "path": table, "steps": [
        {"sql": "CREATE TABLE {table} (id BIGINT, part STRING, v BIGINT) USING delta"}]}])()["empty"]
    assert made["ok"], made
    assert commit_versions(table) == [0]
    assert data_files(table) == []


def test_add_constraint_racing_an_append_never_commits_over_violating_rows(spark, delta_spark, table_path):
    from deltalake import DeltaTable

    _empty_table(delta_spark, table_path)
    # The constraint's commit of version 1 is held by the store, after its check of the rows, until
    # an append of rows that violate it has landed as version 1.
    outcome, _appended = race_held_commit(
        table_path, 1, lambda: filecommit.set_table_properties(spark, table_path, CONSTRAINT),
        lambda: filecommit.write(spark.createDataFrame(VIOLATING, "id long, part string, v long"), table_path))
    assert "error" in outcome, f"the constraint committed over rows it never checked: {outcome}"
    assert error_class(outcome["error"]) == errors.DELTA_CONCURRENT_APPEND, str(outcome["error"]).splitlines()[0]

    check_log(table_path)
    assert commit_versions(table_path) == [0, 1]
    assert "delta.constraints.v_positive" not in _latest_configuration(table_path)
    # delta-rs and Spark + Delta: the rows are there, and no constraint is in force over them.
    dt = DeltaTable(table_path)
    assert "delta.constraints.v_positive" not in dt.metadata().configuration
    assert sorted(dt.to_pandas()["v"].tolist()) == [-20, -10]
    assert _violating_rows_spark(delta_spark, table_path) == 2
    detail = delta_spark.read_one({"kind": "sql", "path": table_path, "sql": "SHOW TBLPROPERTIES {table}"})
    assert detail["ok"], detail
    assert all(r.get("key") != "delta.constraints.v_positive" for r in detail["rows"]), detail["rows"]

    # Added again now, the check sees the rows: refused, nothing committed.
    with pytest.raises(PySparkException) as info:
        filecommit.set_table_properties(spark, table_path, CONSTRAINT)
    assert error_class(info.value) == errors.DELTA_NEW_CHECK_CONSTRAINT_VIOLATION, str(info.value).splitlines()[0]
    assert commit_versions(table_path) == [0, 1]


def test_add_constraint_on_an_empty_table_commits_and_is_enforced(spark, delta_spark, table_path):
    """The neighbour: with no race the constraint commits, and both readers see it in force."""
    from deltalake import DeltaTable

    _empty_table(delta_spark, table_path)
    result = filecommit.set_table_properties(spark, table_path, CONSTRAINT)
    assert result.committed and result.version == 1
    with pytest.raises(PySparkException) as info:
        filecommit.write(spark.createDataFrame(VIOLATING, "id long, part string, v long"), table_path)
    assert error_class(info.value) == errors.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, str(info.value).splitlines()[0]
    filecommit.write(spark.createDataFrame([(3, "a", 30)], "id long, part string, v long"), table_path)
    dt = DeltaTable(table_path)
    assert dt.metadata().configuration.get("delta.constraints.v_positive") == "v > 0"
    assert dt.to_pandas()["v"].tolist() == [30]
    assert _violating_rows_spark(delta_spark, table_path) == 0
    assert os.path.isdir(os.path.join(table_path, "_delta_log"))
