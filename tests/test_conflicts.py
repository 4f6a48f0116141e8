"""Safe remote writes, end to end: Delta's conflict rules between concurrent writers, typed
conflict errors, no debris after failed writes, allowed roots.

Concurrent writers are real: several Spark Connect client sessions on one server, and delta-rs
(``optimize.compact``) as an independent compaction writer. Results are read back with delta-rs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from urllib.parse import unquote, urlparse

import pytest
from deltalake import DeltaTable
from helpers import delta_rows, error_class, log_actions, second_session
from pyspark.errors import PySparkException
from pyspark.sql.connect import functions as F

import filecommit

pytestmark = pytest.mark.slow


def _id_part_df(session, ids, part):
    return session.createDataFrame([(int(i), part) for i in ids], "id long, part string")


def _slow_rows(session, ids, part, sleep_ms):
    """Rows whose write job sleeps ``sleep_ms`` first (Java's Thread.sleep via reflect), so a
    concurrent writer commits in between, deterministically."""
    df = _id_part_df(session, ids, part).repartition(1)
    return df.withColumn("id", F.expr(f"id + 0 * length(coalesce(reflect('java.lang.Thread', 'sleep', "
                                      f"cast({sleep_ms} as bigint)), ''))"))




def _data_files(path):
    out = []
    for root, _dirs, files in os.walk(path):
        if "_delta_log" in root:
            continue
        out += [os.path.join(root, f) for f in files if f.endswith(".parquet")]
    return sorted(out)


def _table_files(path):
    """Absolute paths of the table's active files, as delta-rs lists them."""
    return sorted(os.path.realpath(unquote(urlparse(u).path)) if u.startswith("file:") else os.path.realpath(u)
                  for u in DeltaTable(path).file_uris())


def test_blind_appends_from_four_clients_land_through_compaction(spark, table_path):
    filecommit.write(_id_part_df(spark, range(0, 4), "a"), table_path, partition_by=["part"])
    for k in range(1, 4):
        filecommit.write(_id_part_df(spark, range(10 * k, 10 * k + 4), "a"), table_path)
    sessions = [spark] + [second_session(spark) for _ in range(3)]
    errors, results = [], []

    def client(i):
        try:
            for n in range(5):
                base = 1000 * (i + 1) + 10 * n
                results.append(filecommit.write(_id_part_df(sessions[i], range(base, base + 3), "a"), table_path))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    compactions = 0
    while any(t.is_alive() for t in threads):
        try:
            metrics = DeltaTable(table_path).optimize.compact()
            compactions += 1 if metrics.get("numFilesRemoved", 0) else 0
        except Exception:  # noqa: BLE001 - delta-rs' own conflict with our appends: try again
            pass
        time.sleep(0.05)
    for t in threads:
        t.join(timeout=300)
    for s in sessions[1:]:
        s.stop()
    assert not errors, errors
    extra = []
    if compactions == 0:  # the appends were faster than every try: compact once more, then append
        DeltaTable(table_path).optimize.compact()
        results.append(filecommit.write(_id_part_df(spark, [9999], "a"), table_path))
        extra = [9999]
    log = log_actions(table_path)
    # Group commit may publish several appends as one version: each append's files are in the
    # version it was told, and no file is reported twice.
    for r in results:
        in_commit = {a["add"]["path"] for a in log[r.version] if "add" in a}
        assert {a.path for a in r.add_files} <= in_commit, (r.version, r.add_files)
    reported = [a.path for r in results for a in r.add_files]
    assert len(reported) == len(set(reported)), reported
    compaction_commits = [v for v, acts in log.items()
                          if any("remove" in a and a["remove"]["dataChange"] is False for a in acts)]
    assert compaction_commits, "delta-rs committed a compaction (remove + add, dataChange=false)"
    expected = sorted(list(range(0, 4)) + [i for k in range(1, 4) for i in range(10 * k, 10 * k + 4)]
                      + [1000 * (i + 1) + 10 * n + j for i in range(4) for n in range(5) for j in range(3)]
                      + extra)
    got = sorted(int(x) for x in delta_rows(table_path, ["id"])["id"])
    assert got == expected


def _race(spark, slow, fast, wait):
    """Runs ``slow(spark)`` in a thread and, ``wait`` seconds later, ``fast(other)`` in a second
    session, which commits first. Returns (result of slow or None, result of fast, [errors of slow])."""
    other = second_session(spark)
    out, errors = {}, []

    def run_slow():
        try:
            out["slow"] = slow(spark)
        except Exception as e:  # noqa: BLE001 - reported to the caller
            errors.append(e)

    t = threading.Thread(target=run_slow)
    t.start()
    time.sleep(wait)
    try:
        out["fast"] = fast(other)
    finally:
        t.join(timeout=300)
        other.stop()
    return out.get("slow"), out["fast"], errors


def _read_version(table_path, version):
    """``commitInfo.readVersion`` of a commit, from the raw JSON log: a commit whose read version is
    older than its version's predecessor was judged against the commits in between (whether the
    server learnt of them by losing a race or knew them already)."""
    with open(os.path.join(table_path, "_delta_log", f"{version:020d}.json")) as fh:
        for line in fh:
            action = json.loads(line)
            if "commitInfo" in action:
                return action["commitInfo"].get("readVersion")
    return None


def _overwrite_a_while_appending(spark, table_path, ids, part):
    """A slow replaceWhere overwrite of partition A (rows 10, 11) in this session while a second
    session appends ``ids`` to ``part`` and commits first. Returns ({"o": overwrite result, "a":
    append result}, [errors of the overwrite])."""
    o, a, errors = _race(
        spark,
        lambda s: filecommit.write(_slow_rows(s, [10, 11], "A", 1500), table_path, mode="overwrite",
                                   options={"replaceWhere": "part = 'A'"}),
        lambda s: filecommit.write(_id_part_df(s, ids, part), table_path),
        0.3)
    return {"o": o, "a": a}, errors


@pytest.mark.refused_in_shared_mode("slows the write job with reflect('java.lang.Thread', 'sleep', ...)")
def test_overwrite_of_one_partition_and_append_to_another_both_land(spark, table_path):
    filecommit.write(_id_part_df(spark, [1, 2], "A").union(_id_part_df(spark, [3, 4], "B")), table_path,
                     partition_by=["part"])
    out, errors = _overwrite_a_while_appending(spark, table_path, [5], "B")
    assert not errors, errors
    assert out["a"].version == 1 and out["o"].version == 2, (out["a"].version, out["o"].version)
    assert _read_version(table_path, 2) == 0, "the overwrite read version 0 and was judged against version 1"
    got = delta_rows(table_path, ["id", "part"])
    assert sorted(zip(got["id"].astype(int), got["part"])) == [(3, "B"), (4, "B"), (5, "B"), (10, "A"), (11, "A")]


@pytest.mark.refused_in_shared_mode("slows the write job with reflect('java.lang.Thread', 'sleep', ...)")
@pytest.mark.parametrize("isolation", ["Serializable", "WriteSerializable"])
def test_overwrite_concurrent_with_append_to_the_same_partition(spark, table_path, isolation):
    filecommit.write(_id_part_df(spark, [1, 2], "A").union(_id_part_df(spark, [3], "B")), table_path,
                     partition_by=["part"], table_properties={"delta.isolationLevel": isolation})
    out, errors = _overwrite_a_while_appending(spark, table_path, [7], "A")
    assert out["a"].version == 1
    got = delta_rows(table_path, ["id", "part"])
    rows = sorted(zip(got["id"].astype(int), got["part"]))
    if isolation == "Serializable":
        # Delta's rule: the overwrite read partition A, and a file was added there since.
        assert len(errors) == 1, errors
        assert errors[0].getCondition() == "DELTA_CONCURRENT_APPEND"
        assert errors[0].getSqlState() == "2D521"
        assert DeltaTable(table_path).version() == 1, "the overwrite committed nothing"
        assert rows == [(1, "A"), (2, "A"), (3, "B"), (7, "A")]
        assert _data_files(table_path) == _table_files(table_path), "no debris of the failed overwrite"
    else:
        # WriteSerializable (Delta's default): a blind append is serialized after the overwrite.
        assert not errors, errors
        assert out["o"].version == 2
        assert rows == [(3, "B"), (7, "A"), (10, "A"), (11, "A")]


@pytest.mark.container
def test_failed_first_write_leaves_no_files_and_the_next_write_succeeds(spark, table_path):
    bad = spark.range(0, 40, 1, 4).select(
        F.when(F.col("id") == 39, F.raise_error(F.lit("boom"))).otherwise(F.col("id")).alias("id"))
    with pytest.raises(PySparkException):
        filecommit.write(bad, table_path)
    assert _data_files(table_path) == [], "no Parquet file of the failed job remains"
    r = filecommit.write(spark.range(0, 5), table_path)
    assert r.version == 0
    assert sorted(int(x) for x in delta_rows(table_path, ["id"])["id"]) == [0, 1, 2, 3, 4]


@pytest.mark.container
def test_failed_append_leaves_no_files(spark, table_path):
    filecommit.write(spark.range(0, 3), table_path)
    before = _data_files(table_path)
    bad = spark.range(0, 40, 1, 4).select(
        F.when(F.col("id") == 39, F.raise_error(F.lit("boom"))).otherwise(F.col("id")).alias("id"))
    with pytest.raises(PySparkException):
        filecommit.write(bad, table_path)
    assert _data_files(table_path) == before
    assert DeltaTable(table_path).version() == 0


@pytest.mark.skipif(bool(os.environ.get("FILECOMMIT_REMOTE")), reason="the remote server's allowedRoots are its own")
def test_relative_paths_resolve_against_the_first_allowed_root(spark):
    name = "filecommit-relative-" + uuid.uuid4().hex[:8]
    root = os.path.realpath(tempfile.gettempdir())
    try:
        r = filecommit.write(spark.range(2), name)
        assert urlparse(r.table_path).path.rstrip("/") == os.path.join(root, name)
        assert sorted(int(x) for x in delta_rows(os.path.join(root, name), ["id"])["id"]) == [0, 1]
        depth = len(root.strip("/").split("/"))
        with pytest.raises(PySparkException) as e:
            filecommit.write(spark.range(1), "../" * depth + "var/tmp/" + name)
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
    finally:
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)


@pytest.mark.skipif(bool(os.environ.get("FILECOMMIT_REMOTE")), reason="the remote server's allowedRoots are its own")
def test_paths_outside_allowed_roots_are_refused(spark, tmp_path):
    outside = tempfile.mkdtemp(prefix="filecommit-outside-", dir="/var/tmp")
    try:
        target = os.path.join(outside, "t")
        with pytest.raises(PySparkException) as e:
            filecommit.write(spark.range(1), target)
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
        assert not os.path.exists(target)
        depth = len(os.path.realpath(tmp_path).strip("/").split("/"))
        with pytest.raises(PySparkException) as e:
            filecommit.write(spark.range(1), str(tmp_path) + "/" + "../" * depth + outside.lstrip("/") + "/x")
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
        os.symlink(outside, tmp_path / "escape")
        with pytest.raises(PySparkException) as e:
            filecommit.write_batch(spark.range(1), str(tmp_path / "escape" / "sink"), batch_id=0)
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
        assert os.listdir(outside) == []
        assert filecommit.write(spark.range(2), str(tmp_path / "inside")).version == 0
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def _slow_plus_one():
    """``v + 1`` after a 3 s sleep per row, as a Python UDF: deterministic (a row-level change
    refuses non-deterministic values, such as ``reflect``, as Spark's UPDATE does), and evaluated
    only in the update's write job, so the concurrent delete commits first."""

    @F.udf("long")
    def slow_plus_one(v):
        import time

        time.sleep(3)
        return None if v is None else v + 1

    return slow_plus_one(F.col("v"))


def _update_a_while_deleting(spark, table_path, delete_condition):
    """A slow update of rows 1, 2 of partition A (each updated row sleeps 3 s in the write) in
    this session while a second session deletes ``delete_condition`` and commits first. Returns
    ({"u": update result, "d": delete result}, [errors of the update])."""
    u, d, errors = _race(
        spark,
        lambda s: filecommit.update(s, table_path, set={"v": _slow_plus_one()}, condition="part = 'A' AND id <= 2"),
        lambda s: filecommit.delete(s, table_path, delete_condition),
        1.0)
    return {"u": u, "d": d}, errors


def _ab_table(spark, table_path):
    rows = spark.createDataFrame([(i, "A" if i <= 4 else "B", 0) for i in range(1, 9)], "id long, part string, v long")
    filecommit.write(rows.repartition(1), table_path, partition_by=["part"])


@pytest.mark.refused_in_shared_mode("slows the write job with a Python UDF")
@pytest.mark.parametrize("delete, condition, left", [
    # The delete rewrites the file: a new file in the partition the update read (Delta checks this first).
    ("id = 4", "DELTA_CONCURRENT_APPEND", (1, 2, 3, 5, 6, 7, 8)),
    # The delete drops the whole file: a file the update read was removed.
    ("part = 'A'", "DELTA_CONCURRENT_DELETE_READ", (5, 6, 7, 8)),
])
def test_update_concurrent_with_a_delete_in_the_same_file_fails_without_debris(spark, table_path, delete, condition,
                                                                             left):
    _ab_table(spark, table_path)
    before = _data_files(table_path)
    out, errors = _update_a_while_deleting(spark, table_path, delete)
    assert out["d"].version == 1
    assert len(errors) == 1, f"the update must not land over a concurrent change of a file it read: {out}"
    assert errors[0].getCondition() == condition, errors[0]
    assert DeltaTable(table_path).version() == 1
    got = delta_rows(table_path, ["id", "part", "v"])
    assert sorted(zip(got["id"].astype(int), got["v"].astype(int))) == [(i, 0) for i in left]
    added_by_delete = [os.path.join(table_path, unquote(a.path)) for a in out["d"].add_files]
    assert _data_files(table_path) == sorted(before + added_by_delete), "no debris of the failed update"


@pytest.mark.refused_in_shared_mode("slows the write job with a Python UDF")
def test_updates_and_deletes_of_different_partitions_both_land(spark, table_path):
    _ab_table(spark, table_path)
    out, errors = _update_a_while_deleting(spark, table_path, "part = 'B' AND id > 6")
    assert not errors, errors
    assert out["d"].version == 1 and out["u"].version == 2
    assert _read_version(table_path, 2) == 0, "the update read version 0 and was judged against version 1"
    got = delta_rows(table_path, ["id", "part", "v"])
    assert sorted(zip(got["id"].astype(int), got["v"].astype(int))) == [(1, 1), (2, 1), (3, 0), (4, 0), (5, 0),
                                                                         (6, 0)]
