"""One writer process of ``tests/test_crash.py``: a stream of filecommit commits through its own
Spark Connect session, journaled durably, surviving server crashes by retrying the same write.

Run as ``python crash_writer.py '<json config>'`` (see :func:`main`). The writer owns the
partitions ``writer = <its id>`` of the main table (partitioned by ``writer, bucket``), so the
expected state of each partition follows from this writer's journal alone:

* ``append``: blind append of 1-4 rows, without ``txn`` or with ``txn=("crash-<id>", seq)``;
* ``overwrite``: ``mode="overwrite"``, ``replaceWhere`` of one of its partitions, with txn;
* ``delete`` / ``update``: row-level changes in one of its partitions with a row predicate, with
  txn; the update sets a constant, so it is idempotent too;
* ``shared``: when the controller announces a fresh table (``fresh.json``), every writer races
  ``txn=("shared-<round>", 1)`` (the first write, on a path without a table) and then
  ``("shared-<round>", 2)`` on it: each txn version must land exactly once over all writers.

Every row carries ``writer, seq, attempt, row``: unique per attempt, so a duplicate, a lost row
and a row of an attempt that must not have landed are all visible.

Journal (one JSON object per line, appended, flushed and fsynced before the next step):
``intent`` (before each attempt: the op with its rows), then ``ack`` (committed, version) or
``error`` (error class; ``ambiguous`` when the attempt may have landed: anything but a server
``DELTA_*`` / ``FILECOMMIT_*`` error, which promises that nothing was committed, except
``FILECOMMIT_COMMIT_STATE_UNKNOWN``), ``gave_up``
(the op is abandoned), ``done`` at the end. On an ambiguous error the writer drops its session,
waits until the server answers a new one, and retries the same op (same seq, next attempt).
"""

from __future__ import annotations

import json
import os
import random
import socket
import sys
import time
import traceback

SCHEMA_FIELDS = [("writer", "string"), ("seq", "long"), ("attempt", "int"), ("row", "int"),
                 ("bucket", "int"), ("val", "long")]
PARTITION_BY = ["writer", "bucket"]
BUCKETS = 4
# Conflict classes after which the same op is simply sent again (nothing was committed).
RETRYABLE = ("DELTA_CONCURRENT_", "DELTA_PROTOCOL_CHANGED", "DELTA_METADATA_CHANGED")
MAX_ATTEMPTS = 40


def app_id(writer: str) -> str:
    return f"crash-{writer}"


def shared_app_id(rnd: int) -> str:
    return f"shared-{rnd}"


def make_op(rng: random.Random, writer: str, seq: int, main_path: str, first: bool) -> dict:
    """The op of ``seq`` (drawn from this writer's seeded RNG); ``first``: this writer's first op
    on the main table, an append (the writers race to create the table)."""
    def rows(bucket=None):
        n = rng.randint(1, 4)
        return [[r, bucket if bucket is not None else rng.randrange(BUCKETS), seq * 10 + r] for r in range(n)]

    x = rng.random()
    if first or x < 0.80:
        txn = rng.random() < 0.45
        return {"kind": "append", "path": main_path, "table": "main", "rows": rows(),
                "txn": [app_id(writer), seq] if txn else None}
    b = rng.randrange(BUCKETS)
    if x < 0.87:
        return {"kind": "overwrite", "path": main_path, "table": "main", "bucket": b, "rows": rows(b),
                "txn": [app_id(writer), seq]}
    if x < 0.93:
        return {"kind": "delete", "path": main_path, "table": "main", "bucket": b, "mod": 3,
                "rem": rng.randrange(3), "txn": [app_id(writer), seq]}
    return {"kind": "update", "path": main_path, "table": "main", "bucket": b, "mod": 2, "rem": rng.randrange(2),
            "set_val": -seq, "txn": [app_id(writer), seq]}


def condition(writer: str, op: dict) -> str:
    return f"writer = '{writer}' AND bucket = {op['bucket']} AND (seq + row) % {op['mod']} = {op['rem']}"


class Journal:
    def __init__(self, path: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, **event) -> None:
        event["t"] = round(time.time(), 3)
        data = (json.dumps(event, separators=(",", ":")) + "\n").encode()
        os.write(self.fd, data)  # one write(2) of one line, O_APPEND
        os.fsync(self.fd)


def error_class(e: BaseException) -> str:
    get = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
    cls = None
    if get is not None:
        try:
            cls = get()
        except Exception:  # noqa: BLE001 - fall back to the type name
            cls = None
    return cls or type(e).__name__


# The one server class after which the commit may have landed (README "Reliability").
STATE_UNKNOWN = "FILECOMMIT_COMMIT_STATE_UNKNOWN"


def definitive(cls: str) -> bool:
    """A server-side filecommit / Delta error: the server promises nothing was committed."""
    return (cls.startswith("DELTA_") or cls.startswith("FILECOMMIT_")) and cls != STATE_UNKNOWN


class Writer:
    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.writer = cfg["writer"]
        self.url = cfg["url"]
        self.journal = Journal(cfg["journal"])
        self.rng = random.Random(f"{cfg['seed']}:{self.writer}")
        self.spark = None
        self.rounds_done = -1

    # -- sessions -----------------------------------------------------------------------------

    def _new_session(self):
        from crash_server import fast_retry_policy
        from pyspark.sql.connect.session import SparkSession

        s = SparkSession.builder.remote(self.url).create()
        # pyspark's default policy waits up to 10 minutes for a dead server; fail within ~2 s
        # instead and let this writer wait and retry the write itself.
        s.client.set_retry_policies([fast_retry_policy()])
        # A first query makes the session known on both sides before any write is sent.
        if s.range(1).count() != 1:
            raise RuntimeError("probe query gave a wrong answer")
        return s

    def _drop_session(self) -> None:
        s, self.spark = self.spark, None
        if s is not None:
            try:
                s.client.close()
            except Exception:  # noqa: BLE001 - the server may be gone
                pass

    def session(self):
        if self.spark is not None:
            return self.spark
        deadline = time.monotonic() + float(self.cfg.get("server_wait", 600))
        last = None
        host, port = self.url[len("sc://"):].split("/", 1)[0].rsplit(":", 1)
        while time.monotonic() < deadline:
            try:
                # Cheap until the port listens: a new pyspark session costs CPU the starting
                # server needs.
                socket.create_connection((host, int(port)), timeout=1).close()
            except OSError as e:
                last = e
                time.sleep(0.25)
                continue
            try:
                self.spark = self._new_session()
                return self.spark
            except Exception as e:  # noqa: BLE001 - the server is down or starting
                last = e
                time.sleep(0.3)
        raise RuntimeError(f"server not back in time: {last!r}")

    # -- ops ------------------------------------------------------------------------------------

    def _df(self, spark, seq: int, attempt: int, rows: list):
        from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

        types = {"string": StringType(), "long": LongType(), "int": IntegerType()}
        schema = StructType([StructField(n, types[t], True) for n, t in SCHEMA_FIELDS])
        data = [(self.writer, seq, attempt, r, b, v) for r, b, v in rows]
        return spark.createDataFrame(data, schema)

    def _execute(self, op: dict, seq: int, attempt: int):
        import filecommit

        spark = self.session()
        txn = tuple(op["txn"]) if op.get("txn") else None
        kind = op["kind"]
        if kind == "append":
            return filecommit.write(self._df(spark, seq, attempt, op["rows"]), op["path"], mode="append",
                                    partition_by=PARTITION_BY, txn=txn)
        if kind == "overwrite":
            return filecommit.write(self._df(spark, seq, attempt, op["rows"]), op["path"], mode="overwrite",
                                    partition_by=PARTITION_BY, txn=txn,
                                    options={"replaceWhere": f"writer = '{self.writer}' AND bucket = {op['bucket']}"})
        if kind == "delete":
            return filecommit.delete(spark, op["path"], condition(self.writer, op), txn=txn)
        if kind == "update":
            return filecommit.update(spark, op["path"], set={"val": f"CAST({int(op['set_val'])} AS BIGINT)"},
                                     condition=condition(self.writer, op), txn=txn)
        if kind == "shared":
            return filecommit.write(self._df(spark, seq, attempt, op["rows"]), op["path"], mode="append", txn=txn)
        raise ValueError(kind)

    def run_op(self, seq: int, op: dict) -> None:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                self.session()  # wait for the server before announcing the attempt
            except Exception as e:
                self.journal.write(ev="gave_up", seq=seq, reason=f"no server: {e!r}")
                raise
            self.journal.write(ev="intent", seq=seq, attempt=attempt, op=op)
            try:
                r = self._execute(op, seq, attempt)
            except Exception as e:  # noqa: BLE001 - every error is journaled and classified
                cls = error_class(e)
                ambiguous = not definitive(cls)
                first = (str(e).strip().splitlines() or [""])[0][:300]
                self.journal.write(ev="error", seq=seq, attempt=attempt, cls=cls, ambiguous=ambiguous, msg=first)
                if ambiguous:
                    self._drop_session()
                    continue
                if cls.startswith(RETRYABLE):
                    time.sleep(self.rng.uniform(0.05, 0.3))
                    continue
                self.journal.write(ev="gave_up", seq=seq, reason=cls)
                return
            metrics = getattr(r, "metrics", None)
            self.journal.write(ev="ack", seq=seq, attempt=attempt, committed=bool(getattr(r, "committed", True)),
                               version=getattr(r, "version", None), adds=len(getattr(r, "add_files", []) or []),
                               removes=len(getattr(r, "remove_files", []) or []),
                               commit_attempts=getattr(metrics, "attempts", None))
            return
        self.journal.write(ev="gave_up", seq=seq, reason=f"{MAX_ATTEMPTS} attempts")

    def _announced_round(self):
        try:
            with open(self.cfg["fresh"]) as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    def loop(self) -> None:
        self.journal.write(ev="start", writer=self.writer, pid=os.getpid())
        seq = main_ops = 0
        while not os.path.exists(self.cfg["stop"]):
            fresh = self._announced_round()
            if fresh is not None and fresh["round"] > self.rounds_done:
                self.rounds_done = fresh["round"]
                delay = fresh["start_at"] - time.time()
                if 0 < delay < 30:
                    time.sleep(delay)
                for v in (1, 2):
                    rows = [[r, 0, v] for r in range(self.rng.randint(1, 3))]
                    op = {"kind": "shared", "path": fresh["path"], "table": f"fresh-{fresh['round']}",
                          "round": fresh["round"], "rows": rows, "txn": [shared_app_id(fresh["round"]), v]}
                    self.run_op(seq, op)
                    seq += 1
                continue
            self.run_op(seq, make_op(self.rng, self.writer, seq, self.cfg["main"], first=not main_ops))
            main_ops += 1
            seq += 1
        self.journal.write(ev="done", seqs=seq)


def main(argv) -> int:
    cfg = json.loads(argv[1])
    w = Writer(cfg)
    try:
        w.loop()
    except BaseException as e:  # noqa: BLE001 - journaled, then the process exits 1
        w.journal.write(ev="crash", error=repr(e), trace=traceback.format_exc()[-4000:])
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # The journal is on disk. pyspark's background threads (ReleaseExecute calls of sessions on a
    # killed server) may retry for minutes at interpreter exit: leave without waiting for them.
    os._exit(code)
