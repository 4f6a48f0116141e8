"""Write, audit, publish: staged commits change nothing readers see until published, publish as one
version with Delta's conflict rules, exactly once, from any client; abort and expiry leave no file.

Every table state is read by delta-rs and by Spark + Delta (``.venv-delta``), never by our code;
the Delta-made fixture is made by real delta-spark. Error paths match on error classes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_tables import commit_versions
from helpers import (
    STAGING_COLUMNS,
    STAGING_ROWS,
    canonical,
    data_files,
    delta_rows,
    error_class,
    exists,
    is_s3,
    log_actions,
    make_fixture_tables,
    make_staging_table,
    on_s3,
    result_frame,
    second_session,
    spark_delta_rows,
    staging_df,
    staging_frame,
)
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

BASE = STAGING_ROWS  # what make_staging_table writes by default


def _files_of(version_actions) -> dict:
    """kind -> sorted paths of a commit's (or staged commit's) file actions."""
    out: dict = {"add": [], "remove": [], "cdc": []}
    for a in version_actions:
        for kind in out:
            if kind in a:
                out[kind].append(a[kind]["path"])
    return {k: sorted(v) for k, v in out.items()}


def _staged_files(s) -> dict:
    return {"add": sorted(f.path for f in s.add_files), "remove": sorted(f.path for f in s.remove_files),
            "cdc": sorted(f.path for f in s.cdc_files)}




# Each staged command and the rows it leaves, from BASE (a staged replaceWhere is published in
# test_conflicts_follow_delta_rules).
OPS = {
    "append": (lambda spark, p: filecommit.write(staging_df(spark, [(100, "new", 1)]), p, stage=True),
               lambda rows: rows + [(100, "new", 1)]),
    "overwrite": (lambda spark, p: filecommit.write(staging_df(spark, [(7, "only", 0)]), p, mode="overwrite",
                                                    stage=True),
                  lambda rows: [(7, "only", 0)]),
    "delete": (lambda spark, p: filecommit.delete(spark, p, "id % 4 = 1", stage=True),
               lambda rows: [r for r in rows if r[0] % 4 != 1]),
    "update": (lambda spark, p: filecommit.update(spark, p, set={"v": "'upd'"}, condition="id < 5", stage=True),
               lambda rows: [(i, "upd" if i < 5 else v, part) for i, v, part in rows]),
    "merge": (lambda spark, p: filecommit.merge(staging_df(spark, [(1, "m1", 1), (500, "m500", 2)]), p,
                                                "target.id = source.id")
              .when_matched_update_all().when_not_matched_insert_all().execute(stage=True),
              lambda rows: [(i, "m1" if i == 1 else v, part) for i, v, part in rows] + [(500, "m500", 2)]),
}


def test_staged_commands_are_invisible_until_published(spark, delta_spark, tmp_path):
    checks = []
    for name, (stage, expect) in OPS.items():
        path = str(tmp_path / name)
        make_staging_table(spark, path)
        versions = commit_versions(path)
        staged = stage(spark, path)
        assert staged.id, name
        assert staged.read_version == versions[-1]
        assert staged.metrics.attempts == 0 and staged.expiration_time > staged.created_time, name
        # Nothing in the log: the same versions, delta-rs reads the same rows.
        assert commit_versions(path) == versions, name
        assert delta_rows(path).equals(staging_frame(BASE)), name
        result = filecommit.commit(spark, path, staged)
        assert result.committed and result.version == versions[-1] + 1, name
        assert delta_rows(path).equals(staging_frame(expect(list(BASE)))), name
        # The version's file actions are exactly the staged ones.
        assert _files_of(log_actions(path)[result.version]) == _staged_files(staged), name
        checks.append((name, path, result.version, staging_frame(expect(list(BASE)))))
    reads = []
    for _name, path, version, _rows in checks:
        reads += [{"path": path, "kind": "table"}, {"path": path, "kind": "cdf", "startingVersion": version,
                                                    "endingVersion": version}]
    got = delta_spark.read(reads)
    for i, (name, _path, version, rows) in enumerate(checks):
        table, cdf = got[2 * i], got[2 * i + 1]
        assert table["ok"] and cdf["ok"], (name, table.get("error"), cdf.get("error"))
        assert result_frame(table, STAGING_COLUMNS).equals(rows), name
        changes = pd.DataFrame(cdf["rows"], dtype=object)
        assert set(changes["_commit_version"]) <= {version}, name
        inserted = changes[changes["_change_type"].isin(["insert", "update_postimage"])]
        deleted = changes[changes["_change_type"].isin(["delete", "update_preimage"])]
        before, after = set(map(tuple, staging_frame(BASE).values.tolist())), set(map(tuple, rows.values.tolist()))
        got_in = set(map(tuple, canonical(inserted, STAGING_COLUMNS).values.tolist()))
        got_out = set(map(tuple, canonical(deleted, STAGING_COLUMNS).values.tolist()))
        # The change feed of the published version is the difference of the two table states.
        assert got_in - got_out == after - before, name
        assert got_out - got_in == before - after, name


def test_audit_reads_staged_rows_and_the_table_after(spark, tmp_path):
    path = str(tmp_path / "t")
    make_staging_table(spark, path)
    staged = filecommit.write(staging_df(spark, [(100, "new", 1), (101, "new", 2)]), path, stage=True)
    rows = filecommit.read_staged(spark, path, staged).toArrow()
    assert canonical(rows, STAGING_COLUMNS).equals(staging_frame([(100, "new", 1), (101, "new", 2)]))
    deleted = filecommit.delete(spark, path, "id < 10", stage=True)
    after = filecommit.read_staged(spark, path, [staged, deleted], table_after=True).toArrow()
    expect = [r for r in BASE if r[0] >= 10] + [(100, "new", 1), (101, "new", 2)]
    assert canonical(after, STAGING_COLUMNS).equals(staging_frame(expect))
    fetched = filecommit.get_staged(spark, path, deleted.id)
    assert _staged_files(fetched) == _staged_files(deleted)
    assert fetched.operation == "DELETE" and fetched.metrics.num_deleted_rows == 10
    assert delta_rows(path).equals(staging_frame(BASE))


@on_s3
def test_two_appends_and_a_delete_publish_as_one_version(spark, delta_spark, table_path):
    path = table_path
    make_staging_table(spark, path)
    a1 = filecommit.write(staging_df(spark, [(100, "a", 0)]), path, stage=True)
    a2 = filecommit.write(staging_df(spark, [(101, "b", 1)]), path, stage=True)
    d = filecommit.delete(spark, path, "part = 2", stage=True)
    before = commit_versions(path)
    result = filecommit.commit(spark, path, [a1, a2, d])
    assert result.committed and commit_versions(path) == before + [before[-1] + 1]
    expect = [r for r in BASE if r[2] != 2] + [(100, "a", 0), (101, "b", 1)]
    assert delta_rows(path).equals(staging_frame(expect))
    info = [a["commitInfo"] for a in log_actions(path)[result.version] if "commitInfo" in a][0]
    assert sorted(json.loads(info["operationParameters"]["stagedCommits"])) == sorted([a1.id, a2.id, d.id])
    table = delta_spark.read_one({"path": path, "kind": "table"})
    assert result_frame(table, STAGING_COLUMNS).equals(staging_frame(expect))


def test_publish_is_idempotent_and_works_from_another_client(spark, tmp_path):
    path = str(tmp_path / "t")
    make_staging_table(spark, path)
    staged = filecommit.write(staging_df(spark, [(100, "x", 1)]), path, stage=True)
    other = second_session(spark)
    try:
        fetched = filecommit.get_staged(other, path, staged.id)
        first = filecommit.commit(other, path, fetched.id)
    finally:
        other.stop()
    assert first.committed
    again = filecommit.commit(spark, path, staged)
    assert not again.committed and again.version == first.version
    assert commit_versions(path)[-1] == first.version
    assert delta_rows(path).equals(staging_frame(BASE + [(100, "x", 1)]))
    with pytest.raises(PySparkException) as e:
        filecommit.abort(spark, path, staged)
    assert error_class(e) == filecommit.errors.FILECOMMIT_STAGED_COMMIT_PUBLISHED


def test_conflicts_follow_delta_rules(spark, tmp_path):
    path = str(tmp_path / "serializable")
    make_staging_table(spark, path, props={"delta.isolationLevel": "Serializable"})
    staged = filecommit.write(staging_df(spark, [(300, "p0", 0)]), path, mode="overwrite",
                              options={"replaceWhere": "part = 0"}, stage=True)
    filecommit.write(staging_df(spark, [(301, "concurrent", 0)]), path)
    versions = commit_versions(path)
    with pytest.raises(PySparkException) as e:
        filecommit.commit(spark, path, staged)
    assert error_class(e) == filecommit.errors.DELTA_CONCURRENT_APPEND
    assert commit_versions(path) == versions

    # Under WriteSerializable (the default) a staged replaceWhere of another partition passes a
    # concurrent blind append, as a direct one would.
    path = str(tmp_path / "write_serializable")
    make_staging_table(spark, path)
    staged = filecommit.write(staging_df(spark, [(300, "p0", 0)]), path, mode="overwrite",
                              options={"replaceWhere": "part = 0"}, stage=True)
    filecommit.write(staging_df(spark, [(301, "concurrent", 1)]), path)
    assert filecommit.commit(spark, path, staged).committed
    expect = [r for r in BASE if r[2] != 0] + [(300, "p0", 0), (301, "concurrent", 1)]
    assert delta_rows(path).equals(staging_frame(expect))

    # A staged delete whose files were removed meanwhile (a whole-partition delete, no adds)
    # conflicts on the file it read, as Delta's rules order it.
    d = filecommit.delete(spark, path, "id = 1", stage=True)
    filecommit.delete(spark, path, "part = 1")
    with pytest.raises(PySparkException) as e:
        filecommit.commit(spark, path, d)
    assert error_class(e) == filecommit.errors.DELTA_CONCURRENT_DELETE_READ

    # Two staged commits that remove the same file are not one transaction.
    d1 = filecommit.delete(spark, path, "id = 2", stage=True)
    d2 = filecommit.delete(spark, path, "v = 'v2'", stage=True)
    versions = commit_versions(path)
    with pytest.raises(PySparkException) as e:
        filecommit.commit(spark, path, [d1, d2])
    assert error_class(e) == filecommit.errors.FILECOMMIT_STAGED_COMMITS_INCOMPATIBLE
    assert commit_versions(path) == versions


@on_s3
def test_abort_and_expiry_leave_no_file(spark, delta_spark, table_path):
    path = table_path
    make_staging_table(spark, path)
    files = data_files(path)
    staged = [filecommit.write(staging_df(spark, [(100, "x", 1), (101, "y", 2)]), path, stage=True),
              filecommit.update(spark, path, set={"v": "'u'"}, condition="id = 3", stage=True)]
    assert len(data_files(path)) > len(files)
    assert filecommit.abort(spark, path, staged) > 0
    assert data_files(path) == files
    assert filecommit.abort(spark, path, staged) == 0
    with pytest.raises(PySparkException) as e:
        filecommit.commit(spark, path, staged[0])
    assert error_class(e) == filecommit.errors.FILECOMMIT_STAGED_COMMIT_ABORTED

    pd.testing.assert_frame_equal(spark_delta_rows(delta_spark, path, ["id", "part", "v"]), staging_frame(BASE))

    # Expiry: a fresh table, so that the next staging command sweeps it at once.
    path = table_path + "_expiring"
    make_staging_table(spark, path)
    files = data_files(path)
    short = filecommit.write(staging_df(spark, [(100, "x", 1)]), path, stage=filecommit.Stage(expires_after_ms=500))
    assert short.expiration_time - short.created_time == 500
    time.sleep(1.0)
    with pytest.raises(PySparkException) as e:
        filecommit.commit(spark, path, short)
    assert error_class(e) == filecommit.errors.FILECOMMIT_STAGED_COMMIT_EXPIRED
    assert data_files(path) == files
    assert delta_rows(path).equals(staging_frame(BASE))

    with pytest.raises(PySparkException) as e:
        filecommit.commit(spark, path, "not-an-id")
    assert error_class(e) == filecommit.errors.FILECOMMIT_STAGED_COMMIT_NOT_FOUND
    with pytest.raises(PySparkException) as e:
        filecommit.write(staging_df(spark, [(1, "x", 1)]), path, stage=filecommit.Stage(expires_after_ms=10**12))
    assert error_class(e) == filecommit.errors.FILECOMMIT_INVALID_STAGE_EXPIRY


def test_staged_commit_survives_a_server_restart(spark, delta_spark, tmp_path):
    """Staged by this server, published by a new server process that knows only the storage."""
    path = str(tmp_path / "t")
    make_staging_table(spark, path)
    staged = filecommit.delete(spark, path, "part = 1", stage=True)
    script = textwrap.dedent(f"""
        import json, filecommit
        spark = filecommit.local_session()
        r = filecommit.commit(spark, {path!r}, {staged.id!r})
        print(json.dumps({{"version": r.version, "committed": r.committed}}))
        spark.stop()
    """)
    env = {k: v for k, v in os.environ.items()
           if k not in ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_AUTHENTICATE_TOKEN",
                        "SPARK_CONNECT_MODE_ENABLED")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    assert answer["committed"]
    expect = [r for r in BASE if r[2] != 1]
    table = delta_spark.read_one({"path": path, "kind": "table"})
    assert table["version"] == answer["version"]
    assert result_frame(table, STAGING_COLUMNS).equals(staging_frame(expect))


def _write_parquet(table, path):
    """pyarrow writes ``table`` to ``path``, a local file or an ``s3a://`` object (MinIO)."""
    if is_s3(path):
        import s3

        pq.write_table(table, path.removeprefix("s3a://"), filesystem=s3.ACTIVE.filesystem())
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table, path)


@on_s3
def test_files_written_by_pyarrow_are_staged_and_published(spark, delta_spark, table_path):
    path = table_path
    make_staging_table(spark, path)
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    _write_parquet(pa.table({"id": [1000, 1001], "v": ["p", "q"]}, schema=schema), f"{path}/part=1/ext-a.parquet")
    _write_parquet(pa.table({"id": [1002], "v": [None]}, schema=schema), f"{path}/loaded-b.parquet")
    versions = commit_versions(path)
    staged = filecommit.stage_files(spark, path, ["part=1/ext-a.parquet", ("loaded-b.parquet", {"part": "2"})])
    assert commit_versions(path) == versions
    adds = {f.path: f for f in staged.add_files}
    assert adds["part=1/ext-a.parquet"].partition_values == {"part": "1"}
    assert json.loads(adds["part=1/ext-a.parquet"].stats)["numRecords"] == 2
    assert filecommit.commit(spark, path, staged).committed
    expect = BASE + [(1000, "p", 1), (1001, "q", 1), (1002, None, 2)]
    assert delta_rows(path).equals(staging_frame(expect))
    table = delta_spark.read_one({"path": path, "kind": "table"})
    assert result_frame(table, STAGING_COLUMNS).equals(staging_frame(expect))
    # Aborting a staged commit of foreign files leaves them: the server did not write them.
    _write_parquet(pa.table({"id": [5], "v": ["z"]}, schema=schema), f"{path}/part=0/keep.parquet")
    kept = filecommit.stage_files(spark, path, ["part=0/keep.parquet"])
    assert filecommit.abort(spark, path, kept) == 0
    assert exists(f"{path}/part=0/keep.parquet")


@pytest.mark.parametrize("case", ["wrong_type", "extra_column", "outside_root", "missing", "in_log", "no_partition"])
def test_bad_foreign_files_are_refused(spark, tmp_path, case):
    path = str(tmp_path / "t")
    make_staging_table(spark, path)
    target = os.path.join(path, "part=1", "bad.parquet")
    files: list = ["part=1/bad.parquet"]
    good = pa.table({"id": pa.array([1], pa.int64()), "v": ["x"]})
    if case == "wrong_type":
        pq.write_table(pa.table({"id": ["not a long"], "v": ["x"]}), target)
    elif case == "extra_column":
        pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "v": ["x"], "w": [1]}), target)
    elif case == "outside_root":
        outside = str(tmp_path / "elsewhere.parquet")
        pq.write_table(good, outside)
        files = [outside]
    elif case == "in_log":
        pq.write_table(good, os.path.join(path, "_delta_log", "x.parquet"))
        files = [("_delta_log/x.parquet", {"part": "1"})]
    elif case == "no_partition":
        pq.write_table(good, os.path.join(path, "nopart.parquet"))
        files = ["nopart.parquet"]
    expected = {
        "wrong_type": filecommit.errors.DELTA_METADATA_MISMATCH,
        "extra_column": filecommit.errors.DELTA_METADATA_MISMATCH,
        "outside_root": filecommit.errors.FILECOMMIT_INVALID_STAGED_FILE,
        "missing": filecommit.errors.PATH_NOT_FOUND,
        "in_log": filecommit.errors.FILECOMMIT_INVALID_STAGED_FILE,
        "no_partition": filecommit.errors.FILECOMMIT_INVALID_STAGED_FILE,
    }[case]
    versions = commit_versions(path)
    with pytest.raises(PySparkException) as e:
        filecommit.stage_files(spark, path, files)
    assert error_class(e) == expected
    assert commit_versions(path) == versions
    assert not [f for f in os.listdir(os.path.join(path, "_delta_log")) if f == "_staged"] or \
        not [f for f in os.listdir(os.path.join(path, "_delta_log", "_staged")) if f.endswith(".json")]


DV_ROWS = [(i, i * 10, "abc"[i % 3]) for i in range(1, 301)]
DV_FIXTURE = {"dv": [
    {"sql": "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
            "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"},
    {"sql": "INSERT INTO {table} VALUES " + ", ".join(f"({i}, {v}, '{p}')" for i, v, p in DV_ROWS)},
]}


@pytest.fixture(scope="module")
def dv_table(delta_spark, tmp_path_factory, request):
    return make_fixture_tables(delta_spark, tmp_path_factory, request, DV_FIXTURE, "staging_dv")["dv"]


def test_staged_delete_with_deletion_vectors_on_a_delta_table(spark, delta_spark, dv_table):
    path = dv_table["path"]
    files = data_files(path)
    staged = filecommit.delete(spark, path, "id % 7 = 0", stage=True)
    assert staged.add_files and all(f.deletion_vector is not None for f in staged.add_files)
    before = delta_spark.read_one({"path": path, "kind": "table"})
    assert before["version"] == dv_table["version"] and len(before["rows"]) == len(DV_ROWS)
    # Aborting deletes the deletion vector files only, never the table's data files.
    assert filecommit.abort(spark, path, staged) >= 1
    assert data_files(path) == files
    staged = filecommit.delete(spark, path, "id % 7 = 0", stage=True)
    result = filecommit.commit(spark, path, staged)
    after = delta_spark.read_one({"path": path, "kind": "table"})
    assert after["version"] == result.version
    got = sorted(r["id"] for r in after["rows"])
    assert got == sorted(i for i, _v, _p in DV_ROWS if i % 7 != 0)
