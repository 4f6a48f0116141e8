#!/usr/bin/env python
"""UPDATE of 1% of TPC-H SF1 lineitem: filecommit vs Delta Lake on Spark (issue 9). Prints numbers.

Asserts nothing about speed; checks only that both sides did the same update. In one run:

1. ``tpchgen-cli`` (pip-installed into this venv when missing) writes TPC-H lineitem at scale factor
   ``--scale`` (1: 6,001,215 rows, ~232 MB) as one Parquet file, cached under ``--data``
   (default ``bench/.data/tpch-sf1``; ``bench/.data/`` is git-ignored).
2. Delta Lake on Spark (pyspark 4.2.0 + delta-spark 4.4.0 in ``.venv-delta``, jars from
   ``.venv-delta/jars`` via ``spark.jars``, never Ivy) makes ONE table from it with Delta's own writer:
   ``CREATE TABLE delta.`base` USING delta PARTITIONED BY (l_shipmode) TBLPROPERTIES
   ('delta.enableDeletionVectors' = 'false') AS SELECT * FROM parquet.`lineitem.parquet```. That JVM
   then exits; the table directory is copied twice with ``shutil.copytree``: copy A for filecommit,
   copy B for Delta, so both sides start from identical files.
3. Two fresh JVMs with the same settings (``local[2]``, ``spark.driver.memory`` ``--driver-memory``,
   ``spark.sql.shuffle.partitions`` 4 as ``filecommit.local_session()`` sets it): an embedded Spark
   Connect server with the plugin (``filecommit.local_session``) and a classic Spark + Delta session
   in a ``.venv-delta/bin/python`` subprocess of this script (``--delta-worker``). Only one of them
   works at a time.
4. Warm-up, the same on both sides and untimed: one full scan of the table
   (``count(*)``, ``count_if(l_orderkey % 100 = 0)``, ``sum(l_discount)``; A read as Parquet through
   Connect -- the server has no Delta reader -- and B through Delta; ``count_if`` and ``sum`` keep
   Delta from answering from file statistics). Both scans must agree. Then ``--warmup`` (default 0)
   untimed updates per side.
5. ``--runs`` (default 3) rounds, interleaved A, B, A, B, ...: ``filecommit.update(spark, A,
   set={"l_discount": "l_discount + 0.01"}, condition="l_orderkey % 100 = 0")`` and
   ``DeltaTable.forPath(spark, B).update("l_orderkey % 100 = 0", {"l_discount": "l_discount + 0.01"})``.
   Each round updates the same ~1% of the rows (59,647 at SF1, in every file) again.
6. Checked at the end (exit 1 on any mismatch): every update on both sides reports the same number
   of updated rows, equal to the rows matching the condition; Spark + Delta reads A and B back with
   the same row count, the same matching count and the same ``sum(l_discount)`` rounded to 2
   decimals, equal to the base sum + updates x matching rows x 0.01; both tables are at the version
   of their last update.

Units: seconds (s) of wall time of the update call as its caller sees it -- filecommit: the Python
call (plan sent, the server's scan, rewrite and commit, file actions streamed back); Delta: the
``DeltaTable.update`` call in its own process (its JVM, no client/server hop). Also printed per
sample: filecommit's ``result.metrics.duration_ms`` (server, ms) and Delta's ``executionTimeMs``
(ms) from its commit's operationMetrics (``DESCRIBE HISTORY``), with rows updated / copied and files
added / removed. Summary: the median per side and the ratio filecommit / Delta (goal <= 0.8).

Usage: ``.venv/bin/python bench/bench_update.py [--runs 3] [--warmup 0] [--scale 1] [--data DIR]
[--driver-memory 4g] [--out DIR | --keep] [--json FILE]`` (``make delta-reader`` and a built plugin
jar first; ``make bench`` runs the defaults). ``--out DIR`` puts the tables in DIR and keeps them;
``--keep`` keeps the temporary directory used otherwise. The plugin jar is copied into the work
directory and pinned with ``FILECOMMIT_JAR`` (unless that is set) so a rebuild during the run does
not change it; its sha256 is printed.
"""

from __future__ import annotations

import argparse
import decimal
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONDITION = "l_orderkey % 100 = 0"
SET = {"l_discount": "l_discount + 0.01"}
INCREMENT = decimal.Decimal("0.01")  # what SET adds to each matching row's l_discount
SHUFFLE_PARTITIONS = "4"  # filecommit.local_session()'s setting, used on both sides
MASTER = "local[2]"  # filecommit.local_session()'s default master, used on both sides
TPCHGEN = "tpchgen-cli==4.0.0"  # pip-installed into the running venv when the binary is missing
MARK = "@@bench_update@@ "  # prefix of the Delta worker's answer lines on its stdout
SCAN_SQL = ("count(*) AS rows", f"count_if({CONDITION}) AS matching", "CAST(sum(l_discount) AS STRING) AS sum_discount")


# ---------------------------------------------------------------------------------------------
# Delta side: runs in .venv-delta (pyspark 4.2.0 + delta-spark 4.4.0); one JSON request per line.
# ---------------------------------------------------------------------------------------------

def _delta_session(driver_memory, work_dir):
    """A classic local[2] Spark session with Delta (jars from .venv-delta/jars via spark.jars, no Ivy)."""
    sys.path.insert(0, str(REPO / "tests"))
    import delta_spark_reader
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(MASTER)
        .appName("bench-update-delta")
        .config("spark.jars", ",".join(delta_spark_reader.delta_jars()))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.shuffle.partitions", SHUFFLE_PARTITIONS)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.warehouse.dir", os.path.join(work_dir, "spark-warehouse"))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _delta_answer(spark, req):
    """Answer one request of the Delta worker; a JSON-able dict (times in seconds)."""
    from delta.tables import DeltaTable

    op = req["op"]
    if op == "create":
        table = "delta.`" + req["path"] + "`"
        t0 = time.perf_counter()
        spark.sql(f"CREATE TABLE {table} USING delta PARTITIONED BY (l_shipmode) "
                  "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false') "
                  f"AS SELECT * FROM parquet.`{req['source']}`")
        seconds = time.perf_counter() - t0
        detail = spark.sql(f"DESCRIBE DETAIL {table}").collect()[0]
        return {"seconds": seconds, "files": detail["numFiles"], "bytes": detail["sizeInBytes"],
                "properties": dict(detail["properties"] or {})}
    if op == "scan":
        t0 = time.perf_counter()
        row = spark.read.format("delta").load(req["path"]).selectExpr(*SCAN_SQL).collect()[0]
        return {"seconds": time.perf_counter() - t0, **row.asDict()}
    if op == "update":
        t0 = time.perf_counter()
        DeltaTable.forPath(spark, req["path"]).update(CONDITION, SET)
        seconds = time.perf_counter() - t0
        last = DeltaTable.forPath(spark, req["path"]).history(1).collect()[0]
        return {"seconds": seconds, "version": last["version"], "operation": last["operation"],
                "metrics": {k: int(v) for k, v in (last["operationMetrics"] or {}).items()}}
    if op == "check":
        out = {}
        for p in req["paths"]:
            row = spark.read.format("delta").load(p).selectExpr(*SCAN_SQL).collect()[0]
            version = DeltaTable.forPath(spark, p).history(1).collect()[0]["version"]
            out[p] = {**row.asDict(), "version": version}
        return {"tables": out}
    raise ValueError(f"unknown op {op!r}")


def delta_worker(driver_memory, work_dir):
    """Worker loop (in .venv-delta): one JSON request per stdin line, one ``MARK`` + JSON answer line each."""
    spark = _delta_session(driver_memory, work_dir)
    import pyspark

    jars = spark.sparkContext.getConf().get("spark.jars", "")
    delta = next((os.path.basename(j) for j in jars.split(",") if os.path.basename(j).startswith("delta-spark")), "?")
    print(MARK + json.dumps({"ready": True, "spark": pyspark.__version__, "delta_jar": delta,
                             "driver_memory": spark.sparkContext.getConf().get("spark.driver.memory")}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req.get("op") == "stop":
            break
        try:
            print(MARK + json.dumps({"ok": True, **_delta_answer(spark, req)}), flush=True)
        except Exception as e:  # noqa: BLE001 - reported to the driver, which fails the run
            print(MARK + json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"[:3000]}), flush=True)
    spark.stop()


# Set in this process by filecommit.local_session() / pyspark; a classic session in .venv-delta must not see them
# (SPARK_CONNECT_MODE_ENABLED=1 would turn its SparkSession.builder into a Connect client).
_DRIVER_ONLY_ENV = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_API_MODE", "SPARK_HOME",
                    "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET",
                    "PYSPARK_SUBMIT_ARGS", "FILECOMMIT_JAR")


def _classic_env():
    """This process's environment without the Spark Connect / pyspark variables of the driver side."""
    return {k: v for k, v in os.environ.items() if k not in _DRIVER_ONLY_ENV}


class DeltaWorker:
    """The Delta side: ``.venv-delta/bin/python bench_update.py --delta-worker`` as a subprocess.

    Spark's logs go to ``log_path``; requests and answers are JSON lines. ``hello`` is the worker's
    first answer (Spark version, delta-spark jar, driver memory); starting takes 10-30 s.
    """

    def __init__(self, python, work_dir, driver_memory, log_path):
        self._log = open(log_path, "a")
        self._proc = subprocess.Popen(
            [python, str(Path(__file__).resolve()), "--delta-worker", "--driver-memory", driver_memory,
             "--out", work_dir],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1, cwd=work_dir,
            env=_classic_env())
        self.hello = self._next()

    def _next(self):
        for line in self._proc.stdout:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
        raise RuntimeError(f"the Delta worker exited (rc {self._proc.wait()}); see {self._log.name}")

    def ask(self, **req):
        """Send one request and wait for its answer (a dict); raises RuntimeError when it failed."""
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        answer = self._next()
        if not answer.get("ok", True):
            raise RuntimeError(f"Delta worker ({req.get('op')}): {answer['error']}")
        return answer

    def close(self):
        """Stop the worker (its Spark session first); kills it after 120 s."""
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
                self._proc.stdin.flush()
                self._proc.wait(timeout=120)
            except Exception:  # noqa: BLE001 - best effort
                self._proc.kill()
                self._proc.wait()
        self._log.close()


# ---------------------------------------------------------------------------------------------
# Driver: .venv with filecommit
# ---------------------------------------------------------------------------------------------

def generate(data_dir, scale):
    """Path of ``lineitem.parquet`` of TPC-H scale factor ``scale`` in ``data_dir``, made by tpchgen-cli if absent.

    Generation goes to a temporary folder in ``data_dir`` and is moved into place when complete, so an
    interrupted run leaves no half file in the cache. Prints the time taken (seconds).
    """
    path = os.path.join(data_dir, "lineitem.parquet")
    if os.path.exists(path):
        return path
    exe = shutil.which("tpchgen-cli", path=os.path.dirname(sys.executable)) or shutil.which("tpchgen-cli")
    if exe is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", TPCHGEN], check=True)
        exe = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    os.makedirs(data_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tpchgen-", dir=data_dir)
    try:
        t0 = time.perf_counter()
        subprocess.run([exe, "parquet", "-s", str(scale), "--tables=lineitem", f"--output-dir={tmp}"], check=True)
        os.replace(os.path.join(tmp, "lineitem.parquet"), path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version}: lineitem SF{scale} in {time.perf_counter() - t0:.1f} s -> {path}", flush=True)
    return path


def pin_jar(work_dir):
    """Copy the plugin jar into ``work_dir`` and point ``FILECOMMIT_JAR`` at the copy (unless it is set).

    Returns ``bench_history.jar_info()`` of the jar the server will load (path, bytes, mtime, sha256).
    """
    from bench_history import jar_info

    from filecommit import find_plugin_jar

    if not os.environ.get("FILECOMMIT_JAR"):
        jar = find_plugin_jar()
        copy = os.path.join(work_dir, os.path.basename(jar))
        shutil.copy2(jar, copy)
        os.environ["FILECOMMIT_JAR"] = copy
        info = jar_info()
        info["copied_from"] = jar
        return info
    return jar_info()


def filecommit_scan(spark, path):
    """Warm-up scan of table A through Spark Connect: its Parquet files (no Delta reader on the server).

    Only valid while the table has its initial files (before any update). Returns rows, matching
    rows, sum(l_discount) (string) and the wall seconds taken.
    """
    t0 = time.perf_counter()
    row = spark.read.parquet(path).selectExpr(*SCAN_SQL).collect()[0]
    return {"seconds": time.perf_counter() - t0, **row.asDict()}


def filecommit_update(spark, path):
    """``filecommit.update`` of the benchmark's SET / CONDITION on ``path``; one sample dict.

    ``seconds``: wall seconds of the call; ``server_ms``: result.metrics.duration_ms; row and file counts.
    """
    import filecommit

    t0 = time.perf_counter()
    r = filecommit.update(spark, path, set=SET, condition=CONDITION)
    seconds = time.perf_counter() - t0
    m = r.metrics
    return {"seconds": seconds, "server_ms": m.duration_ms, "version": r.version, "committed": r.committed,
            "updated": m.num_updated_rows, "copied": m.num_copied_rows,
            "added_files": len(r.add_files), "removed_files": len(r.remove_files)}


def delta_update(worker, path):
    """``DeltaTable.update`` in the Delta worker; one sample dict in the same shape as filecommit's.

    ``seconds``: wall seconds of the update call inside the worker; ``server_ms``: Delta's
    ``executionTimeMs``; the rest from the commit's operationMetrics (``DESCRIBE HISTORY``).
    """
    a = worker.ask(op="update", path=path)
    m = a["metrics"]
    return {"seconds": a["seconds"], "server_ms": m.get("executionTimeMs"), "version": a["version"],
            "committed": a["operation"] == "UPDATE", "updated": m.get("numUpdatedRows"),
            "copied": m.get("numCopiedRows"), "added_files": m.get("numAddedFiles"),
            "removed_files": m.get("numRemovedFiles"), "metrics": m}


def _sample_line(label, side, s):
    server = f"{s['server_ms'] / 1000:6.2f}" if s.get("server_ms") is not None else "     ?"
    def n(key):
        return "?" if s.get(key) is None else f"{s[key]:,}"

    return (f"  {label:9s} {side:11s} {s['seconds']:7.2f} s  (engine {server} s)  v{s['version']}  "
            f"{n('updated')} updated, {n('copied')} copied, {n('removed_files')} files removed, "
            f"{n('added_files')} added")


def _round2(text):
    return decimal.Decimal(text).quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_EVEN)


def main(argv=None) -> int:
    """Run the benchmark (see the module docstring); returns 0, or exits 1 when a check fails."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="timed updates per side, interleaved (default 3)")
    ap.add_argument("--warmup", type=int, default=0,
                    help="untimed updates per side after the warm-up scan (default 0)")
    ap.add_argument("--scale", default="1", help="TPC-H scale factor (default 1: 6,001,215 rows)")
    ap.add_argument("--data", default=None,
                    help="tpchgen-cli output cache (default bench/.data/tpch-sf<scale>)")
    ap.add_argument("--driver-memory", default="4g",
                    help="spark.driver.memory of both JVMs (default 4g)")
    ap.add_argument("--out", default=None, help="directory for the tables, kept; default: a temp dir, removed")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (its path is printed)")
    ap.add_argument("--json", default=None, help="also write every sample to this JSON file")
    ap.add_argument("--delta-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.delta_worker:
        delta_worker(args.driver_memory, args.out or tempfile.gettempdir())
        return 0
    if args.runs < 1 or args.warmup < 0:
        ap.error("--runs must be >= 1 and --warmup >= 0")

    sys.path.insert(0, str(REPO / "bench"))
    from bench_write import _load, fail, machine_info

    data_dir = os.path.abspath(args.data or str(REPO / "bench" / ".data" / f"tpch-sf{args.scale}"))
    delta_python = str(REPO / ".venv-delta" / "bin" / "python")
    if not os.path.exists(delta_python):
        fail(f"{delta_python} missing: run `make delta-reader`")

    info = machine_info()
    load_start = _load()
    print(f"filecommit UPDATE benchmark (issue 9)  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"machine: nproc {info['nproc']}, memory {info['memory']}, {info['platform']}")
    print(f"python {info['python']}, pyspark {info['pyspark']}, deltalake {info['deltalake']}, "
          f"pyarrow {info['pyarrow']}, {info['java']}")
    print(f"args: scale {args.scale}, runs {args.runs}, warm-up updates {args.warmup}, both JVMs {MASTER}, "
          f"driver memory {args.driver_memory}, shuffle partitions {SHUFFLE_PARTITIONS}; "
          f"load average {load_start}", flush=True)

    out = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="bench_update_")
    os.makedirs(out, exist_ok=True)
    log_path = os.path.join(out, "delta-worker.log")
    worker = None
    spark = None
    t_all = time.perf_counter()
    try:
        jar = pin_jar(out)
        print(f"plugin jar: {jar.get('copied_from', jar.get('path'))} ({jar.get('bytes', 0):,} bytes, "
              f"modified {jar.get('mtime')}, sha256 {str(jar.get('sha256'))[:16]}...)", flush=True)
        source = generate(data_dir, args.scale)

        # 1. The base table, by Delta's own writer, in a JVM of its own that exits afterwards.
        base = os.path.join(out, "base")
        shutil.rmtree(base, ignore_errors=True)
        t0 = time.perf_counter()
        maker = DeltaWorker(delta_python, out, args.driver_memory, log_path)
        try:
            made = maker.ask(op="create", path=base, source=source)
        finally:
            maker.close()
        print(f"Delta side: Spark {maker.hello['spark']} + {maker.hello['delta_jar']} (.venv-delta), "
              f"driver memory {maker.hello['driver_memory']}")
        print(f"base table by Delta, partitioned by l_shipmode: {made['files']} files, {made['bytes'] / 1e6:.0f} MB; "
              f"CREATE TABLE AS SELECT {made['seconds']:.1f} s ({time.perf_counter() - t0:.1f} s with the JVM); "
              f"delta.enableDeletionVectors={made['properties'].get('delta.enableDeletionVectors')}", flush=True)
        sides = {"filecommit": os.path.join(out, "a_filecommit"), "delta-spark": os.path.join(out, "b_delta")}
        t0 = time.perf_counter()
        for p in sides.values():
            shutil.rmtree(p, ignore_errors=True)
            shutil.copytree(base, p)
        print(f"copied to A ({sides['filecommit']}) and B ({sides['delta-spark']}) in {time.perf_counter() - t0:.1f} s")

        # 2. Two fresh JVMs, started one after the other.
        import filecommit

        t0 = time.perf_counter()
        spark = filecommit.local_session(master=MASTER, conf={"spark.driver.memory": args.driver_memory,
                                                              "spark.sql.shuffle.partitions": SHUFFLE_PARTITIONS})
        print(f"embedded Spark Connect server (filecommit.local_session) ready in {time.perf_counter() - t0:.1f} s, "
              f"driver memory {spark.conf.get('spark.driver.memory', '?')}", flush=True)
        t0 = time.perf_counter()
        worker = DeltaWorker(delta_python, out, args.driver_memory, log_path)
        print(f"Delta worker ready in {time.perf_counter() - t0:.1f} s", flush=True)

        # 3. Warm-up: one full scan on each side.
        scan_a = filecommit_scan(spark, sides["filecommit"])
        scan_b = worker.ask(op="scan", path=sides["delta-spark"])
        print(f"warm-up scan: filecommit (Parquet via Connect) {scan_a['seconds']:.2f} s, "
              f"delta-spark {scan_b['seconds']:.2f} s; {scan_b['rows']:,} rows, {scan_b['matching']:,} match "
              f"{CONDITION} ({scan_b['matching'] / scan_b['rows']:.2%}), sum(l_discount) {scan_b['sum_discount']}",
              flush=True)
        keys = ("rows", "matching", "sum_discount")
        if [scan_a[k] for k in keys] != [scan_b[k] for k in keys]:
            fail(f"the two copies differ before any update: A {scan_a}, B {scan_b}")
        expected = scan_b["matching"]

        # 4. Updates, interleaved A, B, A, B, ...
        print(f"\nUPDATE SET l_discount = l_discount + 0.01 WHERE {CONDITION}  "
              "(wall s of the call; engine = filecommit server duration_ms / Delta executionTimeMs)")
        samples = {side: [] for side in sides}
        warm = {side: [] for side in sides}
        for i in range(args.warmup + args.runs):
            label = f"warm-up {i + 1}" if i < args.warmup else f"run {i - args.warmup + 1}"
            for side, path in sides.items():
                s = filecommit_update(spark, path) if side == "filecommit" else delta_update(worker, path)
                (warm if i < args.warmup else samples)[side].append(s)
                print(_sample_line(label, side, s), flush=True)

        # 5. Checks.
        problems = []
        updates = args.warmup + args.runs
        for side in sides:
            done = warm[side] + samples[side]
            counts = [s["updated"] for s in done]
            if any(n != expected for n in counts):
                problems.append(f"{side} reported updated rows {counts}; {expected:,} rows match {CONDITION}")
            if [s["version"] for s in done] != list(range(1, updates + 1)):
                problems.append(f"{side} committed versions {[s['version'] for s in done]}, expected 1..{updates}")
        check = worker.ask(op="check", paths=list(sides.values()))["tables"]
        want_sum = _round2(scan_b["sum_discount"]) + updates * expected * INCREMENT
        read = {side: check[p] for side, p in sides.items()}
        for side, r in read.items():
            got = (r["rows"], r["matching"], _round2(r["sum_discount"]), r["version"])
            if got != (scan_b["rows"], expected, want_sum, updates):
                problems.append(f"{side} reads back rows {got[0]:,}, matching {got[1]:,}, sum(l_discount) {got[2]}, "
                                f"version {got[3]}; expected {scan_b['rows']:,}, {expected:,}, {want_sum}, {updates}")
        print("\ncheck (Spark + Delta reads A and B): " + "; ".join(
            f"{side} v{r['version']} {r['rows']:,} rows, sum(l_discount) {_round2(r['sum_discount'])}"
            for side, r in read.items()) + f"; expected sum {want_sum} ({updates} updates x {expected:,} rows x 0.01)")
        if problems:
            fail("; ".join(problems))
        print(f"verified: {expected:,} rows updated by every update on both sides; both tables equal")

        # 6. Summary.
        med = {side: statistics.median(s["seconds"] for s in ss) for side, ss in samples.items()}
        ratio = med["filecommit"] / med["delta-spark"]
        print(f"\n== UPDATE of {expected:,} of {scan_b['rows']:,} lineitem rows (SF{args.scale}, partitioned by "
              f"l_shipmode, {made['files']} files), median of {args.runs} ==")
        for side, ss in samples.items():
            eng = [s["server_ms"] for s in ss if s.get("server_ms") is not None]
            runs = ", ".join(f"{s['seconds']:.2f}" for s in ss)
            print(f"  {side:11s} {med[side]:7.2f} s   samples {runs}"
                  + (f"   engine median {statistics.median(eng) / 1000:.2f} s" if eng else ""))
        print(f"  ratio filecommit / delta-spark = {med['filecommit']:.2f} / {med['delta-spark']:.2f} s = {ratio:.2f}"
              f"   (goal <= 0.8: {'MET' if ratio <= 0.8 else 'NOT MET'})")
        print(f"load average at the start {load_start}, at the end {_load()}; "
              f"total {time.perf_counter() - t_all:.0f} s")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"machine": info, "args": vars(args), "jar": jar, "base": made,
                           "scan": {"filecommit": scan_a, "delta-spark": scan_b}, "warmup": warm,
                           "samples": samples, "median_s": med, "ratio": ratio, "check": read,
                           "load": {"start": load_start, "end": _load()}}, f, indent=1, default=str)
            print(f"samples written to {args.json}")
    finally:
        if worker is not None:
            worker.close()
        if spark is not None:
            spark.stop()
        if args.out or args.keep:
            print(f"tables kept in {out}")
        else:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
