"""Spark + Delta as a long-lived subprocess: makes fixture tables with real delta-spark and reads tables.

Two halves in one file, so the wire format lives in one place:

* the **worker** runs in ``.venv-delta`` (``make delta-reader``: Spark 4.2.0 + delta-spark 4.4.0,
  the same session settings as ``delta_spark_reader._session``): ``python delta_tables.py --serve``
  answers one JSON request per stdin line with one response line on stdout (prefixed with
  ``RESPONSE_MARK``; Spark's logs go to stderr). ``python delta_tables.py '<request>'`` answers one
  request and exits.
* :class:`DeltaSpark` runs in the test process (no pyspark import): starts the worker once per
  pytest session (conftest fixture ``delta_spark``), so Spark + Delta's start (~15-20 s) is paid once
  for making every fixture table and for every later read.

Requests::

    {"op": "make", "tables": [{"name": "check", "path": "/abs/dir",
                               "steps": [{"sql": "CREATE TABLE {table} (id BIGINT) USING delta"},
                                         {"dataframe": {"schema": <StructType JSON>, "rows": [[...]],
                                                        "mode": "append", "partitionBy": [],
                                                        "options": {"mergeSchema": "true"}}}],
                               "drop_commits_before": 20}],
     "parallel": 2}
    {"op": "read", "reads": [<read>, ...]}
    {"op": "stop"}

``{table}`` in SQL is replaced by ``delta.`<path>```. ``drop_commits_before: N`` deletes the JSON
commits (and their ``.crc`` checksum files) of versions < N after the steps, as log retention does,
keeping checkpoints and ``_last_checkpoint``. ``parallel`` tables are made at once (threads of one
Spark session; default 1). ``make`` answers, per table, ``{"name", "path", "ok",
"error", "seconds"}`` plus the ``detail`` read below, and the table read (``columns``, ``rows``,
``version``) as Spark + Delta sees the finished table.

Reads: the kinds of ``delta_spark_reader`` (``table``, ``cdf``, ``history``) and

* ``{"kind": "detail", "path": p}``: ``DESCRIBE DETAIL`` (``minReaderVersion``,
  ``minWriterVersion``, ``tableFeatures``, ``partitionColumns``, ``properties``), the schema as
  Spark + Delta reads it (``schema``: StructType JSON) and ``latest_version``.
* ``{"kind": "sql", "sql": "SHOW TBLPROPERTIES {table}", "path": p}``: any statement's rows.
* ``{"kind": "checksum", "path": p}``: Delta's validation of the latest version's ``.crc`` file
  against its own state reconstruction: ``version``, ``has_checksum``, ``valid`` (a mismatch fails
  the read with ``DELTA_TXN_LOG_FAILED_INTEGRITY``).

A failed read answers ``{"ok": false, "error": "...", "condition": <error class or null>}``.
Delta's ``DeltaLog`` cache is kept between the requests of one test: every read calls Delta's own
``update()`` (staleness limit 0), which lists ``_delta_log`` and loads a new snapshot when another
engine has committed, cleaned the log or deleted and re-made the table. A request with
``"fresh": true`` clears the whole cache first (:class:`DeltaSpark` marks each test's first request
so; Delta's ``delta.log.cacheSize`` bounds the cache too), and ``make`` drops a table's entry after
``drop_commits_before``. Clearing it before every request cost about 1 s per read of a table.
"""

from __future__ import annotations

import glob
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time

RESPONSE_MARK = "@@delta_tables@@ "
HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------------------------
# Worker side (.venv-delta: pyspark 4.2.0 + delta-spark 4.4.0)
# ---------------------------------------------------------------------------------------------

def _table_ref(path: str) -> str:
    return "delta.`" + path.replace("`", "``") + "`"


def _error(e: BaseException) -> dict:
    msg = str(e).strip().splitlines()
    condition = None
    get = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
    if get is not None:
        try:
            condition = get()
        except Exception:  # noqa: BLE001 - best effort
            condition = None
    if condition is None:
        m = re.search(r"\[([A-Z][A-Z0-9_]+(?:\.[A-Z0-9_]+)*)\]", str(e))
        condition = m.group(1) if m else None
    return {"ok": False, "error": f"{type(e).__name__}: {msg[0] if msg else ''}", "condition": condition,
            "detail": "\n".join(msg[:40])}


def _clear_delta_cache(spark) -> None:
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()


def drop_commits_before(path: str, version: int) -> list[str]:
    """Delete the JSON commits of versions < ``version`` and their checksum files (``N.crc`` and the
    Hadoop ``.N.json.crc`` / ``.N.crc.crc`` side files), as Delta's log cleanup does; checkpoints and
    ``_last_checkpoint`` stay. Returns the deleted file names."""
    log = os.path.join(path, "_delta_log")
    deleted = []
    for name in sorted(os.listdir(log)):
        m = re.fullmatch(r"\.?(\d{20})\.(json|crc)(\.crc)?", name)
        if m and int(m.group(1)) < version:
            os.remove(os.path.join(log, name))
            deleted.append(name)
    return deleted


def _detail(spark, path: str) -> dict:
    from delta.tables import DeltaTable

    row = spark.sql(f"DESCRIBE DETAIL {_table_ref(path)}").collect()[0].asDict(recursive=True)
    keep = ("minReaderVersion", "minWriterVersion", "tableFeatures", "partitionColumns", "properties",
            "numFiles")
    out = {k: row.get(k) for k in keep}
    out["schema"] = spark.read.format("delta").load(path).schema.jsonValue()
    hist = DeltaTable.forPath(spark, path).history(1).collect()
    out["latest_version"] = hist[0]["version"] if hist else None
    return out


def _read_one(spark, req: dict) -> dict:
    import delta_spark_reader

    kind = req.get("kind", "table")
    if kind == "detail":
        return _detail(spark, req["path"])
    if kind == "sql":
        stmt = req["sql"].replace("{table}", _table_ref(req["path"])) if req.get("path") else req["sql"]
        return delta_spark_reader._collected(spark.sql(stmt))
    if kind == "checksum":
        # Delta's own check of the latest version's checksum file against its state reconstruction
        # (Snapshot.validateChecksum; a mismatch raises DELTA_TXN_LOG_FAILED_INTEGRITY).
        snapshot = delta_spark_reader.latest_snapshot(spark, req["path"])
        has = bool(snapshot.checksumOpt().isDefined())
        valid = bool(snapshot.validateChecksum(getattr(snapshot, "validateChecksum$default$1")()))
        return {"version": int(snapshot.version()), "has_checksum": has, "valid": valid}
    return delta_spark_reader._read(spark, req)


def _make_one(spark, spec: dict) -> dict:
    from pyspark.sql.types import StructType

    t0 = time.monotonic()
    path = spec["path"]
    out = {"name": spec.get("name"), "path": path}
    try:
        for step in spec.get("steps", []):
            if "sql" in step:
                spark.sql(step["sql"].replace("{table}", _table_ref(path)))
            elif "dataframe" in step:
                d = step["dataframe"]
                schema = StructType.fromJson(d["schema"]) if isinstance(d["schema"], dict) else d["schema"]
                writer = spark.createDataFrame([tuple(r) for r in d["rows"]], schema) \
                    .write.format("delta").mode(d.get("mode", "append"))
                if d.get("partitionBy"):
                    writer = writer.partitionBy(*d["partitionBy"])
                for k, v in (d.get("options") or {}).items():
                    writer = writer.option(k, v)
                writer.save(path)
            else:
                raise ValueError(f"unknown step {step!r} (sql | dataframe)")
        if spec.get("drop_commits_before") is not None:
            out["dropped"] = drop_commits_before(path, int(spec["drop_commits_before"]))
            jvm = spark._jvm
            jvm.org.apache.spark.sql.delta.DeltaLog.invalidateCache(spark._jsparkSession, jvm.org.apache.hadoop.fs.Path(path))
        out["detail"] = _detail(spark, path)
        out.update(_table_read(spark, path))
        out["ok"] = True
    except Exception as e:  # noqa: BLE001 - one failed table must not hide the others
        out.update(_error(e))
    out["seconds"] = round(time.monotonic() - t0, 2)
    return out


def _table_read(spark, path: str) -> dict:
    import delta_spark_reader

    return delta_spark_reader._read(spark, {"path": path, "kind": "table"})


def _answer(spark, request: dict) -> dict:
    t0 = time.monotonic()
    if request.get("fresh"):
        _clear_delta_cache(spark)
    op = request.get("op")
    if op == "make":
        from concurrent.futures import ThreadPoolExecutor

        # Tables are independent: a few threads overlap Delta's per-commit latency (one long chain,
        # e.g. 25 appends, runs while the others are made).
        with ThreadPoolExecutor(max(1, int(request.get("parallel", 1)))) as pool:
            results = list(pool.map(lambda spec: _make_one(spark, spec), request["tables"]))
    elif op == "read":
        results = []
        for req in request["reads"]:
            try:
                results.append(dict(ok=True, **_read_one(spark, req)))
            except Exception as e:  # noqa: BLE001 - one failed read must not hide the others
                results.append(_error(e))
    else:
        raise ValueError(f"unknown op {op!r} (make | read | stop)")
    return {"ok": True, "results": results, "seconds": round(time.monotonic() - t0, 2)}


def _respond(obj: dict) -> None:
    sys.stdout.write(RESPONSE_MARK + json.dumps(obj) + "\n")
    sys.stdout.flush()


def worker_main(argv) -> int:
    sys.path.insert(0, HERE)
    import delta_spark_reader
    import pyspark

    t0 = time.monotonic()
    spark = delta_spark_reader._session()
    hello = {"ok": True, "ready": True, "spark": pyspark.__version__, "delta": delta_spark_reader.DELTA_VERSION,
             "session_start": round(time.monotonic() - t0, 2)}
    try:
        if len(argv) > 1 and argv[1] != "--serve":
            _respond(_answer(spark, json.loads(argv[1])))
            return 0
        _respond(hello)
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                if request.get("op") == "stop":
                    _respond({"ok": True, "stopped": True})
                    break
                _respond(_answer(spark, request))
            except Exception as e:  # noqa: BLE001 - keep serving; the client sees the error
                _respond(_error(e))
    finally:
        spark.stop()
    return 0


# ---------------------------------------------------------------------------------------------
# Client side (the pytest process)
# ---------------------------------------------------------------------------------------------

class DeltaSparkError(RuntimeError):
    pass


def _log_timing(request: dict, answer: dict, seconds: float) -> None:
    """With ``$FILECOMMIT_DELTA_TIMING`` set to a file path, appends one JSON line per request (the
    test, the op, the read kinds, seconds waited and seconds the worker spent): where the suite's
    time in Spark + Delta goes."""
    target = os.environ.get("FILECOMMIT_DELTA_TIMING")
    if not target:
        return
    kinds = [r.get("kind", "table") for r in request.get("reads", [])] or [len(request.get("tables", []))]
    line = {"test": os.environ.get("PYTEST_CURRENT_TEST", ""), "op": request.get("op"), "kinds": kinds,
            "waited": round(seconds, 3), "worker": answer.get("seconds")}
    with open(target, "a") as fh:
        fh.write(json.dumps(line) + "\n")


class DeltaSpark:
    """Client of one ``--serve`` worker: ``make(tables)``, ``read(reads)``, ``close()``.

    :param python: the ``.venv-delta`` interpreter
    :param stderr_path: file receiving the worker's stderr (Spark's logs), quoted on failures
    :param s3a_conf: Spark conf pointing the worker's S3A at an S3 server (``tests/s3.py``
        ``server_conf``), so it reads ``s3a://`` tables too; None: local tables only
    """

    def __init__(self, python: str, stderr_path: str, start_timeout: float = 300, s3a_conf: dict | None = None):
        # The worker is a classic Spark session: without this process's Spark Connect markers.
        # TZ=UTC: Python's datetimes from collect() and Spark's session zone agree.
        env = {k: v for k, v in os.environ.items() if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}
        env["TZ"] = "UTC"
        if s3a_conf:
            env["FILECOMMIT_DELTA_S3A_CONF"] = json.dumps(s3a_conf)
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "w")
        self.proc = subprocess.Popen([python, os.path.abspath(__file__), "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr, text=True, bufsize=1, env=env,
                                     cwd=HERE)
        self._lines: queue.Queue = queue.Queue()
        self._pump = threading.Thread(target=self._read_stdout, daemon=True)
        self._pump.start()
        self._start_timeout = start_timeout
        self.hello = None
        self._lock = threading.Lock()
        self._test: str | None = None

    def _read_stdout(self):
        for line in self.proc.stdout:
            if line.startswith(RESPONSE_MARK):
                self._lines.put(line[len(RESPONSE_MARK):])
        self._lines.put(None)

    def _stderr_tail(self, n: int = 6000) -> str:
        try:
            with open(self.stderr_path) as fh:
                return fh.read()[-n:]
        except OSError:
            return ""

    def _next(self, timeout: float) -> dict:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise DeltaSparkError(f"Spark + Delta worker: no answer in {timeout} s\n{self._stderr_tail()}") from None
        if line is None:
            raise DeltaSparkError(f"Spark + Delta worker exited ({self.proc.poll()}):\n{self._stderr_tail()}")
        return json.loads(line)

    def ready(self) -> dict:
        """The worker's hello (Spark and Delta versions), waiting for its Spark session to start."""
        if self.hello is None:
            self.hello = self._next(self._start_timeout)
        return self.hello

    def submit(self, request: dict, timeout: float = 900):
        """Sends ``request`` now; returns ``wait()`` giving the answer (the caller may do other work,
        e.g. start the Spark Connect server, while Spark + Delta works)."""
        self._lock.acquire()
        # Each test starts from an empty DeltaLog cache: its tables' snapshots are kept from one
        # request to the next, never across tests (the worker's heap holds one test's tables).
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
        if test != self._test:
            self._test = test
            request = {**request, "fresh": True}
        try:
            # The pipe holds the request while the worker's Spark starts.
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError) as e:
            self._lock.release()
            raise DeltaSparkError(f"Spark + Delta worker gone: {e}\n{self._stderr_tail()}") from e
        except BaseException:
            self._lock.release()
            raise

        started = time.monotonic()

        def wait() -> dict:
            try:
                self.ready()
                answer = self._next(timeout)
            finally:
                self._lock.release()
            _log_timing(request, answer, time.monotonic() - started)
            if not answer.get("ok"):
                raise DeltaSparkError(f"Spark + Delta worker failed the request: {answer}")
            return answer

        return wait

    def request(self, request: dict, timeout: float = 900) -> dict:
        return self.submit(request, timeout)()

    def make(self, tables: list, parallel: int = 2):
        """Starts making the tables (``parallel`` at once); returns ``wait()`` giving name -> answer."""
        wait = self.submit({"op": "make", "tables": tables, "parallel": parallel})
        return lambda: {t["name"]: t for t in wait()["results"]}

    def read(self, reads: list) -> list:
        return self.request({"op": "read", "reads": reads})["results"]

    def read_one(self, read: dict) -> dict:
        return self.read([read])[0]

    def close(self):
        try:
            if self.proc.poll() is None and self.hello is not None:
                self.proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=60)
        except Exception:  # noqa: BLE001 - fall through to terminate
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
            self._stderr.close()


def log_file_names(path: str) -> list:
    """The names in ``_delta_log`` (sorted), for "nothing new was committed" checks; without the
    ``<version>.crc`` checksum files, which the server writes in the background after a commit.
    Local or ``s3a://`` (test process side only: ``helpers.log_names``)."""
    if path.startswith("s3a://"):
        from helpers import log_names

        return [n for n in log_names(path) if not n.endswith(".crc")]
    return sorted(n for n in os.listdir(os.path.join(path, "_delta_log")) if not n.endswith(".crc"))


def commit_versions(path: str) -> list:
    """The versions of the JSON commits in ``_delta_log``, ascending; local or ``s3a://``."""
    if path.startswith("s3a://"):
        return sorted(int(n[:20]) for n in log_file_names(path) if re.fullmatch(r"\d{20}\.json", n))
    return sorted(int(os.path.basename(f).split(".")[0])
                  for f in glob.glob(os.path.join(path, "_delta_log", "[0-9]" * 20 + ".json")))


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv))
