"""Writing into Delta tables that another writer made (real delta-spark 4.4.0 on Spark 4.2.0): the
fixtures are what they claim to be; cleaned-up logs, checkpoints, deletion vectors, column mapping,
appendOnly, the change data feed, in-commit timestamps, v2 checkpoints, and writer features filecommit
cannot honour.

Every test writes into its own copy of a fixture table (``tests/foreign_tables.py``) and checks the
outcome with Spark + Delta (and delta-rs where it can read the table): the expected rows are the
fixture's rows as Spark + Delta read them before, plus the rows the test appended; a refused write
must carry the error class and leave the table's version, rows, log and files as they were.
Constraints, generated and identity columns are in ``tests/test_foreign_constraints.py``.
"""

from __future__ import annotations

import json
import os
from urllib.parse import unquote

import pytest
from delta_tables import commit_versions
from foreign_tables import (
    APPEND_ONLY,
    FIXTURES,
    UNSUPPORTED,
    append_lands,
    assert_delta_refuses_too,
    assert_delta_rs_reads,
    assert_frames,
    assert_refused,
    assert_spark_reads,
    plain_dicts_frame,
    records,
)
from helpers import checkpoint_versions, dv_id, log_actions, log_state
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow


# ---------------------------------------------------------------------------------------------
# The fixtures are what they claim to be
# ---------------------------------------------------------------------------------------------

def test_fixture_protocols(foreign):
    """Each fixture's protocol (as Spark + Delta describes it) lists the feature the tests exercise,
    so no test below passes on a table that lacks it."""
    problems = []
    for name, f in FIXTURES.items():
        m = foreign[name]
        if not m["ok"]:
            problems.append(f"{name}: not made: {m['error']}")
            continue
        print(f"{name}: reader {m['detail']['minReaderVersion']} writer {m['detail']['minWriterVersion']} "
              f"tableFeatures {m['detail']['tableFeatures']} log protocol {m['protocol']}")
        if f["feature"] and f["feature"] not in (m["detail"]["tableFeatures"] or []):
            problems.append(f"{name}: {f['feature']} not in {m['detail']['tableFeatures']}")
    assert not problems, problems
    # The cleaned-up log: commits 0-19 gone, checkpoints 10 and 20 and _last_checkpoint kept.
    cleaned = foreign["cleaned"]["path"]
    assert commit_versions(cleaned) == list(range(20, 26))
    assert checkpoint_versions(cleaned) == [10, 20]
    with open(os.path.join(cleaned, "_delta_log", "_last_checkpoint")) as fh:
        assert json.load(fh)["version"] == 20
    # The DV fixture has live deletion vectors on files that still hold rows.
    dvs = [a for a in log_state(foreign["dv"]["path"])["active"].values() if a.get("deletionVector")]
    assert len(dvs) == 2, dvs
    # Column mapping: logical names differ from the physical ones.
    for name in ("cm_name", "cm_id"):
        fields = json.loads(log_state(foreign[name]["path"])["metaData"]["schemaString"])["fields"]
        assert all(f["metadata"].get("delta.columnMapping.physicalName") not in (None, f["name"]) for f in fields)


# ---------------------------------------------------------------------------------------------
# Cleaned-up log (checkpoints, no early commits)
# ---------------------------------------------------------------------------------------------

def test_append_to_a_table_with_a_cleaned_up_log(spark, delta_spark, clone):
    t = clone("cleaned")
    assert t.version == 25 and len(t.rows) == 25
    append_lands(spark, delta_spark, t, [(101, "x"), (102, "y")], "id long, name string")


def test_our_checkpoint_on_a_table_delta_spark_made(spark, delta_spark, clone):
    """Appends up to version 30 leave our checkpoint there, next to Delta's; with every commit
    before 30 deleted, Spark + Delta and delta-rs read the table from our checkpoint."""
    t = clone("cleaned")
    added = []
    for i in range(t.version + 1, 31):
        row = (1000 + i, f"v{i}")
        assert filecommit.write(spark.createDataFrame([row], "id long, name string"), t.path).version == i
        added.append(row)
    assert checkpoint_versions(t.path, wait_for=[30]) == [10, 20, 30]
    with open(os.path.join(t.path, "_delta_log", "_last_checkpoint")) as fh:
        assert json.load(fh)["version"] == 30
    from delta_tables import drop_commits_before

    drop_commits_before(t.path, 30)
    assert commit_versions(t.path) == [30]
    expected = t.frame(records(added, ["id", "name"]))
    assert_spark_reads(delta_spark, t.path, expected, t.columns, 30)
    assert_delta_rs_reads(t.path, expected, t.columns, t.delta_rs)


# ---------------------------------------------------------------------------------------------
# Deletion vectors
# ---------------------------------------------------------------------------------------------

def test_deletion_vectors_append(spark, delta_spark, clone):
    t = clone("dv")
    assert sorted(r["id"] for r in t.rows) == [1, 3, 4, 6, 7, 9]  # the fixture's DVs are in force
    append_lands(spark, delta_spark, t, [(10, "a"), (11, "c")], "id long, part string")


@pytest.mark.parametrize("where", ["part = 'a'", None], ids=["replace_where", "full_overwrite"])
def test_deletion_vectors_overwrite_removes_carry_the_dv(spark, delta_spark, clone, where):
    """The removes of an overwrite name the logical files (path + DV) that are active, so the
    replaced files are gone and deleted rows of the kept files stay deleted."""
    t = clone("dv")
    before = log_state(t.path)
    new = [(20, "a"), (21, "a")]
    options = {"replaceWhere": where} if where else None
    r = filecommit.write(spark.createDataFrame(new, "id long, part string"), t.path, mode="overwrite",
                         options=options)
    assert r.version == t.version + 1
    kept = [row for row in t.rows if where and row["part"] != "a"]
    expected = plain_dicts_frame(kept + records(new, ["id", "part"]), t.columns)
    assert_spark_reads(delta_spark, t.path, expected, t.columns, t.version + 1)
    assert_delta_rs_reads(t.path, expected, t.columns, t.delta_rs)

    # Raw log: exactly the replaced logical files are removed, each remove with its file's DV.
    removes = [a["remove"] for a in log_actions(t.path)[t.version + 1] if "remove" in a]
    removed = {(unquote(x["path"]), dv_id(x.get("deletionVector"))) for x in removes}
    replaced = {(unquote(p), d) for (p, d), add in before["active"].items()
                if where is None or add["partitionValues"].get("part") == "a"}
    assert removed == replaced
    assert any(d for _, d in replaced), "the replaced files include one with a deletion vector"


# ---------------------------------------------------------------------------------------------
# Column mapping
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,columns", [("cm_name", ["id", "label", "part"]), ("cm_id", ["id", "name", "region"])])
def test_column_mapping_append_lands_or_is_refused_cleanly(spark, delta_spark, clone, name, columns):
    """Under the logical (renamed) names. Refusing the table by name is acceptable; landing rows that
    read back wrong (nulls under physical names, lost partition values) is not."""
    t = clone(name)
    assert sorted(t.columns) == sorted(columns)
    rows = [(3, "c", "x"), (4, "d", "z")]
    schema = ", ".join(f"{c} {'long' if c == 'id' else 'string'}" for c in columns)
    try:
        r = filecommit.write(spark.createDataFrame(rows, schema), t.path, mode="append")
    except Exception as e:  # noqa: BLE001 - checked: must be the clean refusal
        assert_refused(e, UNSUPPORTED, t, delta_spark, names=["columnMapping"])
        return
    assert r.version == t.version + 1
    expected = t.frame(records(rows, columns), columns)
    assert_spark_reads(delta_spark, t.path, expected, columns, t.version + 1)
    assert_delta_rs_reads(t.path, expected, columns, t.delta_rs)


# ---------------------------------------------------------------------------------------------
# appendOnly
# ---------------------------------------------------------------------------------------------

def test_append_only_table_takes_appends(spark, delta_spark, clone):
    append_lands(spark, delta_spark, clone("append_only"), [(3, "c")], "id long, name string")


def test_append_only_table_refuses_overwrite(spark, delta_spark, clone):
    t = clone("append_only")
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c")], "id long, name string"), t.path, mode="overwrite")
    assert_refused(e.value, APPEND_ONLY, t, delta_spark)
    assert_delta_refuses_too(delta_spark, clone("append_only", "_delta"), ["id", "name"], [(3, "c")], APPEND_ONLY,
                             overwrite=True)


# ---------------------------------------------------------------------------------------------
# Change data feed
# ---------------------------------------------------------------------------------------------

def test_append_to_a_cdf_table_shows_as_inserts(spark, delta_spark, clone):
    t = clone("cdf")
    rows = [(3, "c", "x"), (4, "d", "w")]
    r = append_lands(spark, delta_spark, t, rows, "id long, name string, part string")
    feed = delta_spark.read_one({"path": t.path, "kind": "cdf", "startingVersion": r.version,
                                 "endingVersion": r.version})
    assert feed["ok"], feed.get("detail")
    cols = ["id", "name", "part", "_change_type", "_commit_version"]
    expected = plain_dicts_frame(records([(*row, "insert", r.version) for row in rows], cols), cols)
    assert_frames(plain_dicts_frame(feed["rows"], cols), expected, "Spark + Delta change feed")


def test_append_to_an_in_commit_timestamp_table(spark, delta_spark, clone):
    t = clone("ict")
    before = _commit_info(t.path, t.version)
    r = append_lands(spark, delta_spark, t, [(3, "c")], "id long, name string")
    with open(os.path.join(t.path, "_delta_log", f"{r.version:020d}.json")) as fh:
        first = json.loads(fh.readline())
    assert "commitInfo" in first, "commitInfo is the first action of an in-commit-timestamp commit"
    assert first["commitInfo"]["inCommitTimestamp"] > before["inCommitTimestamp"]


def test_append_to_a_v2_checkpoint_table_across_a_checkpoint(spark, delta_spark, clone):
    """Kernel reads the table from Delta's v2 checkpoint; our appends (one of them at a checkpoint
    version, interval 2, so a checkpoint is written or skipped) read back exactly with Spark + Delta."""
    t = clone("v2_checkpoint")
    assert t.version == 3 and len(t.rows) == 3
    added = []
    for i, row in enumerate([(10, "x"), (11, "y")]):
        r = filecommit.write(spark.createDataFrame([row], "id long, name string"), t.path)
        assert r.version == t.version + 1 + i
        added.append(row)
    expected = t.frame(records(added, ["id", "name"]))
    assert_spark_reads(delta_spark, t.path, expected, t.columns, t.version + 2)


def _commit_info(path, version):
    with open(os.path.join(path, "_delta_log", f"{version:020d}.json")) as fh:
        for line in fh:
            action = json.loads(line)
            if "commitInfo" in action:
                return action["commitInfo"]
    raise AssertionError(f"no commitInfo in version {version}")


# ---------------------------------------------------------------------------------------------
# Features filecommit cannot honour
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["append", "overwrite"])
@pytest.mark.parametrize("name", ["variant"])
def test_unsupported_writer_feature_is_refused_by_name(spark, delta_spark, clone, name, mode):
    t = clone(name)
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c")], "id long, name string"), t.path, mode=mode)
    assert_refused(e.value, UNSUPPORTED, t, delta_spark, names=[FIXTURES[name]["feature"]])
