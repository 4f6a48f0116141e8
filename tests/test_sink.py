"""End-to-end tests of ``filecommit.write_batch`` and of our committer in a Structured Streaming file
sink (Spark's ManifestFileCommitProtocol and FileStreamSinkLog).

What a write committed is judged by independent readers: Spark's own Parquet reader through the
Connect session (``spark.read.parquet(path)``, which lists only the files of ``_spark_metadata``),
the log files parsed with the ``json`` module, and the directory listing. Expected rows are built
in Python, not asked from the code under test.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from helpers import data_files, is_s3, on_s3, read_bytes, second_session
from pyspark.errors import PySparkException

import filecommit
from filecommit import _connect
from filecommit.proto.v1 import sink_pb2

PROTOCOL_CLASS = "io.filecommit.sink.ManifestFileCommitProtocol"


# ---------------------------------------------------------------------------------------------
# Independent readers
# ---------------------------------------------------------------------------------------------


def spark_rows(spark, path, columns):
    """Rows as Spark's reader sees the sink directory, sorted, as tuples of ``columns``.

    Partition values that Spark's partition inference reads as dates are compared as ISO strings.
    """
    import datetime

    def plain(v):
        return v.isoformat() if isinstance(v, datetime.date) else v

    return sorted(tuple(plain(r[c]) for c in columns) for r in spark.read.parquet(path).collect())


def log_lines(path, name):
    """Entries of ``_spark_metadata/<name>`` parsed with ``json``; asserts the ``v1`` header."""
    text = read_bytes(os.path.join(path, "_spark_metadata", name)).decode("utf-8")
    lines = text.split("\n")
    assert lines[0] == "v1", text[:80]
    assert not text.endswith("\n")
    return [json.loads(line) for line in lines[1:]]


def log_batches(path):
    """Names of the log files (batch ids, ``N.compact``), hidden temp files excluded."""
    if is_s3(path):
        names = [n.split("/", 1)[1] for n in data_files(path) if n.startswith("_spark_metadata/")]
    else:
        names = os.listdir(os.path.join(path, "_spark_metadata"))
    return sorted((n for n in names if not n.startswith(".")), key=lambda n: int(n.split(".")[0]))


def local_path(uri):
    """A ``file:`` URI of the log (URI-encoded) as a local path; an ``s3a://`` URI decoded."""
    from urllib.parse import unquote, urlparse

    if is_s3(uri):
        return unquote(uri)
    return unquote(urlparse(uri).path)


def data_files_on_disk(path):
    """Data files in the sink directory (outside ``_spark_metadata``, not hidden), absolute."""
    if is_s3(path):
        return {f"{path}/{n}" for n in data_files(path)
                if not n.startswith("_spark_metadata/") and not n.split("/")[-1].startswith((".", "_"))}
    out = set()
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != "_spark_metadata"]
        out.update(os.path.join(root, f) for f in files if not f.startswith((".", "_")))
    return out


def paths_of(files):
    return {local_path(f.path) for f in files}


def events(spark, ids, day_of=lambda i: f"2024-01-0{1 + i % 3}"):
    """A DataFrame of rows (id, name, day) and the same rows as Python tuples."""
    rows = [(int(i), f"n{i}", day_of(i)) for i in ids]
    return spark.createDataFrame(rows, "id long, name string, day string"), rows


# ---------------------------------------------------------------------------------------------
# write_batch
# ---------------------------------------------------------------------------------------------


def test_committed_batches_are_exactly_what_sparks_reader_returns(spark, table_path):
    df0, rows0 = events(spark, range(0, 12))
    df1, rows1 = events(spark, range(100, 107))

    r0 = filecommit.write_batch(df0, table_path, batch_id=0, partition_by=["day"])
    r1 = filecommit.write_batch(df1, table_path, batch_id=1, partition_by=["day"])

    assert (r0.batch_id, r0.committed, r0.latest_batch_id) == (0, True, 0)
    assert (r1.batch_id, r1.committed, r1.latest_batch_id) == (1, True, 1)
    assert r0.path == "file:" + table_path
    assert spark_rows(spark, table_path, ["id", "name", "day"]) == sorted(rows0 + rows1)
    assert log_batches(table_path) == ["0", "1"]
    for name, result in (("0", r0), ("1", r1)):
        entries = log_lines(table_path, name)
        assert [e["path"] for e in entries] == [f.path for f in result.files]
        for entry, f in zip(entries, result.files):
            assert entry == {
                "path": f.path,
                "size": f.size,
                "isDir": f.is_dir,
                "modificationTime": f.modification_time,
                "blockReplication": f.block_replication,
                "blockSize": f.block_size,
                "action": "add",
            }
            on_disk = local_path(f.path)
            assert os.path.getsize(on_disk) == f.size
            assert int(os.path.getmtime(on_disk) * 1000) // 1000 == f.modification_time // 1000
            assert f.action == "add" and not f.is_dir
            assert os.path.basename(os.path.dirname(on_disk)).startswith("day=2024-01-0")
            assert os.path.basename(on_disk).startswith("part-")
        assert result.num_output_bytes == sum(f.size for f in result.files)
    assert data_files_on_disk(table_path) == paths_of(r0.files) | paths_of(r1.files)


@on_s3
def test_an_already_committed_batch_id_is_skipped_and_returns_its_files(spark, table_path):
    df, rows = events(spark, range(0, 5))
    other, _ = events(spark, range(500, 520))
    first = filecommit.write_batch(df, table_path, batch_id=0)
    before = data_files_on_disk(table_path)

    again = filecommit.write_batch(other, table_path, batch_id=0)

    assert first.committed and not again.committed
    assert again.latest_batch_id == 0
    assert again.files == first.files
    assert data_files_on_disk(table_path) == before, "a skipped batch writes no file"
    assert spark_rows(spark, table_path, ["id", "name", "day"]) == sorted(rows)
    # The next id commits; older ids keep being skipped.
    nxt = filecommit.write_batch(other, table_path, batch_id=1)
    assert nxt.committed
    assert not filecommit.write_batch(df, table_path, batch_id=0).committed
    assert len(spark_rows(spark, table_path, ["id"])) == 25
    assert log_batches(table_path) == ["0", "1"]
    assert data_files_on_disk(table_path) == paths_of(first.files) | paths_of(nxt.files)


def test_bad_input_is_refused_before_anything_is_written(spark, table_path):

    df, _ = events(spark, range(3))
    # Client-side checks: pyspark's error classes (ValueError / TypeError subclasses).
    with pytest.raises(ValueError, match="`batch_id` must be greater than or equal to 0, got '-1'") as e:
        filecommit.write_batch(df, table_path, batch_id=-1)
    assert e.value.getCondition() == "NEGATIVE_VALUE"
    with pytest.raises(ValueError, match="`batch_id` must be between 0 and 9223372036854775807") as e:
        filecommit.write_batch(df, table_path, batch_id=2**63)
    assert e.value.getCondition() == "VALUE_OUT_OF_BOUNDS"
    with pytest.raises(TypeError, match="`batch_id` should be int, got bool") as e:
        filecommit.write_batch(df, table_path, batch_id=True)
    assert e.value.getCondition() == "NOT_EXPECTED_TYPE"
    with pytest.raises(ValueError, match="`path` must be a non-empty string") as e:
        filecommit.write_batch(df, "  ", batch_id=0)
    assert e.value.getCondition() == "VALUE_NOT_NON_EMPTY_STR"
    with pytest.raises(TypeError, match="Spark Connect DataFrame") as e:
        filecommit.write_batch([1, 2], table_path, batch_id=0)
    assert e.value.getCondition() == "NOT_EXPECTED_TYPE"
    assert e.value.getMessageParameters()["arg_name"] == "df"
    assert not os.path.exists(table_path)
    # The server refuses too, naming the value, when a client skips the checks.
    raw = sink_pb2.WriteBatchCommand(path=table_path, batch_id=-4)
    raw.input.CopyFrom(_connect.relation_of(df))
    with pytest.raises(PySparkException, match="Batch id must be >= 0, got -4") as e:
        list(_connect.execute_extension_command(spark, raw))
    assert e.value.getCondition() == "FILECOMMIT_INVALID_BATCH_ID"
    with pytest.raises(PySparkException, match="Batch id 3 would leave a gap .* first batch id is 0") as e:
        filecommit.write_batch(df, table_path, batch_id=3)
    assert e.value.getCondition() == "FILECOMMIT_INVALID_BATCH_ID"
    with pytest.raises(PySparkException, match="Partition column 'month' is not in the data") as e:
        filecommit.write_batch(df, table_path, batch_id=0, partition_by=["month"])
    assert e.value.getCondition() == "DELTA_PARTITION_COLUMN_NOT_FOUND"
    with pytest.raises(PySparkException, match="retention .* got 'forever'") as e:
        filecommit.write_batch(df, table_path, batch_id=0, options={"retention": "forever"})
    assert e.value.getCondition() == "DELTA_ILLEGAL_OPTION"
    assert not os.path.exists(table_path), "nothing may be written for bad input"

    filecommit.write_batch(df, table_path, batch_id=0)
    with pytest.raises(PySparkException, match="latest committed batch is 0, so the next batch id is 1"):
        filecommit.write_batch(df, table_path, batch_id=2)
    assert log_batches(table_path) == ["0"]


def test_a_failed_batch_leaves_nothing_and_its_retry_commits_exactly_once(spark, table_path):
    from pyspark.errors.exceptions.connect import SparkConnectException
    from pyspark.sql.connect import functions as F  # Connect columns, whatever pyspark's mode

    # One partition: the only task fails on row 57 after it opened its output file.
    failing = spark.range(0, 100, 1, 1).select(
        F.when(F.col("id") == 57, F.raise_error(F.lit("injected task failure"))).otherwise(F.col("id")).alias("id")
    )
    with pytest.raises(SparkConnectException, match="injected task failure"):
        filecommit.write_batch(failing, table_path, batch_id=0)
    assert not os.path.exists(os.path.join(table_path, "_spark_metadata", "0"))
    assert data_files_on_disk(table_path) == set(), "abortTask deletes the failed task's file"

    retried = filecommit.write_batch(spark.range(0, 100, 1, 2), table_path, batch_id=0)

    assert retried.committed
    assert spark_rows(spark, table_path, ["id"]) == [(i,) for i in range(100)]
    assert data_files_on_disk(table_path) == paths_of(retried.files)
    assert not filecommit.write_batch(spark.range(0, 100), table_path, batch_id=0).committed
    assert len(spark_rows(spark, table_path, ["id"])) == 100


def test_log_is_compacted_every_ten_batches_and_still_read(spark, table_path):
    assert spark.conf.get("spark.sql.streaming.fileSink.log.compactInterval", "10") == "10"
    expected = []
    all_files = []
    results = []
    for b in range(11):
        df, rows = events(spark, range(b * 10, b * 10 + 3))
        r = filecommit.write_batch(df, table_path, batch_id=b)
        assert r.committed
        results.append(r)
        expected += rows
        all_files += r.files
        if b == 9:
            assert os.path.exists(os.path.join(table_path, "_spark_metadata", "9.compact"))
            assert not os.path.exists(os.path.join(table_path, "_spark_metadata", "9"))
            compacted = log_lines(table_path, "9.compact")
            assert sorted(e["path"] for e in compacted) == sorted(f.path for f in all_files)
    assert log_batches(table_path)[-2:] == ["9.compact", "10"]
    assert spark_rows(spark, table_path, ["id", "name", "day"]) == sorted(expected)
    # Skipping the compaction batch reports its own files, not everything 9.compact lists.
    skipped = filecommit.write_batch(df, table_path, batch_id=9)
    assert not skipped.committed
    assert skipped.files == results[9].files


def test_an_orphan_parquet_file_in_the_directory_is_invisible(spark, table_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    df, rows = events(spark, range(0, 4))
    filecommit.write_batch(df, table_path, batch_id=0)
    orphan = os.path.join(table_path, "part-00000-00000000-0000-0000-0000-000000000000-c000.snappy.parquet")
    pq.write_table(
        pa.table({"id": pa.array([999], pa.int64()), "name": ["orphan"], "day": ["2024-01-09"]}), orphan
    )
    # The orphan is a valid Parquet file with a row (read on its own)...
    assert spark_rows(spark, orphan, ["id"]) == [(999,)]
    # ...but the sink directory's reader lists only logged files.
    assert spark_rows(spark, table_path, ["id", "name", "day"]) == sorted(rows)


# ---------------------------------------------------------------------------------------------
# Two client sessions racing on one batch id
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_two_sessions_racing_on_one_batch_id_commit_exactly_once(spark, table_path):
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException
    from pyspark.sql.connect import functions as F  # Connect columns, whatever pyspark's mode

    other = second_session(spark)
    assert other.session_id != spark.session_id
    n = 50_000
    winner_of = {}
    try:
        for batch_id in (0, 1):
            sessions = {"a": spark, "b": other}
            barrier = threading.Barrier(2, timeout=60)
            outcomes = {}

            def run(name, session):
                try:
                    df = session.range(0, n, 1, 2).select(
                        F.col("id"),
                        F.lit(batch_id).alias("batch"),
                        F.lit(name).alias("writer"),
                    )
                    barrier.wait()
                    outcomes[name] = filecommit.write_batch(df, table_path, batch_id=batch_id)
                except Exception as e:  # noqa: BLE001 - the race error is one of the allowed outcomes
                    outcomes[name] = e

            threads = [threading.Thread(target=run, args=item) for item in sessions.items()]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=180)
            assert set(outcomes) == {"a", "b"}, outcomes

            winners = [k for k, v in outcomes.items() if isinstance(v, filecommit.BatchResult) and v.committed]
            assert len(winners) == 1, outcomes
            winner = winners[0]
            loser = outcomes["b" if winner == "a" else "a"]
            print(f"batch {batch_id}: winner {winner}, loser got {type(loser).__name__}")
            if isinstance(loser, Exception):
                assert isinstance(loser, SparkConnectGrpcException), repr(loser)
                assert f"Race while writing batch {batch_id}" in str(loser), loser
            else:
                assert not loser.committed and loser.files == outcomes[winner].files

            winner_of[batch_id] = winner
            # Spark's reader sees, for every batch so far, exactly the winner's n rows, once each.
            got = (
                spark.read.parquet(table_path)
                .groupBy("batch", "writer")
                .agg(F.count("*").alias("n"), F.countDistinct("id").alias("d"))
                .collect()
            )
            assert {(r["batch"], r["writer"]): (r["n"], r["d"]) for r in got} == {
                (b, w): (n, n) for b, w in winner_of.items()
            }
            # Every data file on disk is a committed one: the loser's files were deleted.
            committed = set()
            for name in log_batches(table_path):
                committed |= {local_path(e["path"]) for e in log_lines(table_path, name)}
            assert data_files_on_disk(table_path) == committed
    finally:
        # With pyspark's own remote("local[...]") (SPARK_LOCAL_REMOTE set), stopping any client
        # session also stops the embedded server the rest of the suite uses.
        if "SPARK_LOCAL_REMOTE" not in os.environ:
            other.stop()


# ---------------------------------------------------------------------------------------------
# A Structured Streaming file sink using our committer
# ---------------------------------------------------------------------------------------------


def _write_json(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps({"id": i, "day": d}) for i, d in rows))


def _run_available_now(spark, source, sink, checkpoint):
    query = (
        spark.readStream.schema("id long, day string")
        .option("maxFilesPerTrigger", 1)
        .json(source)
        .writeStream.format("parquet")
        .partitionBy("day")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start(sink)
    )
    assert query.awaitTermination(180), "the streaming query did not finish in time"
    assert query.exception() is None


@pytest.mark.slow
@pytest.mark.refused_in_shared_mode("sets the session's commit protocol class (a setting that names a class)")
def test_write_stream_with_our_committer_is_read_and_restarts_without_duplicates(spark, tmp_path):
    source = str(tmp_path / "in")
    sink = str(tmp_path / "out")
    checkpoint = str(tmp_path / "checkpoint")
    os.makedirs(source)
    files = {f"f{k}.json": [(k * 10 + j, f"d{k % 2}") for j in range(3)] for k in range(5)}
    for name in ("f0.json", "f1.json", "f2.json"):
        _write_json(os.path.join(source, name), files[name])

    key = "spark.sql.streaming.commitProtocolClass"
    try:
        # The sink really instantiates the configured class: a missing one fails the query.
        spark.conf.set(key, "io.filecommit.sink.NoSuchCommitter")
        with pytest.raises(PySparkException, match="NoSuchCommitter"):
            _run_available_now(spark, source, str(tmp_path / "bogus-out"), str(tmp_path / "bogus-checkpoint"))

        # Ours. Had FileStreamSink not recognised it as a ManifestFileCommitProtocol, it would not
        # call setupManifestOptions and our setupJob would fail the query.
        spark.conf.set(key, PROTOCOL_CLASS)
        _run_available_now(spark, source, sink, checkpoint)
        expected = sorted(r for n in ("f0.json", "f1.json", "f2.json") for r in files[n])
        assert log_batches(sink) == ["0", "1", "2"]
        assert spark_rows(spark, sink, ["id", "day"]) == expected

        # Crash between the sink commit and the checkpoint commit of batch 2: on restart Spark
        # replays batch 2, which the sink must skip, then runs the new files as batches 3 and 4.
        for name in ("2", ".2.crc"):
            if os.path.exists(os.path.join(checkpoint, "commits", name)):
                os.remove(os.path.join(checkpoint, "commits", name))
        assert not os.path.exists(os.path.join(checkpoint, "commits", "2"))
        for name in ("f3.json", "f4.json"):
            _write_json(os.path.join(source, name), files[name])
        time.sleep(0.01)
        _run_available_now(spark, source, sink, checkpoint)

        assert os.path.exists(os.path.join(checkpoint, "commits", "2")), "batch 2 was replayed"
        assert log_batches(sink) == ["0", "1", "2", "3", "4"]
        assert spark_rows(spark, sink, ["id", "day"]) == sorted(r for rows in files.values() for r in rows)
        committed = set()
        for name in log_batches(sink):
            committed |= {local_path(e["path"]) for e in log_lines(sink, name)}
        assert data_files_on_disk(sink) == committed
    finally:
        spark.conf.unset(key)
