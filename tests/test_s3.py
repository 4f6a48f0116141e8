"""Tables on object storage: the session's server writes ``s3a://`` tables in a MinIO bucket
(``tests/s3.py``) through Hadoop S3A; delta-rs (its S3 options pointed at MinIO) and Spark + Delta
(with the hadoop-aws of its own Hadoop) read them back from the same bucket. Each command of the
contract runs on one S3 table here; the end-to-end modules run a chosen part of their tests on
``local`` and ``s3`` tables (``helpers.on_s3``)."""

from __future__ import annotations

import uuid

import pyarrow.compute as pc
import pyarrow.fs as fs
import pytest
from helpers import data_files, delta_table, log_actions
from pyspark.errors import PySparkException

import filecommit

COLS = ["id", "name", "part"]


def _one_file_df(spark, rows):
    return spark.createDataFrame(rows, "id long, name string, part string").coalesce(1)


def _spark_delta(delta_spark, path, **read):
    answer = delta_spark.read_one({"path": path, "kind": "table", **read})
    assert answer["ok"], answer.get("error")
    return sorted(tuple(r[c] for c in COLS) for r in answer["rows"])


def _delta_rs(path):
    """delta-rs's rows with deletion vectors applied (its DataFusion scan)."""
    import pyarrow as pa
    from deltalake import QueryBuilder

    got = pa.table(QueryBuilder().register("t", delta_table(path)).execute("SELECT id, name, part FROM t").read_all())
    return sorted(tuple(r.values()) for r in got.to_pylist())


def _both(delta_spark, path, expected):
    """Both readers see exactly ``expected`` (id, name, part) rows."""
    expected = sorted(expected)
    assert _delta_rs(path) == expected
    assert _spark_delta(delta_spark, path) == expected


def test_append_to_an_s3a_table_reads_back_with_delta_rs(spark, minio, s3_table_path):
    first = filecommit.write(spark.range(10), s3_table_path)
    second = filecommit.write(spark.range(10, 15), s3_table_path, mode="append")
    assert (first.version, second.version) == (0, 1)
    table = delta_table(s3_table_path)
    assert table.version() == 1
    ids = table.to_pyarrow_table().column("id")
    assert sorted(ids.to_pylist()) == list(range(15))
    assert pc.count_distinct(ids).as_py() == 15


def test_every_command_on_an_s3a_table(spark, delta_spark, s3_table_path):
    """write (partitioned, CDC, txn, replaceWhere), schema evolution, DELETE / UPDATE / MERGE with
    deletion vectors, OPTIMIZE, RESTORE, VACUUM, stage / publish / abort, time travel and the change
    feed on one s3a:// table; after each step delta-rs and Spark + Delta read the same rows."""
    path = s3_table_path
    props = {"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true"}
    rows = [(i, f"n{i}", "ab"[i % 2]) for i in range(8)]
    r0 = filecommit.write(_one_file_df(spark, rows), path, partition_by=["part"], table_properties=props,
                          txn=("load", 0))
    assert r0.version == 0 and r0.metrics.object_store_requests.get("object_put_request", 0) >= 2
    again = filecommit.write(_one_file_df(spark, rows), path, txn=("load", 0))
    assert again.committed is False, "the txn already committed: nothing written twice"
    _both(delta_spark, path, rows)

    # replaceWhere with change data: only partition a is replaced.
    new_a = [(100, "x", "a")]
    r1 = filecommit.write(_one_file_df(spark, new_a), path, mode="overwrite", options={"replaceWhere": "part = 'a'"})
    rows = [r for r in rows if r[2] != "a"] + new_a
    assert r1.version == 1
    _both(delta_spark, path, rows)

    # Schema evolution: a new column, merged.
    wide = spark.createDataFrame([(200, "w", "b", 1.5)], "id long, name string, part string, score double")
    assert filecommit.write(wide, path, options={"mergeSchema": "true"}).version == 2
    rows.append((200, "w", "b"))
    assert "score" in delta_table(path).schema().to_arrow().names
    _both(delta_spark, path, rows)

    # DELETE and UPDATE mark rows with deletion vectors; MERGE updates and inserts.
    d = filecommit.delete(spark, path, "id = 3")
    assert d.version == 3 and d.metrics.num_deleted_rows == 1
    assert any(a.deletion_vector for a in d.add_files), "deleted through a deletion vector"
    rows = [r for r in rows if r[0] != 3]
    u = filecommit.update(spark, path, {"name": "'upd'"}, "id = 5")
    assert u.version == 4
    rows = [(i, "upd" if i == 5 else n, p) for i, n, p in rows]
    src = _one_file_df(spark, [(7, "merged", "b"), (300, "new", "a")])
    m = (filecommit.merge(src, path, "target.id = source.id")
         .when_matched_update({"name": "source.name"})
         .when_not_matched_insert({c: f"source.{c}" for c in COLS}).execute())
    assert m.version == 5 and (m.metrics.num_updated_rows, m.metrics.num_inserted_rows) == (1, 1)
    rows = [(i, "merged" if i == 7 else n, p) for i, n, p in rows] + [(300, "new", "a")]
    _both(delta_spark, path, rows)

    # Time travel and the change feed, read on the server and by Spark + Delta.
    v1 = spark.read.format("filecommit").option("versionAsOf", 1).load(path).select(*COLS).collect()
    assert sorted(tuple(r) for r in v1) == _spark_delta(delta_spark, path, version=1)
    feed = (spark.read.format("filecommit").option("readChangeFeed", "true").option("startingVersion", 3)
            .load(path).select("id", "_change_type", "_commit_version").collect())
    assert ("delete", 3) in {(r["_change_type"], r["_commit_version"]) for r in feed if r["id"] == 3}
    assert {r["id"] for r in feed if r["_change_type"] == "insert"} == {300}

    # OPTIMIZE compacts; RESTORE goes back to version 2; both keep the readers in agreement.
    o = filecommit.optimize(spark, path)
    assert o.committed and o.version == 6
    _both(delta_spark, path, rows)
    back = filecommit.restore(spark, path, version=2)
    assert back.version == 7
    rows_v2 = [(i, f"n{i}", "b") for i in range(8) if i % 2] + [(100, "x", "a"), (200, "w", "b")]
    _both(delta_spark, path, rows_v2)

    # Stage two appends, publish one, abort the other: only the published rows appear.
    s1 = filecommit.write(_one_file_df(spark, [(400, "s1", "a")]), path, stage=True)
    s2 = filecommit.write(_one_file_df(spark, [(401, "s2", "b")]), path, stage=True)
    assert sorted(log_actions(path)) == list(range(8)), "staged commits are not in the log"
    assert filecommit.abort(spark, path, s2) >= 1
    p = filecommit.commit(spark, path, s1)
    assert p.version == 8
    _both(delta_spark, path, [*rows_v2, (400, "s1", "a")])
    assert not [f for f in data_files(path) if s2.add_files[0].path.split("/")[-1] in f], "aborted file swept"

    # VACUUM inside the retention keeps every file a version in the window needs.
    before = data_files(path)
    vac = filecommit.vacuum(spark, path, retention_hours=168)
    assert vac.files == [] and data_files(path) == before
    assert vac.object_store_requests.get("object_list_request", 0) >= 1
    _both(delta_spark, path, [*rows_v2, (400, "s1", "a")])


def test_requests_of_a_warm_one_row_append(spark, s3_table_path):
    """A one-row append to a warm table waits for two requests: its data file's PUT and the
    conditional PUT of its commit. Its version's checksum file is one more PUT, written in the
    background after the answer (counted when it ran before the counters were read). Nothing else:
    no LIST of ``_delta_log`` (the server's own last commit is the snapshot a blind append starts
    from), no HEAD or GET of the data file (its length and footer statistics come from the writer),
    no create probes (skipped by the server's ``fs.s3a.performance.flags``), no read back of the
    commit, no probe for its checksum file or its time."""
    for i in range(3):
        filecommit.write(spark.range(i, i + 1, 1, 1), s3_table_path)
    req = filecommit.write(spark.range(9, 10, 1, 1), s3_table_path).metrics.object_store_requests
    print(f"\nrequests of a warm one-row append: {req}")
    assert 2 <= req.get("object_put_request", 0) <= 3, req
    others = {k: n for k, n in req.items() if k.startswith(("object_", "action_http_", "multipart_"))
              and not k.endswith("_completed") and k != "object_put_request" and n}
    assert others == {}, req
    assert sorted(delta_table(s3_table_path).to_pyarrow_table().column("id").to_pylist()) == [0, 1, 2, 9]


def test_an_append_after_another_writer_moved_the_table(spark, minio, s3_table_path):
    """The server's appends start from its own last commit without listing the log. When delta-rs
    appends in between, the next append's conditional PUT is refused and it lands one version
    later; when delta-rs adds a column in between (a metadata change that predates the append),
    the append starts over from the latest snapshot and lands too, with null in the new column.
    delta-rs reads every row once."""
    import pyarrow as pa
    from deltalake import write_deltalake

    uri = "s3://" + s3_table_path.removeprefix("s3a://")
    opts = minio.storage_options()
    assert filecommit.write(spark.createDataFrame([(0,)], "id long"), s3_table_path).version == 0
    assert filecommit.write(spark.createDataFrame([(1,)], "id long"), s3_table_path).version == 1
    write_deltalake(uri, pa.table({"id": pa.array([2], pa.int64())}), mode="append", storage_options=opts)
    r = filecommit.write(spark.createDataFrame([(3,)], "id long"), s3_table_path)
    assert r.version == 3, r
    write_deltalake(uri, pa.table({"id": pa.array([4], pa.int64()), "note": ["rs"]}), mode="append",
                    schema_mode="merge", storage_options=opts)
    r = filecommit.write(spark.createDataFrame([(5,)], "id long"), s3_table_path)
    assert r.version == 5, r
    got = sorted((row["id"], row["note"]) for row in delta_table(s3_table_path).to_pyarrow_table().to_pylist())
    assert got == [(0, None), (1, None), (2, None), (3, None), (4, "rs"), (5, None)]
    assert sorted(log_actions(s3_table_path)) == list(range(6))


def test_requests_of_stage_publish_and_vacuum(spark, minio, s3_table_path):
    """A staged one-row append is one PUT of its data file and one of its record (no temporary
    object, copy and delete; no directory marker). Its publish: PUTs of the publish marker, the
    conditional commit, its checksum and the ``published`` marker, the marker's DELETE; reads of the
    record and the staged directory. VACUUM of the small table: one LIST per directory it walks
    (table root, ``_staged``) plus the log listings of its snapshot and of its one read of every
    commit (shared by its own and the staged commits' protection), nothing written or deleted.
    delta-rs reads the published rows.

    The counters belong to the bucket's file system, which every command and the server's
    background staging sweeper share: the table lives in the second bucket, where no other test
    stages, so only this test's requests are counted."""
    if minio.roots_bucket:
        s3_table_path = f"s3a://{minio.roots_bucket}/prefix/requests_{uuid.uuid4().hex[:8]}"
    filecommit.write(spark.range(0, 1, 1, 1), s3_table_path)
    filecommit.write(spark.range(1, 2, 1, 1), s3_table_path)
    staged = filecommit.write(spark.range(5, 6, 1, 1), s3_table_path, stage=True)
    req = staged.metrics.object_store_requests
    print(f"\nrequests of a staged one-row append: {req}")
    assert req.get("object_put_request") in (2, 3), req  # + the previous version's .crc, in the background
    assert req.get("object_copy_requests", 0) == 0 and req.get("object_delete_request", 0) == 0, req
    pub = filecommit.commit(spark, s3_table_path, staged)
    req = pub.metrics.object_store_requests
    print(f"requests of a publish: {req}")
    assert pub.version == 2
    assert req.get("object_put_request") in (3, 4), req  # the .crc PUT runs in the background
    assert req.get("object_delete_request", 0) <= 1, req
    assert req.get("object_list_request", 0) <= 4, req
    assert req.get("object_metadata_request", 0) <= 6 and req.get("action_http_head_request", 0) <= 6, req
    assert req.get("action_http_get_request", 0) <= 3, req
    assert sorted(delta_table(s3_table_path).to_pyarrow_table().column("id").to_pylist()) == [0, 1, 5]
    vac = filecommit.vacuum(spark, s3_table_path, retention_hours=168)
    req = vac.object_store_requests
    print(f"requests of a VACUUM: {req}")
    assert vac.files == []
    assert 1 <= req.get("object_list_request", 0) <= 6, req
    assert req.get("object_put_request", 0) == 0 and req.get("object_delete_request", 0) == 0, req


@pytest.mark.parametrize("bad", [
    "s3a://{other}/prefix/t",            # another bucket
    "s3a://{bucket}/prefix2/t",          # another prefix that starts like the root
    "s3a://{bucket}/prefix/../outside/t",  # .. out of the root
    "s3a://{bucket}/prefix/a%2F..%2F..%2Foutside/t",  # encoded separators
    "s3://{bucket}/prefix/t",            # the same bucket under another scheme
])
def test_allowed_roots_on_object_storage(spark, minio, bad):
    """The session server allows ``s3a://<bucket>/prefix`` of a second bucket (conftest): paths of
    other buckets, prefixes, schemes, ``..`` and encoded separators are refused by error class and
    nothing is written; the root's own prefix is written."""
    bucket = minio.roots_bucket
    ok = f"s3a://{bucket}/prefix/t_{uuid.uuid4().hex[:8]}"
    assert filecommit.write(spark.range(1), ok).version == 0
    path = bad.format(bucket=bucket, other=minio.bucket + "-none")
    with pytest.raises(PySparkException) as info:
        filecommit.write(spark.range(1), path)
    assert info.value.getCondition() == "FILECOMMIT_PATH_NOT_ALLOWED", info.value
    listed = minio.filesystem().get_file_info(fs.FileSelector(bucket, recursive=True))
    files = [i.path for i in listed if i.type == fs.FileType.File]
    assert files and all(p.startswith(f"{bucket}/prefix/") for p in files), files
