"""Checkpoints of the tables we write: every ``delta.checkpointInterval`` commits (default 10) a write
leaves ``%020d.checkpoint.parquet`` and ``_last_checkpoint``, so readers need no commit before it.

Checked independently of our code: the checkpoint files with pyarrow against the JSON commits, and,
after deleting the JSON commits before the checkpoint (as log retention does), Spark + Delta (the
``delta_spark`` worker) and delta-rs read exactly the appended rows; a later write (our snapshot
from the checkpoint) lands at the next version.
"""

from __future__ import annotations

import json
import os
import shutil

import pandas as pd
import pytest
from delta_tables import commit_versions, drop_commits_before
from helpers import checkpoint_actions, checkpoint_versions, delta_rows, log_actions, result_frame, rows_frame, shared_dir
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

COLS = ["id", "name"]
SCHEMA = "id long, name string"
APPENDS = 25


def _row(i):
    return (i, f"n{i}")


def _expected(rows):
    return rows_frame(rows, COLS)


def _last_checkpoint(path):
    with open(os.path.join(path, "_delta_log", "_last_checkpoint")) as fh:
        return json.load(fh)


def _append_row(spark, path, i, **kw):
    return filecommit.write(spark.createDataFrame([_row(i)], SCHEMA), path, mode="append", **kw)


def assert_readers_see(delta_spark, path, rows, version):
    """Spark + Delta and delta-rs read exactly ``rows`` at latest version ``version``."""
    expected = _expected(rows)
    r = delta_spark.read_one({"path": path, "kind": "table"})
    assert r["ok"], f"Spark + Delta cannot read {path}: {r.get('detail') or r.get('error')}"
    got = result_frame(r, COLS)
    pd.testing.assert_frame_equal(got, expected, obj="Spark + Delta read")
    assert r["latest_version"] == version
    pd.testing.assert_frame_equal(delta_rows(path, COLS), expected, obj="delta-rs read")
    from deltalake import DeltaTable

    assert DeltaTable(path).version() == version


@pytest.fixture(scope="module")
def ours(delta_spark, spark, tmp_path_factory):
    """A table made by 25 single-row filecommit appends (versions 0..24), untouched afterwards.
    (``delta_spark`` first: its Spark starts while we write.)"""
    path = os.path.join(shared_dir(tmp_path_factory.mktemp("checkpoints")), "t")
    versions = [_append_row(spark, path, i).version for i in range(APPENDS)]
    checkpoint_versions(path, wait_for=[10, 20])  # written in the background after the answers
    return {"path": path, "versions": versions}


def test_appends_leave_checkpoints_every_10_commits(ours):
    path = ours["path"]
    assert ours["versions"] == list(range(APPENDS))
    assert checkpoint_versions(path, wait_for=[10, 20]) == [10, 20]
    assert _last_checkpoint(path)["version"] == 20


def test_last_checkpoint_size_counts_every_action(ours):
    """Protocol, "Last Checkpoint File Schema": ``size`` is the number of actions stored in the
    checkpoint (protocol and metaData included; Delta on Spark writes it so)."""
    last = _last_checkpoint(ours["path"])
    assert last["version"] == 20
    actions = checkpoint_actions(ours["path"], 20)
    adds = sum(1 for a in actions if "add" in a)
    assert last["size"] == len(actions), \
        f"_last_checkpoint size {last['size']}; the checkpoint holds {len(actions)} actions ({adds} add)"


@pytest.mark.parametrize("version", [10, 20])
def test_checkpoint_holds_the_table_state_of_its_version(ours, version):
    """Read with pyarrow: one protocol, the metadata, and exactly the files added by commits 0..v."""
    path = ours["path"]
    commits = log_actions(path)
    actions = checkpoint_actions(path, version)
    kinds = [next(iter(a)) for a in actions]
    assert kinds.count("protocol") == 1 and kinds.count("metaData") == 1, kinds
    meta = next(a["metaData"] for a in actions if "metaData" in a)
    first_meta = next(a["metaData"] for a in commits[0] if "metaData" in a)
    assert meta["id"] == first_meta["id"] and json.loads(meta["schemaString"]) == json.loads(first_meta["schemaString"])
    proto = next(a["protocol"] for a in actions if "protocol" in a)
    first_proto = next(a["protocol"] for a in commits[0] if "protocol" in a)
    assert (proto["minReaderVersion"], proto["minWriterVersion"]) == \
        (first_proto["minReaderVersion"], first_proto["minWriterVersion"])
    added = sorted(a["add"]["path"] for v in range(version + 1) for a in commits[v] if "add" in a)
    assert sorted(a["add"]["path"] for a in actions if "add" in a) == added
    assert not any("commitInfo" in a for a in actions)


def test_readers_and_writer_after_log_cleanup(spark, delta_spark, ours, tmp_path):
    """JSON commits 0-19 deleted: both readers still read all 25 appends (from checkpoint 20), and a
    26th append (our snapshot from the checkpoint) lands at version 25."""
    path = os.path.join(shared_dir(tmp_path), "t")
    shutil.copytree(ours["path"], path)
    drop_commits_before(path, 20)
    assert commit_versions(path) == list(range(20, APPENDS))
    rows = [_row(i) for i in range(APPENDS)]
    assert_readers_see(delta_spark, path, rows, APPENDS - 1)

    r = _append_row(spark, path, APPENDS)
    assert r.version == APPENDS
    assert_readers_see(delta_spark, path, [*rows, _row(APPENDS)], APPENDS)


def test_checkpoint_interval_table_property(spark, delta_spark, table_path):
    """``delta.checkpointInterval=3``: checkpoints at 3 and 6 after 7 appends; readable from 6 alone."""
    versions = [_append_row(spark, table_path, 0, table_properties={"delta.checkpointInterval": "3"}).version]
    versions += [_append_row(spark, table_path, i).version for i in range(1, 7)]
    assert versions == list(range(7))
    assert checkpoint_versions(table_path, wait_for=[3, 6]) == [3, 6]
    assert _last_checkpoint(table_path)["version"] == 6
    drop_commits_before(table_path, 6)
    assert commit_versions(table_path) == [6]
    assert_readers_see(delta_spark, table_path, [_row(i) for i in range(7)], 6)


def test_checkpoint_of_a_table_with_declared_rules(spark, delta_spark, table_path):
    """A CHECK constraint and a NOT NULL column (rules Kernel's own checkpoint call refuses) survive
    in the checkpoint: with the commits before it deleted, Spark + Delta still sees and enforces them.
    (The constraint is on ``name``, so a null ``id`` breaks only the NOT NULL rule.)"""
    df = spark.range(1, 2).selectExpr("id", "CAST(nullif(id, 0) AS STRING) AS name")
    props = {"delta.checkpointInterval": "2", "delta.constraints.named": "name <> ''"}
    assert filecommit.write(df, table_path, table_properties=props).version == 0
    assert [_append_row(spark, table_path, i).version for i in (2, 3)] == [1, 2]
    assert checkpoint_versions(table_path, wait_for=[2]) == [2]
    drop_commits_before(table_path, 2)
    assert commit_versions(table_path) == [2]
    assert_readers_see(delta_spark, table_path, [(1, "1"), _row(2), _row(3)], 2)

    reads = delta_spark.read([
        {"path": table_path, "kind": "detail"},
        {"path": table_path, "kind": "sql", "sql": "SHOW TBLPROPERTIES {table}"},
        {"path": table_path, "kind": "sql", "sql": "INSERT INTO {table} VALUES (5, '')"},
        {"path": table_path, "kind": "sql", "sql": "INSERT INTO {table} VALUES (NULL, 'null')"},
    ])
    detail, props_read, neg, null = reads
    assert {f["name"]: f["nullable"] for f in detail["schema"]["fields"]} == {"id": False, "name": True}
    assert {r["key"]: r["value"] for r in props_read["rows"]}.get("delta.constraints.named") == "name <> ''"
    assert not neg["ok"] and neg["condition"] == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", neg
    assert not null["ok"] and null["condition"] == "DELTA_NOT_NULL_CONSTRAINT_VIOLATED", null
    # And our writer, from the checkpoint, still refuses a violation.
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(7, "")], SCHEMA), table_path)
    assert e.value.getCondition() == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
    assert commit_versions(table_path) == [2]
