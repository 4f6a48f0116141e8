"""Version checksum files (protocol "Version Checksum File"): ``_delta_log/<version>.crc`` after each commit.

filecommit writes one after every commit, as post-commit work. Spark + Delta 4.4 validates a table's
checksum against its own state reconstruction when a transaction starts (with
``spark.databricks.delta.incremental.commit.verify`` on; ``checksum.mismatch.fatal``, the default,
turns a mismatch into ``DELTA_TXN_LOG_FAILED_INTEGRITY``): its writes after ours must succeed. The
other way round, filecommit writes after Delta's commits, and a checksum file of Delta's that
disagrees with the table is not carried forward.
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from helpers import log_actions, shared_dir

import filecommit

pytestmark = pytest.mark.slow

VERIFY = ["SET spark.databricks.delta.incremental.commit.verify=true",
          "SET spark.databricks.delta.checksum.mismatch.fatal=true"]
UNVERIFY = ["RESET spark.databricks.delta.incremental.commit.verify",
            "RESET spark.databricks.delta.checksum.mismatch.fatal"]
INTEGRITY = "DELTA_TXN_LOG_FAILED_INTEGRITY"


def _crc_path(path, version):
    return os.path.join(path, "_delta_log", f"{version:020d}.crc")


def _crc(path, version, timeout=30.0):
    """The checksum file of a version, waiting for the post-commit work to write it."""
    deadline = time.monotonic() + timeout
    f = _crc_path(path, version)
    while not os.path.exists(f):
        assert time.monotonic() < deadline, f"no checksum file for version {version}"
        time.sleep(0.1)
    with open(f) as fh:
        return json.loads(fh.read())


def _state(path, version):
    """Size, file count, protocol and metadata of a version, replayed by delta-rs and from the log."""
    dt = DeltaTable(path, version=version)
    adds = pa.table(dt.get_add_actions(flatten=True)).to_pydict()
    proto = meta = None
    for v in sorted(log_actions(path)):
        if v > version:
            break
        for a in log_actions(path)[v]:
            proto = a.get("protocol", proto)
            meta = a.get("metaData", meta)
    return sum(adds["size_bytes"]), len(adds["path"]), proto, meta


def _features_sorted(protocol):
    # Feature lists are sets (Delta compares them as sets).
    return {k: sorted(v) if isinstance(v, list) else v for k, v in protocol.items()}


def _check_crc(path, version):
    crc = _crc(path, version)
    size, files, proto, meta = _state(path, version)
    assert (crc["tableSizeBytes"], crc["numFiles"], crc["numMetadata"], crc["numProtocol"]) == (size, files, 1, 1)
    assert _features_sorted(crc["protocol"]) == _features_sorted(proto) and crc["metadata"] == meta
    h = crc["fileSizeHistogram"]
    assert sum(h["fileCounts"]) == files and sum(h["totalBytes"]) == size
    return crc


def _rewrite_crc(path, version, change):
    """Changes a checksum file in place (and drops Hadoop's ``.<name>.crc`` side file of it, which
    would otherwise make readers ignore the changed file)."""
    f = _crc_path(path, version)
    crc = json.load(open(f))
    change(crc)
    with open(f, "w") as fh:
        fh.write(json.dumps(crc) + "\n")
    side = os.path.join(os.path.dirname(f), "." + os.path.basename(f) + ".crc")
    if os.path.exists(side):
        os.remove(side)


def _validated(delta_spark, path, version):
    """Delta's own validation of the latest checksum file: present, for ``version``, and valid
    (once the server's background post-commit work has written it)."""
    _crc(path, version)
    r = delta_spark.read_one({"kind": "checksum", "path": path})
    assert r["ok"] and r["has_checksum"] and r["valid"] and r["version"] == version, r


def _delta_sql(delta_spark, path, *statements):
    out = []
    for s in [*VERIFY, *statements, *UNVERIFY]:
        out.append(delta_spark.read_one({"kind": "sql", "path": path, "sql": s}))
    return out[len(VERIFY):len(VERIFY) + len(statements)]


FIXTURES = {
    "by_delta": [{"sql": "CREATE TABLE {table} (id BIGINT, part STRING) USING delta PARTITIONED BY (part) "
                         "TBLPROPERTIES ('delta.enableDeletionVectors'='true')"},
                 {"sql": "INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, 'a')"}],
}


def test_filecommit_writes_checksums_delta_validates(spark, delta_spark, table_path):
    df = spark.createDataFrame([(i, "a" if i % 2 else "b") for i in range(6)], "id long, part string")
    filecommit.write(df, table_path, partition_by=["part"], table_properties={"delta.enableDeletionVectors": "true",
                                                                             "delta.enableInCommitTimestamps": "true"})
    filecommit.write(spark.createDataFrame([(10, "c")], "id long, part string"), table_path, txn=("app", 1))
    filecommit.delete(spark, table_path, "id = 1")
    filecommit.write(spark.createDataFrame([(20, "a"), (21, "a")], "id long, part string"), table_path,
                     mode="overwrite", options={"replaceWhere": "part = 'a'"})
    filecommit.optimize(spark, table_path)
    last = max(log_actions(table_path))
    _validated(delta_spark, table_path, last)
    for v in range(last + 1):
        crc = _check_crc(table_path, v)
        assert crc.get("inCommitTimestampOpt") == log_actions(table_path)[v][0]["commitInfo"]["inCommitTimestamp"]
    assert crc["setTransactions"][0]["appId"] == "app" and crc["setTransactions"][0]["version"] == 1
    assert crc["domainMetadata"] == []

    # Delta validates our latest checksum when its transaction starts, then writes on top of it.
    ins = _delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (30, 'e')")
    assert ins[0]["ok"], ins[0]
    _validated(delta_spark, table_path, last + 1)  # Delta's checksum, derived from ours
    rows = delta_spark.read_one({"path": table_path, "kind": "table"})
    assert sorted(r["id"] for r in rows["rows"]) == [0, 2, 4, 10, 20, 21, 30]

    # The check is real: a checksum that disagrees with the table fails Delta's transaction.
    bad = os.path.join(shared_dir(os.path.dirname(table_path)), "corrupt")
    shutil.copytree(table_path, bad)
    _rewrite_crc(bad, last + 1, lambda c: c.update(tableSizeBytes=c["tableSizeBytes"] + 1))
    failed = delta_spark.read_one({"kind": "checksum", "path": bad})
    assert not failed["ok"] and failed["condition"] == INTEGRITY, failed


def test_delta_checksums_then_filecommit(spark, delta_spark, made, tmp_path):
    src = made["by_delta"]["path"]
    v = made["by_delta"]["version"]
    assert os.path.exists(_crc_path(src, v))
    for case in ("as_written", "corrupt"):
        path = os.path.join(shared_dir(tmp_path), case)
        shutil.copytree(src, path)
        if case == "corrupt":
            # Another writer's checksum that disagrees with the table: never carried forward.
            def corrupt(c):
                c["numFiles"] += 5
                c["tableSizeBytes"] += 500
                c["fileSizeHistogram"]["fileCounts"][0] += 5
                c["fileSizeHistogram"]["totalBytes"][0] += 500

            _rewrite_crc(path, v, corrupt)
            bad = delta_spark.read_one({"kind": "checksum", "path": path})
            assert not bad["ok"] and bad["condition"] == INTEGRITY, bad
        r = filecommit.write(spark.createDataFrame([(4, "c")], "id long, part string"), path)
        assert r.version == v + 1
        _check_crc(path, v + 1)
        _validated(delta_spark, path, v + 1)
        filecommit.delete(spark, path, "id = 2")
        _check_crc(path, v + 2)
        _validated(delta_spark, path, v + 2)
        ins = _delta_sql(delta_spark, path, "INSERT INTO {table} VALUES (5, 'a')")
        assert ins[0]["ok"], (case, ins[0])
        _validated(delta_spark, path, v + 3)
        rows = delta_spark.read_one({"path": path, "kind": "table"})
        assert sorted(r["id"] for r in rows["rows"]) == [1, 3, 4, 5], case
