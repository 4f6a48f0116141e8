"""Co-writers of one S3 table: the session's server, a second Connect server in its own JVM
(``s3_peer``) and a delta-rs writer append to one MinIO table at the same time, with and without
``txn``. Every commit is published with an S3 conditional write (``If-None-Match: *``), so every
row lands exactly once, versions stay contiguous, every version reads back with delta-rs, and
each ``txn`` (also through the session server's group commit) is committed exactly once.

Checked by readers independent of the writers: delta-rs (every version), the raw log read with
``json`` through pyarrow's S3 client, and each server's own reader for the latest version.
"""

from __future__ import annotations

import pytest
import s3_cowriters as cw

import filecommit

pytestmark = pytest.mark.slow

APPENDS = 12


def _filecommit_ids(session, path: str) -> list[int]:
    return sorted(r["id"] for r in session.read.format("filecommit").load(path).select("id").collect())


def test_two_servers_and_delta_rs_append_concurrently_every_row_once(spark, s3_peer, minio, s3_table_path):
    cw.create_table(spark, s3_table_path)
    writers = [
        cw.Writer("server1-txn", 1, "server", spark, txn=True),
        cw.Writer("server1", 2, "server", spark),  # with server1-txn: the group commit's members
        cw.Writer("server2-txn", 3, "server", s3_peer.spark, txn=True),
        cw.Writer("delta-rs", 4, "delta-rs", storage_options=cw.delta_rs_options(minio)),
    ]
    cw.run_concurrently(writers, s3_table_path, APPENDS)
    for w in writers:
        assert not w.errors, f"{w.name}: {w.errors[0]!r}"
        assert w.done == list(range(APPENDS)), w.name
    summary = cw.check(minio, s3_table_path, writers)
    assert summary["rows"] == 1 + len(writers) * APPENDS, summary
    # Replayed txn writes (a client retrying after a lost answer) commit nothing, on either server.
    for w in (writers[0], writers[2]):
        for n in (0, APPENDS - 1):
            df = w.session.createDataFrame([(-2, "replay")], "id long, writer string")
            again = filecommit.write(df, s3_table_path, mode="append", txn=(w.name, n))
            assert not again.committed, (w.name, n, again)
    cw.check(minio, s3_table_path, writers, every_version=False)
    want = cw.expected_ids(writers)
    assert _filecommit_ids(spark, s3_table_path) == want
    assert _filecommit_ids(s3_peer.spark, s3_table_path) == want
