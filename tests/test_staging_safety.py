"""Staged files stay safe: a staged commit's files (given to ``stage_files``, or written by the
server: data, change data, deletion vectors) are kept by VACUUM because of the staged record, not
their age, until publish, abort or expiry, and the change data of a published one while its
version is inside the retention; publish commits only files that exist; a table path with a space
or ``%`` breaks neither VACUUM nor abort.

Every table state is read by delta-rs and by Spark + Delta (``.venv-delta``), never by our code.
Errors match on error classes.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_tables import commit_versions
from deltalake import DeltaTable
from helpers import (
    STAGING_COLUMNS,
    STAGING_ROWS,
    data_files,
    delta_rows,
    error_class,
    log_actions,
    make_fixture_tables,
    make_staging_table,
    result_frame,
    staging_df,
    staging_frame,
)
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

BASE = STAGING_ROWS  # what make_staging_table writes by default
NINE_DAYS_S = 9 * 24 * 3600
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _age_seconds(path: str, seconds: int = NINE_DAYS_S) -> None:
    """Sets a file's modification time ``seconds`` into the past (a file written that long ago)."""
    then = time.time() - seconds
    os.utime(path, (then, then))




def _both_read(delta_spark, path: str, rows) -> None:
    """delta-rs and Spark + Delta both read exactly ``rows`` (id, v, part)."""
    assert delta_rows(path).equals(staging_frame(rows))
    table = delta_spark.read_one({"path": path, "kind": "table"})
    assert table["ok"], table.get("error")
    assert result_frame(table, STAGING_COLUMNS).equals(staging_frame(rows))


def _foreign_file(path: str, name: str, rows) -> str:
    """A Parquet file written by pyarrow under partition ``part=1`` of the table, 9 days ago."""
    os.makedirs(os.path.join(path, "part=1"), exist_ok=True)
    target = os.path.join(path, "part=1", name)
    pq.write_table(pa.table({"id": [r[0] for r in rows], "v": [r[1] for r in rows]}, schema=SCHEMA), target)
    _age_seconds(target)
    return target


def test_files_given_to_stage_files_survive_vacuum_until_published(spark, delta_spark, tmp_path):
    path = str(tmp_path / "t")
    make_staging_table(spark, path)
    rows = [(1000, "old", 1), (1001, "older", 1)]
    target = _foreign_file(path, "loaded-9-days-ago.parquet", rows)
    staged = filecommit.stage_files(spark, path, ["part=1/loaded-9-days-ago.parquet"])
    # The default retention (7 days): the file is older, but a pending staged commit holds it.
    result = filecommit.vacuum(spark, path)
    assert not [f for f in result.files if f.endswith("loaded-9-days-ago.parquet")]
    assert os.path.exists(target)
    assert filecommit.commit(spark, path, staged).committed
    _both_read(delta_spark, path, BASE + rows)
    # Published, the file is active: VACUUM keeps it as any other.
    filecommit.vacuum(spark, path)
    assert os.path.exists(target)
    _both_read(delta_spark, path, BASE + rows)


def test_aborted_stage_files_are_vacuumed_by_age_again(spark, delta_spark, tmp_path):
    """The protection ends with the staged commit: after an abort an old foreign file is debris."""
    path = str(tmp_path / "t")
    make_staging_table(spark, path)
    target = _foreign_file(path, "given-up.parquet", [(7, "x", 1)])
    staged = filecommit.stage_files(spark, path, ["part=1/given-up.parquet"])
    assert os.path.exists(target) and filecommit.vacuum(spark, path, dry_run=True).files == []
    assert filecommit.abort(spark, path, staged) == 0
    assert os.path.exists(target), "abort never deletes files the server did not write"
    result = filecommit.vacuum(spark, path)
    assert [os.path.basename(f) for f in result.files] == ["given-up.parquet"]
    assert not os.path.exists(target)
    _both_read(delta_spark, path, BASE)


@pytest.mark.parametrize("kind", ["foreign", "written"])
def test_publish_refuses_a_staged_file_that_is_gone(spark, delta_spark, tmp_path, kind):
    path = str(tmp_path / "t")
    make_staging_table(spark, path)
    if kind == "foreign":
        gone = _foreign_file(path, "vanishing.parquet", [(500, "x", 1)])
        staged = filecommit.stage_files(spark, path, ["part=1/vanishing.parquet"])
    else:
        staged = filecommit.write(staging_df(spark, [(500, "x", 1)]), path, stage=True)
        gone = os.path.join(path, staged.add_files[0].path)
    os.remove(gone)
    versions = commit_versions(path)
    with pytest.raises(PySparkException) as e:
        filecommit.commit(spark, path, staged)
    assert error_class(e) == filecommit.errors.DELTA_FILE_NOT_FOUND
    assert commit_versions(path) == versions, "nothing was committed"
    _both_read(delta_spark, path, BASE)
    # Not stuck: the staged commit can still be aborted.
    filecommit.abort(spark, path, staged)
    with pytest.raises(PySparkException) as e:
        filecommit.commit(spark, path, staged)
    assert error_class(e) == filecommit.errors.FILECOMMIT_STAGED_COMMIT_ABORTED


def _cdf_rows_delta_rs(path: str, version: int) -> pd.DataFrame:
    t = DeltaTable(path).load_cdf(starting_version=version, ending_version=version)
    return pa.table(t.read_all()).to_pandas()


def test_change_data_of_a_staged_commit_is_kept_while_pending_and_inside_retention(spark, delta_spark, tmp_path):
    path = str(tmp_path / "t")
    make_staging_table(spark, path)
    staged = filecommit.update(spark, path, set={"v": "'upd'"}, condition="id < 5",
                               stage=filecommit.Stage(expires_after_ms=4000))
    cdc = [os.path.join(path, f.path) for f in staged.cdc_files]
    assert cdc and all(os.path.exists(f) for f in cdc)
    # Written when staged, long ago: by age VACUUM would take them.
    for f in cdc:
        _age_seconds(f)
    filecommit.vacuum(spark, path)
    assert all(os.path.exists(f) for f in cdc), "pending: kept by the staged record"
    version = filecommit.commit(spark, path, staged).version
    # The staged commit expires and another server sweeps its record away; the version it was
    # published in is minutes old, far inside the 7-day retention: its change data stays.
    time.sleep(4.5)
    script = textwrap.dedent(f"""
        import filecommit
        spark = filecommit.local_session()
        try:
            filecommit.get_staged(spark, {path!r}, {staged.id!r})
        except Exception as e:
            print(e.getCondition())
        spark.stop()
    """)
    env = {k: v for k, v in os.environ.items()
           if k not in ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_AUTHENTICATE_TOKEN",
                        "SPARK_CONNECT_MODE_ENABLED")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert not glob.glob(os.path.join(path, "_delta_log", "_staged", staged.id + ".json")), "the sweep dropped it"
    filecommit.vacuum(spark, path)
    assert all(os.path.exists(f) for f in cdc), "inside retention: kept because the log's version names them"
    expect = [(i, "upd" if i < 5 else v, p) for i, v, p in BASE]
    _both_read(delta_spark, path, expect)
    feed = delta_spark.read_one({"path": path, "kind": "cdf", "startingVersion": version, "endingVersion": version})
    assert feed["ok"], feed.get("error")
    changes = pd.DataFrame(feed["rows"])
    post = changes[changes["_change_type"] == "update_postimage"]
    assert sorted(post["id"].tolist()) == [0, 1, 2, 3, 4]
    rs = _cdf_rows_delta_rs(path, version)
    assert sorted(rs[rs["_change_type"] == "update_postimage"]["id"].tolist()) == [0, 1, 2, 3, 4]


DV_ROWS = [(i, i * 10, "abc"[i % 3]) for i in range(1, 301)]
DV_FIXTURE = {"dv": [
    {"sql": "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
            "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"},
    {"sql": "INSERT INTO {table} VALUES " + ", ".join(f"({i}, {v}, '{p}')" for i, v, p in DV_ROWS)},
]}


@pytest.fixture(scope="module")
def dv_table(delta_spark, tmp_path_factory, request):
    return make_fixture_tables(delta_spark, tmp_path_factory, request, DV_FIXTURE, "staging_safety_dv")["dv"]


def _rs_location(path: str) -> str:
    """Where delta-rs reads the table: the path itself, or a byte-for-byte copy under a plain name
    when the path holds ``%`` (delta-rs 1.x decodes ``%25`` in a table path, even through a
    symlink, and cannot open such a table, whoever wrote it)."""
    if "%" not in path:
        return path
    copy = os.path.join(os.path.dirname(os.path.dirname(path)), f"plain-copy-{time.monotonic_ns()}")
    shutil.copytree(path, copy, symlinks=True)
    return copy


def _dv_files(path: str) -> list[str]:
    return sorted(f for f in data_files(path) if os.path.basename(f).startswith("deletion_vector_"))


def _both_readers_ids(delta_spark, path: str) -> tuple[list, list]:
    """The ids delta-rs (its query engine: ``to_pandas`` refuses DV tables) and Spark + Delta read."""
    from deltalake import QueryBuilder

    got = QueryBuilder().register("t", DeltaTable(_rs_location(path))).execute("SELECT id FROM t").read_all()
    rs = sorted(got.column("id").to_pylist())
    table = delta_spark.read_one({"path": path, "kind": "table"})
    assert table["ok"], table.get("error")
    return rs, sorted(r["id"] for r in table["rows"])


@pytest.mark.parametrize("name", ["with space", "with %25 percent", "100%"])
def test_deletion_vectors_of_staged_commits_with_odd_table_paths(spark, delta_spark, dv_table, tmp_path, name):
    path = str(tmp_path / name / "t")
    shutil.copytree(dv_table["path"], path)
    files = data_files(path)
    staged = filecommit.delete(spark, path, "id % 7 = 0", stage=True)
    assert staged.add_files and all(f.deletion_vector is not None for f in staged.add_files)
    dvs = [f for f in _dv_files(path) if f not in files]
    assert dvs
    for f in dvs:
        _age_seconds(os.path.join(path, f))
    # VACUUM reads the staged record and keeps the DV files, however old.
    result = filecommit.vacuum(spark, path)
    assert not [f for f in result.files if "deletion_vector_" in f]
    assert all(os.path.exists(os.path.join(path, f)) for f in dvs)
    all_ids = sorted(i for i, _v, _p in DV_ROWS)
    assert _both_readers_ids(delta_spark, path) == (all_ids, all_ids)
    # Abort deletes the DV files it wrote, never the table's data files.
    assert filecommit.abort(spark, path, staged) == len(dvs)
    assert data_files(path) == files
    assert _both_readers_ids(delta_spark, path) == (all_ids, all_ids)
    # A deletion vector file gone before the publish: nothing is committed.
    if name == "with space":
        doomed = filecommit.delete(spark, path, "id % 5 = 0", stage=True)
        for f in [f for f in _dv_files(path) if f not in files]:
            os.remove(os.path.join(path, f))  # with its local checksum file, as a file system delete does
            crc = os.path.join(path, os.path.dirname(f), "." + os.path.basename(f) + ".crc")
            if os.path.exists(crc):
                os.remove(crc)
        versions = commit_versions(path)
        with pytest.raises(PySparkException) as e:
            filecommit.commit(spark, path, doomed)
        assert error_class(e) == filecommit.errors.DELTA_FILE_NOT_FOUND
        assert commit_versions(path) == versions
        filecommit.abort(spark, path, doomed)
        assert data_files(path) == files
    # Staged again and published: both readers apply the deletion vectors.
    staged = filecommit.delete(spark, path, "id % 7 = 0", stage=True)
    filecommit.vacuum(spark, path)
    result = filecommit.commit(spark, path, staged)
    assert result.committed
    kept = sorted(i for i in all_ids if i % 7 != 0)
    assert _both_readers_ids(delta_spark, path) == (kept, kept)
    # The version's DV descriptors name files that exist (relative, URI-encoded in the log).
    for a in log_actions(path)[result.version]:
        if "add" in a and a["add"].get("deletionVector"):
            assert a["add"]["deletionVector"]["storageType"] == "u"
