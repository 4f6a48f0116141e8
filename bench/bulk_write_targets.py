"""Where ``bench_bulk_write.py`` writes its tables: the local disk, or a MinIO bucket (``--target s3``).

:class:`LocalTarget` is a directory; :class:`S3Target` starts its own MinIO (``make minio``;
``tests/s3.py``) on 127.0.0.1 with a bucket ``bench`` and gives the server conf that points Hadoop
S3A at it (``make s3a-jars``; the plugin, S3A's and the native writer's jars in ``spark.jars``). Both
name a table of one run (``path`` for the Spark writers: a directory or ``s3a://bench/<name>``;
``rs_path`` and ``rs_options`` for delta-rs: the same directory, or ``s3://bench/<name>`` with
MinIO's storage options) and read back what a writer left: rows (delta-rs for Delta tables, pyarrow
for the plain Parquet directory), bytes of its ``.parquet`` files (MB = 10^6 bytes) and the
``created_by`` of its first data file (which library wrote it).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class LocalTarget:
    """Tables in the directory ``work`` on the local disk."""

    def __init__(self, work):
        self.work = work
        self.rs_options = None

    def server_conf(self):
        return {}

    def path(self, name):
        return os.path.join(self.work, name)

    rs_path = path

    def _files(self, name):
        for root, _dirs, files in sorted(os.walk(self.path(name))):
            if "_delta_log" not in root:
                yield from (os.path.join(root, f) for f in sorted(files) if f.endswith(".parquet"))

    def bytes(self, name):
        return sum(os.path.getsize(f) for f in self._files(name))

    def created_by(self, name):
        import pyarrow.parquet as pq

        return next((pq.ParquetFile(f).metadata.created_by or "" for f in self._files(name)), "")

    def count_rows(self, writer, name):
        import pyarrow.dataset as ds
        from deltalake import DeltaTable

        if writer == "spark-parquet":
            return ds.dataset(self.path(name), format="parquet", partitioning="hive").count_rows()
        return DeltaTable(self.path(name)).to_pyarrow_dataset().count_rows()

    def remove(self, name):
        shutil.rmtree(self.path(name), ignore_errors=True)

    def close(self):
        pass


class S3Target:
    """Tables in the bucket ``bench`` of a MinIO started here (data under a temporary directory)."""

    BUCKET = "bench"

    def __init__(self):
        sys.path.insert(0, str(REPO / "tests"))
        import s3

        self.s3 = s3
        self.base = tempfile.mkdtemp(prefix="bench_bulk_write_minio_")
        self.minio = s3.MinioServer(os.path.join(self.base, "data"), os.path.join(self.base, "minio.log"))
        self.minio.start()
        self.minio.create_bucket(self.BUCKET)
        self.fs = self.minio.filesystem()
        self.rs_options = self.minio.storage_options()

    def server_conf(self):
        import filecommit

        conf = self.s3.server_conf(self.minio.endpoint)
        conf["spark.jars"] = ",".join([filecommit.server.find_plugin_jar(), *self.s3.s3a_jars(),
                                       *filecommit.server.find_native_jars()])
        return conf

    def path(self, name):
        return f"s3a://{self.BUCKET}/{name}"

    def rs_path(self, name):
        return f"s3://{self.BUCKET}/{name}"

    def _files(self, name):
        from pyarrow import fs

        infos = self.fs.get_file_info(fs.FileSelector(f"{self.BUCKET}/{name}", recursive=True, allow_not_found=True))
        return sorted((i for i in infos if i.type == fs.FileType.File and i.path.endswith(".parquet")
                       and "/_delta_log/" not in i.path), key=lambda i: i.path)

    def bytes(self, name):
        return sum(i.size for i in self._files(name))

    def created_by(self, name):
        import pyarrow.parquet as pq

        for i in self._files(name):
            with self.fs.open_input_file(i.path) as f:
                return pq.ParquetFile(f).metadata.created_by or ""
        return ""

    def count_rows(self, writer, name):
        import pyarrow.dataset as ds
        from deltalake import DeltaTable

        if writer == "spark-parquet":
            return ds.dataset(f"{self.BUCKET}/{name}", filesystem=self.fs, format="parquet",
                              partitioning="hive", exclude_invalid_files=True).count_rows()
        return DeltaTable(self.rs_path(name), storage_options=self.rs_options).to_pyarrow_dataset().count_rows()

    def remove(self, name):
        self.fs.delete_dir_contents(f"{self.BUCKET}/{name}", missing_dir_ok=True)

    def close(self):
        self.minio.stop()
        shutil.rmtree(self.base, ignore_errors=True)
