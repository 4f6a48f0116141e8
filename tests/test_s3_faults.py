"""Faults of the object store under a commit, on the second server (``s3_peer``), whose S3A reaches
MinIO through the fault proxy (``tests/s3_proxy.py``): throttling (503 SlowDown) and internal
errors (500) on the commit's conditional PUT, before and after it landed; a commit PUT that landed
but cannot be read back; MinIO killed (SIGKILL) during a data file's PUT, during the commit PUT
and during the publish of a staged commit, then restarted on the same data. The native Parquet
writer's path on S3 (a file encoded locally, then uploaded; a multipart upload on the peer): MinIO
killed during a part's PUT, every part PUT failing, the answer to the commit PUT lost; no object
and no pending multipart upload of a failed write stay (``MinioServer.pending_uploads``).

The outcome is read from the log, never guessed (``FILECOMMIT_LOG_WRITE_FAILED`` only when the
version provably did not land, ``FILECOMMIT_COMMIT_STATE_UNKNOWN`` with every file kept when the
log cannot be read); nothing is lost or committed twice, a retry with the same ``txn`` converges,
and no data file is left that no version references beyond those an unknown outcome must keep.
Judged after the restart by delta-rs, Spark + Delta (``delta_spark``), the raw log (``json``
through pyarrow's S3 client) and both servers' readers; every data file a version references is
there, and none is left that no version references beyond the ones an unknown outcome keeps.
"""

from __future__ import annotations

import re
import threading

import pytest
import s3_cowriters as cw
from helpers import error_class
from pyarrow import fs as pafs
from pyspark.errors import PySparkException

import filecommit
from filecommit import errors

pytestmark = pytest.mark.slow

APP = "s3-faults"
COMMIT_PUT = r"/_delta_log/\d{20}\.json$"
STATE_UNKNOWN = errors.FILECOMMIT_COMMIT_STATE_UNKNOWN
LOG_WRITE_FAILED = errors.FILECOMMIT_LOG_WRITE_FAILED


def _append_ids(spark, path: str, ids: list[int], txn=None):
    df = spark.createDataFrame([(i, "x") for i in ids], "id long, writer string")
    return filecommit.write(df, path, mode="append", txn=txn)


def _in_thread(call):
    """Runs ``call`` in a thread; returns (thread, outcome dict with 'result' or 'error')."""
    out: dict = {}

    def run():
        try:
            out["result"] = call()
        except BaseException as e:  # noqa: BLE001 - the test judges it
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def _prefix(path: str) -> str:
    return path.removeprefix("s3a://")


def _data_files(minio, path: str) -> set[str]:
    base = _prefix(path)
    infos = minio.filesystem().get_file_info(pafs.FileSelector(base, recursive=True))
    return {i.path[len(base) + 1:] for i in infos
            if i.type == pafs.FileType.File and not i.path[len(base) + 1:].startswith("_delta_log/")}


def _referenced(minio, path: str) -> set[str]:
    out = set()
    for actions in cw.log_commits(minio.filesystem(), path).values():
        out |= {a["add"]["path"] for a in actions if "add" in a}
    return out


def _judge(minio, spark, peer, path: str, want: list[int], txns: dict[int, int], orphans: int = 0) -> None:
    """delta-rs, Spark + Delta, the raw log and both servers' readers agree on ``want`` (each
    acknowledged row exactly once); each txn version of ``APP`` is in exactly the version ``txns``
    names; every referenced data file exists and exactly ``orphans`` files are referenced by no
    version (those an unknown outcome keeps)."""
    fs = minio.filesystem()
    commits = cw.log_commits(fs, path)
    versions = sorted(commits)
    assert versions == list(range(len(versions))), f"gap in the log: {versions}"
    stray = [n for n in cw.log_names(fs, path) if n.startswith(".") or n.endswith(".tmp")]
    assert not stray, stray
    got = sorted(cw.deltalake.DeltaTable(cw.s3_uri(path), storage_options=minio.storage_options())
                 .to_pyarrow_table().column("id").to_pylist())
    assert got == sorted(want), f"delta-rs {got} != {sorted(want)}"
    answer = peer.delta_spark.read_one({"path": path, "kind": "table"})
    assert answer["ok"], answer.get("error")
    assert answer["version"] == versions[-1]
    assert sorted(r["id"] for r in answer["rows"]) == sorted(want), "Spark + Delta"
    for session in (spark, peer.spark):
        ids = sorted(r["id"] for r in session.read.format("filecommit").load(path).select("id").collect())
        assert ids == sorted(want)
    files, referenced = _data_files(minio, path), _referenced(minio, path)
    assert referenced <= files, f"referenced but missing: {referenced - files}"
    assert len(files - referenced) == orphans, f"unreferenced: {files - referenced}"
    for version, expected in txns.items():
        holders = [v for v, acts in commits.items()
                   if any(a.get("txn", {}).get("appId") == APP and a["txn"]["version"] == version for a in acts)]
        assert holders == [expected], f"txn {version} in versions {holders}, expected [{expected}]"


def _table(peer, path: str) -> list[int]:
    filecommit.write(peer.spark.createDataFrame([(0, "x"), (1, "x")], "id long, writer string"), path, mode="error")
    return [0, 1]


def test_throttling_and_internal_errors_on_the_commit_put(spark, peer, minio, s3_table_path):
    path = s3_table_path
    rows = _table(peer, path)
    # 503 SlowDown, nothing written: S3A tries again, one commit.
    slow = peer.proxy.arm("PUT", COMMIT_PUT, "503")
    assert _append_ids(peer.spark, path, [10], (APP, 1)).version == 1
    assert slow.fired == 1, slow
    # The PUT landed but its answer is a 500: the retried conditional PUT is refused (412), the
    # version read back holds this transaction's txnId: committed once.
    lost = peer.proxy.arm("PUT", COMMIT_PUT, "after500")
    result = _append_ids(peer.spark, path, [20], (APP, 2))
    assert lost.fired == 1 and result.committed and result.version == 2, (lost, result)
    rows += [10, 20]
    # Every commit PUT fails with 500 and the version stays absent: LOG_WRITE_FAILED, the
    # write's data file deleted, nothing committed.
    down = peer.proxy.arm("PUT", COMMIT_PUT, "500", times=-1)
    with pytest.raises(PySparkException) as info:
        _append_ids(peer.spark, path, [30], (APP, 3))
    peer.proxy.clear()
    assert error_class(info.value) == LOG_WRITE_FAILED, str(info.value).splitlines()[0]
    assert down.fired >= 2, down
    assert _data_files(minio, path) == _referenced(minio, path), "the failed write's file is deleted"
    # A data file's PUT throttled once: retried, committed.
    data = peer.proxy.arm("PUT", re.escape(_prefix(path)) + r"/part-", "503")
    assert _append_ids(peer.spark, path, [30], (APP, 3)).version == 3
    assert data.fired == 1, data
    rows += [30]
    _judge(minio, spark, peer, path, rows, {1: 1, 2: 2, 3: 3})


def test_a_commit_that_landed_but_cannot_be_read_back_is_state_unknown(spark, peer, minio, s3_table_path):
    path = s3_table_path
    rows = _table(peer, path)
    lost = peer.proxy.arm("PUT", COMMIT_PUT, "after500")
    unreadable = [peer.proxy.arm(m, r"/_delta_log/0{19}1\.json", "500", times=-1, after=lost) for m in ("GET", "HEAD")]
    with pytest.raises(PySparkException) as info:
        _append_ids(peer.spark, path, [10], (APP, 1))
    peer.proxy.clear()
    assert error_class(info.value) == STATE_UNKNOWN, str(info.value).splitlines()[0]
    assert lost.fired == 1 and sum(r.fired for r in unreadable) >= 1, (lost, unreadable)
    rows += [10]
    _judge(minio, spark, peer, path, rows, {1: 1})  # it had landed, with every file
    again = _append_ids(peer.spark, path, [10], (APP, 1))
    assert not again.committed and again.version == 1, again
    _judge(minio, spark, peer, path, rows, {1: 1})


def test_minio_killed_during_a_data_write_then_restarted(spark, peer, minio, s3_table_path):
    path = s3_table_path
    rows = _table(peer, path)
    hold = peer.proxy.arm("PUT", re.escape(_prefix(path)) + r"/part-", "hold")
    t, out = _in_thread(lambda: _append_ids(peer.spark, path, [10], (APP, 1)))
    assert hold.held.wait(60), "the data PUT never came"
    minio.kill()
    hold.release()
    t.join(120)
    assert "error" in out, out
    minio.start()
    _judge(minio, spark, peer, path, rows, {})
    assert _data_files(minio, path) == _referenced(minio, path), "no data file of the failed write"
    assert _append_ids(peer.spark, path, [10], (APP, 1)).version == 1
    _judge(minio, spark, peer, path, [*rows, 10], {1: 1})


@pytest.mark.parametrize("landed", [False, True], ids=["before-put", "after-put"])
def test_minio_killed_during_the_commit_put_then_restarted(spark, peer, minio, s3_table_path, landed):
    path = s3_table_path
    rows = _table(peer, path)
    hold = peer.proxy.arm("PUT", COMMIT_PUT, "hold_after" if landed else "hold")
    t, out = _in_thread(lambda: _append_ids(peer.spark, path, [10], (APP, 1)))
    assert hold.held.wait(60), "the commit PUT never came"
    minio.kill()
    hold.release()
    t.join(120)
    assert error_class(out.get("error")) == STATE_UNKNOWN, out
    minio.start()
    if landed:
        rows += [10]
        _judge(minio, spark, peer, path, rows, {1: 1})
        again = _append_ids(peer.spark, path, [10], (APP, 1))
        assert not again.committed and again.version == 1, again
    else:
        _judge(minio, spark, peer, path, rows, {}, orphans=1)  # the unknown outcome's data file is kept
        assert _append_ids(peer.spark, path, [10], (APP, 1)).version == 1
        rows += [10]
    _judge(minio, spark, peer, path, rows, {1: 1}, orphans=0 if landed else 1)


@pytest.mark.parametrize("landed", [False, True], ids=["before-put", "after-put"])
def test_minio_killed_during_a_publish_then_restarted(spark, peer, minio, s3_table_path, landed):
    path = s3_table_path
    rows = _table(peer, path)
    df = peer.spark.createDataFrame([(10, "x"), (11, "x")], "id long, writer string")
    staged = filecommit.write(df, path, mode="append", stage=True)
    hold = peer.proxy.arm("PUT", COMMIT_PUT, "hold_after" if landed else "hold")
    t, out = _in_thread(lambda: filecommit.commit(peer.spark, path, staged))
    assert hold.held.wait(60), "the publish's commit PUT never came"
    minio.kill()
    hold.release()
    t.join(120)
    assert error_class(out.get("error")) == STATE_UNKNOWN, out
    minio.start()
    if landed:
        rows += [10, 11]
        _judge(minio, spark, peer, path, rows, {})
        # Published again (from the other server): nothing new, the version that holds it.
        again = filecommit.commit(spark, path, staged)
        assert not again.committed and again.version == 1, again
        with pytest.raises(PySparkException) as info:
            filecommit.abort(peer.spark, path, staged)
        assert error_class(info.value) in (errors.FILECOMMIT_STAGED_COMMIT_PUBLISHED,
                                          errors.FILECOMMIT_STAGED_COMMIT_BUSY)
    else:
        # Not in the log; the staged files are kept (the outcome was unknown): published again
        # from the other server, it commits once.
        _judge(minio, spark, peer, path, rows, {}, orphans=len(staged.add_files))
        again = filecommit.commit(spark, path, staged)
        assert again.committed and again.version == 1, again
        rows += [10, 11]
        assert not filecommit.commit(peer.spark, path, staged).committed
    _judge(minio, spark, peer, path, rows, {})


# --- The native Parquet writer on S3: each file encoded into a local file, then uploaded through S3A ---

# One task's file of about 8.5 MB (64 incompressible hex characters a row): on the peer (multipart
# from 5 MB, 5 MB parts) a multipart upload of two parts.
NATIVE_ROWS = 120_000
UPLOAD_PART = r"/part-[^?]*\?(.*&)?partNumber=1(&|$)"


def _native_append(spark, path: str, first: int, txn=None):
    """Appends ids ``first..first+NATIVE_ROWS`` in one Spark task (a job: the native writer, not a
    driver-side write)."""
    df = spark.range(first, first + NATIVE_ROWS, 1, 1).selectExpr("id", "sha2(cast(id as string), 256) as writer")
    return filecommit.write(df, path, mode="append", txn=txn)


def _uploaded_keys(proxy, path: str) -> set[str]:
    """Keys (bucket/key) of the table's data files that had multipart upload requests."""
    base = "/" + _prefix(path) + "/"
    return {p.split("?")[0][1:] for _m, p in list(proxy.seen) if p.startswith(base) and "uploadId=" in p}


def _judge_native(minio, peer, path: str, want: list[int], version_files: dict[int, str]) -> None:
    """delta-rs reads exactly the ids ``want``; Spark + Delta counts them (rows, distinct ids, sum);
    the log has no gap; every referenced data file exists and none is unreferenced; the files each
    version in ``version_files`` added were written by that library (Parquet ``created_by``)."""
    import pyarrow.parquet as pq

    fs = minio.filesystem()
    commits = cw.log_commits(fs, path)
    assert sorted(commits) == list(range(len(commits))), sorted(commits)
    got = sorted(cw.deltalake.DeltaTable(cw.s3_uri(path), storage_options=minio.storage_options())
                 .to_pyarrow_table().column("id").to_pylist())
    assert got == sorted(want), f"delta-rs: {len(got)} rows, {len(set(got))} distinct; want {len(want)}"
    sql = "SELECT count(*) AS n, count(DISTINCT id) AS d, sum(id) AS s FROM {table}"
    answer = peer.delta_spark.read_one({"kind": "sql", "path": path, "sql": sql})
    assert answer["ok"], answer.get("error")
    assert answer["rows"] == [{"n": len(want), "d": len(want), "s": sum(want)}], answer["rows"]
    files, referenced = _data_files(minio, path), _referenced(minio, path)
    assert files == referenced, f"missing {referenced - files}, unreferenced {files - referenced}"
    for version, library in version_files.items():
        for add in (a["add"] for a in commits[version] if "add" in a):
            with fs.open_input_file(f"{_prefix(path)}/{add['path']}") as f:
                assert pq.ParquetFile(f).metadata.created_by.startswith(library), (version, add["path"])


def test_minio_killed_during_a_native_multipart_upload_then_restarted(spark, peer, minio, s3_table_path):
    path = s3_table_path
    rows = _table(peer, path)
    part = peer.proxy.arm("PUT", re.escape(_prefix(path)) + UPLOAD_PART, "hold")
    t, out = _in_thread(lambda: _native_append(peer.spark, path, 100, (APP, 1)))
    assert part.held.wait(120), "no multipart upload of the native writer's file"
    minio.kill()
    part.release()
    t.join(180)
    assert isinstance(out.get("error"), PySparkException), out
    minio.start()
    failed = _uploaded_keys(peer.proxy, path)
    assert len(failed) == 1, failed
    bucket, key = next(iter(failed)).split("/", 1)
    # The store went away mid-upload: the upload was started and could be neither completed nor
    # aborted; no object of the file, nothing committed.
    assert minio.pending_uploads(bucket, key), "the kill left the upload pending"
    assert sorted(cw.log_commits(minio.filesystem(), path)) == [0]
    assert _data_files(minio, path) == _referenced(minio, path), "no object of the failed write"
    # The same write again: before its upload, the server aborts the failed file's pending upload.
    result = _native_append(peer.spark, path, 100, (APP, 1))
    assert result.committed and result.version == 1, result
    for k in _uploaded_keys(peer.proxy, path):
        assert minio.pending_uploads(*k.split("/", 1)) == [], k
    _judge_native(minio, peer, path, [*rows, *range(100, 100 + NATIVE_ROWS)], {1: "DuckDB"})


def test_native_upload_whose_parts_fail_leaves_no_pending_upload(spark, peer, minio, s3_table_path):
    path = s3_table_path
    rows = _table(peer, path)
    broken = peer.proxy.arm("PUT", re.escape(_prefix(path)) + UPLOAD_PART, "500", times=-1)
    with pytest.raises(PySparkException):
        _native_append(peer.spark, path, 100)
    peer.proxy.clear()
    assert broken.fired >= 2, broken  # S3A tried again before it gave up
    (key,) = _uploaded_keys(peer.proxy, path)
    # S3A aborted its multipart upload when the stream's close failed.
    assert minio.pending_uploads(*key.split("/", 1)) == []
    assert sorted(cw.log_commits(minio.filesystem(), path)) == [0]
    assert _data_files(minio, path) == _referenced(minio, path), "no object of the failed write"
    _judge_native(minio, peer, path, rows, {})


def test_native_write_whose_commit_put_answer_is_lost_commits_once(spark, peer, minio, s3_table_path):
    path = s3_table_path
    rows = _table(peer, path)
    peer.proxy.seen.clear()
    lost = peer.proxy.arm("PUT", COMMIT_PUT, "after500")
    result = _native_append(peer.spark, path, 100, (APP, 1))
    assert lost.fired == 1 and result.committed and result.version == 1, (lost, result)
    # Size and statistics came from the writer: no HEAD and no GET of the uploaded file.
    (key,) = _uploaded_keys(peer.proxy, path)
    reads = [(m, p) for m, p in peer.proxy.seen if m in ("HEAD", "GET") and p.split("?")[0] == "/" + key]
    assert not reads, reads
    again = _native_append(peer.spark, path, 100, (APP, 1))
    assert not again.committed and again.version == 1, again
    _judge_native(minio, peer, path, [*rows, *range(100, 100 + NATIVE_ROWS)], {1: "DuckDB"})
