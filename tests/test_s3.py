"""Tables on object storage: the session's server writes ``s3a://`` tables in a MinIO bucket
(``tests/s3.py``) through Hadoop S3A, and delta-rs reads them back from the same bucket."""

from __future__ import annotations

import deltalake
import pyarrow.compute as pc

import filecommit


def _delta_rs(minio, path: str) -> deltalake.DeltaTable:
    return deltalake.DeltaTable("s3://" + path.removeprefix("s3a://"), storage_options=minio.storage_options())


def test_append_to_an_s3a_table_reads_back_with_delta_rs(spark, minio, s3_table_path):
    first = filecommit.write(spark.range(10), s3_table_path)
    second = filecommit.write(spark.range(10, 15), s3_table_path, mode="append")
    assert (first.version, second.version) == (0, 1)
    table = _delta_rs(minio, s3_table_path)
    assert table.version() == 1
    ids = table.to_pyarrow_table().column("id")
    assert sorted(ids.to_pylist()) == list(range(15))
    assert pc.count_distinct(ids).as_py() == 15
