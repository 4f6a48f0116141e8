"""Independent Spark + Delta reader, run by ``.venv-delta/bin/python`` (``make delta-reader``).

Our server runs Spark 4.3.0, for which no delta-spark build exists, so the tests read the tables we
write with Spark 4.2.0 + delta-spark 4.4.0 in a separate virtualenv, as a classic local Spark
session in a subprocess. One Spark session answers every read of one invocation.

Request (JSON, as argv[1] or on stdin)::

    {"reads": [{"path": "/t", "kind": "table", "version": null},
               {"path": "/t", "kind": "cdf", "startingVersion": 1, "endingVersion": null},
               {"path": "/t", "kind": "history"}]}

(a bare list of reads is accepted too). Response on stdout, one JSON object::

    {"spark": "4.2.0", "delta": "4.4.0", "seconds": {...},
     "results": [{"ok": true, "columns": [...], "rows": [{...}, ...], "version": 3}
                 | {"ok": false, "error": "ExceptionClass: message"}, ...]}

Rows are dicts; timestamps, dates and decimals are strings; CDF rows carry ``_change_type``,
``_commit_version`` and ``_commit_timestamp``. ``version`` is the snapshot version read (table
reads) and ``history`` gives the commit versions with their operation metrics. Spark's own logs
go to stderr; only the response goes to stdout.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys
import tempfile
import time

DELTA_VERSION = os.environ.get("FILECOMMIT_DELTA_SPARK_VERSION", "4.4.0")


def delta_jars() -> list[str]:
    """The delta-spark and delta-storage jars that ``make delta-reader`` copied with Maven.

    Looked up in ``$FILECOMMIT_DELTA_JARS_DIR``, else ``<venv of this interpreter>/jars``.

    :returns: absolute jar paths
    :raises FileNotFoundError: when the folder holds no delta-spark jar (run ``make delta-reader``)
    """
    folder = os.environ.get("FILECOMMIT_DELTA_JARS_DIR", os.path.join(sys.prefix, "jars"))
    jars = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".jar")) \
        if os.path.isdir(folder) else []
    if not any(os.path.basename(j).startswith("delta-spark") for j in jars):
        raise FileNotFoundError(f"no delta-spark jar in {folder}: run `make delta-reader`")
    return jars


def s3a_jars() -> list[str]:
    """The Hadoop S3A connector's jars for this reader (``make delta-reader`` fetches with Maven the
    hadoop-aws of pyspark's own Hadoop version, and its AWS SDK modules, into ``<venv>/s3a-jars``);
    empty when absent (the reader then reads local tables only)."""
    folder = os.environ.get("FILECOMMIT_DELTA_S3A_JARS_DIR", os.path.join(sys.prefix, "s3a-jars"))
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".jar")) \
        if os.path.isdir(folder) else []


def _session():
    """The classic Spark + Delta session. ``$FILECOMMIT_DELTA_S3A_CONF`` (a JSON object of Spark conf,
    e.g. ``spark.hadoop.fs.s3a.endpoint``) points its S3A at an S3 server, with :func:`s3a_jars`."""
    import json

    from pyspark.sql import SparkSession

    s3a_conf = json.loads(os.environ.get("FILECOMMIT_DELTA_S3A_CONF") or "{}")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("filecommit-delta-reader")
        .config("spark.jars", ",".join(delta_jars() + (s3a_jars() if s3a_conf else [])))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # Delta's VACUUM lists directories in a job of this many tasks (Spark's default 10,000: ~50 s on
        # two cores for a tiny table).
        .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "4")
        # Log replay of our small tables: one partition instead of the default 50 tasks per snapshot.
        .config("spark.databricks.delta.snapshotPartitions", "1")
        # The reader's queries are small: whole-stage code generation and adaptive re-planning cost
        # more than they save there (about 15 % of the reader's time in a benchmark). Neither changes
        # what Delta reads or how it checks the log.
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.adaptive.enabled", "false")
        # At most 16 tables' DeltaLogs (and their cached states) at once; a 2 GiB heap for the
        # 60,000-file table of test_sidecar_checkpoints next to them.
        .config("spark.driver.extraJavaOptions", "-Ddelta.log.cacheSize=16")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="filecommit-delta-reader-"))
        # Hadoop's own umask for the files and directories it makes (default 022): a server running
        # as another user (docker/test-containers.sh sets 000) must write into the fixture tables.
        .config("spark.hadoop.fs.permissions.umask-mode", os.environ.get("FILECOMMIT_TEST_UMASK", "022"))
    )
    for key, value in s3a_conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


_UPDATE_ARITY: list[int] = []  # DeltaLog.update's parameter count, looked up once per process


def latest_snapshot(spark, path: str):
    """Delta's latest snapshot of ``path``: ``DeltaLog.update()`` (Scala defaults: no staleness
    accepted), which lists ``_delta_log`` and loads a new snapshot only when the log changed."""
    log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
    if not _UPDATE_ARITY:
        # One py4j call per method of DeltaLog: done once, not on every read.
        _UPDATE_ARITY.append(max(m.getParameterCount() for m in log.getClass().getMethods()
                                 if m.getName() == "update"))
    return log.update(*[getattr(log, f"update$default${i}")() for i in range(1, _UPDATE_ARITY[0] + 1)])


def _plain(value):
    if isinstance(value, (datetime.datetime, datetime.date, decimal.Decimal)):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "asDict"):
        return _plain(value.asDict(recursive=True))
    return value


def _collected(df):
    return {
        "columns": df.columns,
        "rows": [{k: _plain(v) for k, v in r.asDict(recursive=True).items()} for r in df.collect()],
    }


def _read(spark, req):
    kind = req.get("kind", "table")
    path = req["path"]
    if kind == "table":
        reader = spark.read.format("delta")
        if req.get("version") is not None:
            reader = reader.option("versionAsOf", int(req["version"]))
        out = _collected(reader.load(path))
        # The latest version from Delta's own update of the table's log (a listing; nothing to load
        # when the read above already updated it), not from history(1): one more query per read.
        latest = latest_snapshot(spark, path).version()
        out["latest_version"] = latest if latest >= 0 else None
        out["version"] = int(req["version"]) if req.get("version") is not None else out["latest_version"]
        return out
    if kind == "cdf":
        reader = spark.read.format("delta").option("readChangeFeed", "true")
        reader = reader.option("startingVersion", int(req.get("startingVersion") or 0))
        if req.get("endingVersion") is not None:
            reader = reader.option("endingVersion", int(req["endingVersion"]))
        return _collected(reader.load(path))
    if kind == "history":
        from delta.tables import DeltaTable

        hist = DeltaTable.forPath(spark, path).history()
        return _collected(hist.select("version", "operation", "operationParameters", "operationMetrics", "userId",
                                      "userName"))
    raise ValueError(f"unknown read kind {kind!r} (table | cdf | history)")


def main(argv):
    raw = argv[1] if len(argv) > 1 and argv[1] != "-" else sys.stdin.read()
    request = json.loads(raw)
    reads = request["reads"] if isinstance(request, dict) else request
    t0 = time.monotonic()
    spark = _session()
    started = time.monotonic() - t0
    results = []
    try:
        for req in reads:
            try:
                results.append(dict(ok=True, **_read(spark, req)))
            except Exception as e:  # one failed read must not hide the others
                msg = str(e).strip().splitlines()
                results.append({"ok": False, "error": f"{type(e).__name__}: {msg[0] if msg else ''}",
                                "detail": "\n".join(msg[:40])})
        import pyspark

        response = {
            "spark": pyspark.__version__,
            "delta": DELTA_VERSION,
            "seconds": {"session_start": round(started, 2), "total": round(time.monotonic() - t0, 2)},
            "results": results,
        }
    finally:
        spark.stop()
    sys.stdout.write(json.dumps(response) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
