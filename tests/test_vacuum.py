"""VACUUM against Delta Lake on Spark: the same dry-run list on copies of the same Delta-made table,
time travel inside the retention window intact, staged files kept, short retentions refused.

Tables are made by real delta-spark (``.venv-delta``); results are read by Spark + Delta and by
delta-rs (its DataFusion scan applies deletion vectors). The server keeps its default retention
floor (168 hours): instead of a zero retention, tables are aged (:func:`_age_table`).
"""

from __future__ import annotations

import glob
import json
import os
import time

import pandas as pd
import pyarrow as pa
import pytest
from helpers import delta_table, exists, is_s3, s3_dir, twin_copier, upload_table, values_sql
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

ROWS = [(i, i * 10, "abc"[i % 3]) for i in range(1, 91)]


FIXTURES = {"churned": [{"sql": s} for s in (
    "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
    "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true', "
    "'delta.deletedFileRetentionDuration' = 'interval 0 hours')",
    f"INSERT INTO {{table}} VALUES {values_sql(ROWS[:30])}",
    f"INSERT INTO {{table}} VALUES {values_sql(ROWS[30:60])}",
    f"INSERT INTO {{table}} VALUES {values_sql(ROWS[60:])}",
    "DELETE FROM {table} WHERE id % 7 = 0",
    "UPDATE {table} SET v = -v WHERE id % 11 = 0",
    "DELETE FROM {table} WHERE id % 13 = 0",
    "OPTIMIZE {table}",
    "DELETE FROM {table} WHERE part = 'c'",
)]}


def _age_table(root, days):
    """Makes the table look ``days`` older: every file outside ``_delta_log`` gets that much older
    and so does every ``remove.deletionTimestamp`` of its JSON commits (Hadoop's checksum sidecars
    of the edited commits are dropped)."""
    shift = days * 86_400
    for d, _, files in os.walk(root):
        if os.path.relpath(d, root).split(os.sep)[0] == "_delta_log":
            continue
        for f in files:
            p = os.path.join(d, f)
            t = os.stat(p).st_mtime - shift
            os.utime(p, (t, t))
    for commit in glob.glob(os.path.join(root, "_delta_log", "*.json")):
        with open(commit) as fh:
            actions = [json.loads(line) for line in fh if line.strip()]
        if not any("remove" in a for a in actions):
            continue
        for a in actions:
            if "remove" in a and a["remove"].get("deletionTimestamp") is not None:
                a["remove"]["deletionTimestamp"] -= shift * 1000
        with open(commit, "w") as fh:
            fh.write("".join(json.dumps(a) + "\n" for a in actions))
        sidecar = os.path.join(os.path.dirname(commit), "." + os.path.basename(commit) + ".crc")
        if os.path.exists(sidecar):
            os.remove(sidecar)


def _rel(root, files):
    if is_s3(root):
        return {f.removeprefix(root.rstrip("/") + "/") for f in files}
    root = os.path.realpath(root)
    out = set()
    for f in files:
        p = f[5:] if f.startswith("file:") else f
        out.add(os.path.relpath(os.path.realpath(p), root))
    return out


def _delta_rs_ids(path):
    from deltalake import QueryBuilder

    got = QueryBuilder().register("t", delta_table(path)).execute("SELECT id FROM t").read_all()
    return sorted(pa.table(got).to_pandas()["id"].tolist())


@pytest.mark.parametrize("where", ["local", "s3"])
def test_dry_run_lists_what_delta_lists_and_vacuum_keeps_the_table(spark, delta_spark, made, tmp_path, request, where):
    """On s3a:// (objects cannot be made to look old) our copy is uploaded after aging and vacuumed
    with retention 0 by the second server (``s3_peer``, no retention floor): the same files are
    past the retention window as on the aged local twins with Delta's 168 hours."""
    ours, theirs, version = twin_copier(made, tmp_path)("churned")
    for root in (ours, theirs):
        # Debris Delta's VACUUM deletes, and hidden files it never touches.
        with open(os.path.join(root, "part=a", "stray.parquet"), "wb") as f:
            f.write(b"not referenced")
        os.makedirs(os.path.join(root, "_tmp"), exist_ok=True)
        with open(os.path.join(root, "_tmp", "x"), "w") as f:
            f.write("hidden")
        with open(os.path.join(root, ".hidden"), "w") as f:
            f.write("hidden")
        _age_table(root, 9)
    retention = 168
    if where == "s3":
        ours = upload_table(ours, f"{s3_dir()}/churned_ours")
        spark, retention = request.getfixturevalue("s3_peer").spark, 0
    delta = delta_spark.read_one({"kind": "sql", "sql": "VACUUM {table} RETAIN 168 HOURS DRY RUN", "path": theirs})
    assert delta["ok"], delta.get("error")
    theirs_list = _rel(theirs, [r["path"] for r in delta["rows"]])
    dry = filecommit.vacuum(spark, ours, retention_hours=retention, dry_run=True)
    assert dry.dry_run and dry.files
    assert _rel(ours, dry.files) == theirs_list
    assert "part=a/stray.parquet" in theirs_list and not any(p.startswith(("_tmp", ".hidden")) for p in theirs_list)
    before = delta_spark.read_one({"path": ours, "kind": "table"})
    done = filecommit.vacuum(spark, ours, retention_hours=retention)
    assert not done.dry_run and _rel(ours, done.files) == theirs_list
    assert not any(exists(os.path.join(ours, p)) for p in theirs_list)
    assert exists(os.path.join(ours, "_tmp", "x")) and exists(os.path.join(ours, ".hidden"))
    after = delta_spark.read_one({"path": ours, "kind": "table"})
    assert after["version"] == version
    key = ["id", "v", "part"]
    assert pd.DataFrame(after["rows"])[key].sort_values("id").values.tolist() == \
        pd.DataFrame(before["rows"])[key].sort_values("id").values.tolist()
    assert _delta_rs_ids(ours) == sorted(r["id"] for r in before["rows"])
    assert filecommit.vacuum(spark, ours, retention_hours=168, dry_run=True).files == []
    assert filecommit.vacuum(spark, ours, dry_run=True).files == [], "default: max(table's 0 hours, floor)"


def test_time_travel_inside_the_retention_window_survives(spark, delta_spark, tmp_path):
    path = str(tmp_path / "t")
    df = spark.createDataFrame(ROWS, "id long, v long, part string")
    filecommit.write(df, path, partition_by=["part"])
    filecommit.write(df.where("id < 40"), path, mode="overwrite")
    filecommit.delete(spark, path, "id < 10")
    stray = os.path.join(path, "part=a", "old-stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"x")
    old = time.time() - 9 * 86_400
    os.utime(stray, (old, old))
    with pytest.raises(PySparkException) as e:
        filecommit.vacuum(spark, path, retention_hours=1)
    assert e.value.getCondition() == filecommit.errors.DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT  # the floor
    filecommit.set_table_properties(spark, path, {"delta.deletedFileRetentionDuration": "interval 8 days"})
    with pytest.raises(PySparkException) as e:
        filecommit.vacuum(spark, path, retention_hours=170)
    assert e.value.getCondition() == filecommit.errors.DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT  # the table's
    assert e.value.getMessageParameters()["configuredRetentionHours"] == "192.0"
    assert os.path.exists(stray)
    r = filecommit.vacuum(spark, path, retention_hours=192)
    assert _rel(path, r.files) == {"part=a/old-stray.parquet"}
    reads = delta_spark.read([{"path": path, "kind": "table", "version": v} for v in range(4)])
    assert all(x["ok"] for x in reads), [x.get("error") for x in reads]
    assert [len(x["rows"]) for x in reads] == [90, 39, 30, 30]
    assert filecommit.vacuum(spark, path).files == [], "the default retention keeps the removed files"


def test_staged_files_are_kept(spark, tmp_path):
    path = str(tmp_path / "t")
    df = spark.createDataFrame(ROWS[:20], "id long, v long, part string")
    filecommit.write(df, path, partition_by=["part"])
    staged = filecommit.write(df, path, mode="overwrite", stage=True)
    staged_paths = {f.path for f in staged.add_files}
    _age_table(path, 9)
    r = filecommit.vacuum(spark, path)
    assert not staged_paths & _rel(path, r.files)
    assert all(os.path.exists(os.path.join(path, p)) for p in staged_paths)
    published = filecommit.commit(spark, path, staged)
    assert published.committed
    _age_table(path, 9)
    r = filecommit.vacuum(spark, path, dry_run=True)
    assert not staged_paths & _rel(path, r.files)
    assert _rel(path, r.files) == {f.path for f in published.remove_files}, "only the files the overwrite removed"
    with pytest.raises(PySparkException) as e:
        filecommit.vacuum(spark, str(tmp_path / "none"))
    assert e.value.getCondition() == filecommit.errors.DELTA_MISSING_DELTA_TABLE
