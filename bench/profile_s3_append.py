"""Where a warm one-row append to an ``s3a://`` table spends its S3 requests and its time.

Starts its own MinIO (``make minio``; ``tests/s3.py``), a counting proxy in front of it
(``tests/s3_proxy.py``) and an embedded Spark Connect server with the plugin and Hadoop S3A
(``make s3a-jars``) whose S3A endpoint is the PROXY, so every request the server sends (data file
PUT from the local executors included) passes through it. Creates one unpartitioned table
(``id`` BIGINT), does ``--warmup`` untimed appends, then ``--appends`` timed one-row appends with
``filecommit.write(..., mode="append")`` and records per append:

* client wall time (ms) and the requests the proxy saw between its start and its answer:
  method, key (``/bucket/key?query``), the S3A audit span from the ``Referer`` header
  (the S3A operation, e.g. ``op_create`` / ``op_get_file_status``, when S3A auditing adds it),
  start offset and duration in the proxy (ms, forwarding to MinIO included);
* with ``--jfr``: a JDK Flight Recording of the server driver (``spark.driver.extraJavaOptions``,
  ``-XX:StartFlightRecording`` with a copy of the JDK's ``profile.jfc`` where socket reads/writes
  are recorded at any duration), summarised over the window of the timed appends as: per S3
  request kind, the innermost ``io.filecommit`` frame (and the S3A / Hadoop frame) on the stack of
  the socket write that sent it; and the top inclusive frames of the execution and native-method
  samples of the server's threads (the share of samples holding each ``io.filecommit`` method, and
  the leaf frames); and, per gap between two consecutive requests of an append, where the command
  thread (``SparkConnectExecuteThread*``) was: its parks / monitor waits of 1 ms or more and its
  execution samples, by the innermost ``io.filecommit`` frame and Spark / Hadoop frame.

``--input range`` (default) appends ``spark.range(n, n + 1, 1, 1)`` as ``bench_s3.py`` does (a
Spark job on the server); ``--input rows`` a one-row ``createDataFrame`` (a LocalRelation: the
driver-side write, no job). ``--summarise FILE.jfr`` prints the JFR summary of an earlier run
(``--keep DIR``: ``DIR/server.jfr`` and ``DIR/out.json`` when ``--json DIR/out.json``), or with
``--summarise FILE.json`` the request tables of an earlier run's ``--json`` output.

The proxy forwards each request on a new connection to MinIO (a few ms per request added), so the
wall times here are higher than ``bench_s3.py``'s; the request list is exact.

Usage: ``python bench/profile_s3_append.py [--appends 50] [--warmup 10] [--input range|rows] [--jfr]
[--json FILE] [--keep DIR] [--conf KEY=VALUE ...] [--summarise FILE]``. Prints the request kinds per
append (median), every (kind, key, S3A operation) with its count per append and mean proxy time, the requests of the
median append, the median timeline, and (``--jfr``) the stack summaries. Requests of background
hooks (checkpoints) that overlap an append are counted in it, as S3A's own counters count them.
Units: milliseconds (ms), requests per append, percent of samples.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


class _Seen(list):
    """The proxy's ``seen`` list, recording also the time, the audit referrer and the duration."""

    def __init__(self):
        super().__init__()
        self.log: list[dict] = []
        self.lock = threading.Lock()

    def append(self, item):  # called by the proxy's handler under its lock
        super().append(item)
        handler = sys._getframe(1).f_locals.get("self")
        ref = handler.headers.get("Referer", "") if handler is not None else ""
        entry = {"t": time.perf_counter(), "wall": time.time(), "method": item[0], "path": item[1],
                 "referer": ref, "end": None}
        self.log.append(entry)
        if handler is not None:
            handler._fc_entry = entry


def _kind(method: str, path: str) -> str:
    if method == "GET" and ("list-type=" in path or "?prefix=" in path or "&prefix=" in path):
        return "LIST"
    return method


def _shape(path: str, table: str) -> str:
    """A key with the table prefix, versions and uuids abstracted."""
    p = path.split("?")[0]
    q = path.split("?")[1] if "?" in path else ""
    p = p.replace(table, "<t>")
    p = re.sub(r"\d{20}", "<v>", p)
    p = re.sub(r"part-\d+-[0-9a-f-]+(\.c\d+)?\.snappy\.parquet", "part-*.parquet", p)
    p = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", p)
    if q:
        names = ("list-type", "prefix", "delimiter", "max-keys", "uploads", "start-after")
        keep = [kv for kv in q.split("&") if kv.split("=")[0] in names]
        q = "&".join(keep).replace(table.split("/", 2)[-1], "<t>")
        q = re.sub(r"\d{20}", "<v>", q)
        p += "?" + q
    return p


def _op(referer: str) -> str:
    m = re.search(r"/hadoop/1/([^/?]+)/", referer)
    return m.group(1) if m else ""


def _patch_proxy_timing(proxy):
    """Wraps the handler's forward to note when each request's answer came back from MinIO."""
    handler_cls = proxy.server.RequestHandlerClass
    orig = handler_cls._forward

    def _forward(self, body):
        try:
            return orig(self, body)
        finally:
            e = getattr(self, "_fc_entry", None)
            if e is not None:
                e["end"] = time.perf_counter()

    handler_cls._forward = _forward


def _jfc(path: str) -> str:
    """A copy of the JDK's profile.jfc with socket events at any duration, parks and monitor waits from 1 ms."""
    java = subprocess.check_output(["which", "java"], text=True).strip()
    java_home = os.path.dirname(os.path.dirname(os.path.realpath(java)))
    text = Path(java_home, "lib", "jfr", "profile.jfc").read_text()
    text = re.sub(r'(<setting name="threshold" control="socket-threshold">)[^<]*(<)', r"\g<1>0 ms\2", text)
    text = re.sub(r'(<setting name="threshold" control="locking-threshold">)[^<]*(<)', r"\g<1>1 ms\2", text)
    Path(path).write_text(text)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--appends", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--jfr", action="store_true")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="extra server conf, e.g. spark.hadoop.fs.s3a.input.stream.type=classic (repeatable)")
    ap.add_argument("--input", choices=("range", "rows"), default="range",
                    help="range: spark.range(n, n + 1, 1, 1) as bench_s3.py (a Spark job); rows: "
                         "createDataFrame of one row (a LocalRelation: the driver-side write)")
    ap.add_argument("--json")
    ap.add_argument("--keep", help="directory for the JFR file and the request log (default: a temp dir)")
    ap.add_argument("--summarise", metavar="FILE.jfr", help="only summarise a recording of an earlier run")
    args = ap.parse_args(argv)
    if args.summarise and args.summarise.endswith(".json"):
        return report(json.loads(Path(args.summarise).read_text())["appends"], "/prof/t")
    if args.summarise:
        lo, hi = Path(args.summarise + ".window").read_text().split()
        saved = Path(os.path.dirname(args.summarise), "out.json")
        appends = json.loads(saved.read_text())["appends"] if saved.exists() else None
        jfr_summary(args.summarise, (float(lo), float(hi)), appends)
        return 0

    import s3
    import s3_proxy

    import filecommit

    base = args.keep or tempfile.mkdtemp(prefix="filecommit-prof-s3-")
    os.makedirs(base, exist_ok=True)
    minio = s3.MinioServer(os.path.join(base, "data"), os.path.join(base, "minio.log"))
    minio.start()
    proxy = s3_proxy.FaultProxy(minio.endpoint)
    proxy.seen = seen = _Seen()
    _patch_proxy_timing(proxy)
    proxy.start()
    spark = None
    jfr_file = os.path.join(base, "server.jfr")
    try:
        bucket = "prof"
        minio.create_bucket(bucket)
        conf = s3.server_conf(proxy.endpoint)
        conf["spark.jars"] = ",".join([filecommit.server.find_plugin_jar(), *s3.s3a_jars()])
        conf.update(kv.split("=", 1) for kv in args.conf)
        if args.jfr:
            jfc = _jfc(os.path.join(base, "sockets.jfc"))
            conf["spark.driver.extraJavaOptions"] = (
                "-XX:FlightRecorderOptions=stackdepth=1024 "
                f"-XX:StartFlightRecording=filename={jfr_file},settings={jfc},dumponexit=true")
        spark = filecommit.local_session(conf=conf)
        table = f"s3a://{bucket}/t"
        def one(i):
            if args.input == "rows":
                return spark.createDataFrame([(i,)], "id BIGINT")
            return spark.range(i, i + 1, 1, 1)

        filecommit.write(one(0), table, mode="append")
        n = 1
        for _ in range(args.warmup):
            filecommit.write(one(n), table, mode="append")
            n += 1
        appends = []
        window = [time.time(), None]
        for _ in range(args.appends):
            i0 = len(seen.log)
            t0 = time.perf_counter()
            r = filecommit.write(one(n), table, mode="append")
            t1 = time.perf_counter()
            n += 1
            time.sleep(0.05)  # background hooks (checkpoints) land in the next append's gap, not in it
            reqs = [dict(e) for e in seen.log[i0:] if e["t"] <= t1]
            late = [dict(e) for e in seen.log[i0:] if e["t"] > t1]
            appends.append({"ms": (t1 - t0) * 1000, "version": r.version, "t0": t0, "requests": reqs, "after": late,
                            "s3a_counts": dict(r.metrics.object_store_requests)})
        window[1] = time.time()
        if args.jfr:
            _dump(jfr_file)
    finally:
        if spark is not None:
            spark.stop()
        proxy.stop()
        minio.stop()

    report(appends, f"/{bucket}/t")
    out = {"appends": appends}
    if args.jfr:
        Path(jfr_file + ".window").write_text(f"{window[0]} {window[1]}")
        out["jfr"] = jfr_summary(jfr_file, window, appends)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


def report(appends: list[dict], key: str) -> int:
    """Prints the request table, the median append's requests and the timeline of ``appends``."""
    ms = [a["ms"] for a in appends]
    print(f"{len(appends)} one-row appends through the proxy: p50 {statistics.median(ms):.1f} ms, "
          f"min {min(ms):.1f}, max {max(ms):.1f} (load {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    per_kind = collections.defaultdict(list)
    rows = collections.Counter()
    row_ms = collections.defaultdict(list)
    for a in appends:
        c = collections.Counter()
        for e in a["requests"]:
            k = (_kind(e["method"], e["path"]), _shape(e["path"], key), _op(e["referer"]))
            c[k[0]] += 1
            rows[k] += 1
            if e["end"]:
                row_ms[k].append((e["end"] - e["t"]) * 1000)
        for kind in ("PUT", "GET", "HEAD", "LIST", "DELETE", "POST"):
            per_kind[kind].append(c.get(kind, 0))
    print("requests per append (median):", {k: statistics.median(v) for k, v in per_kind.items() if any(v)})
    print(f"{'count/append':>12}  {'ms':>6}  kind  key  (S3A op)")
    for k, cnt in sorted(rows.items(), key=lambda kv: -kv[1]):
        mean = statistics.mean(row_ms[k]) if row_ms[k] else float("nan")
        print(f"{cnt / len(appends):12.2f}  {mean:6.1f}  {k[0]:<5} {k[1]}  ({k[2]})")
    med = sorted(appends, key=lambda a: a["ms"])[len(appends) // 2]
    print(f"\nthe median append ({med['ms']:.1f} ms, version {med['version']}), offsets from its start:")
    for e in med["requests"]:
        d = (e["end"] - e["t"]) * 1000 if e["end"] else float("nan")
        print(f"  +{(e['t'] - med['t0']) * 1000:6.1f} ms  {d:5.1f} ms  {_kind(e['method'], e['path']):<5} "
              f"{_shape(e['path'], key)}  ({_op(e['referer'])})")
    print("  S3A counters of that command:", med["s3a_counts"])
    print("\ntimeline (median over the appends of each request's start offset, ms, first occurrence; answer last):")
    offsets = collections.defaultdict(list)
    for a in appends:
        seen_labels = set()
        for e in a["requests"]:
            label = f"{_kind(e['method'], e['path']):<5} {_shape(e['path'], key)}  ({_op(e['referer'])})"
            if label not in seen_labels:
                seen_labels.add(label)
                offsets[label].append((e["t"] - a["t0"]) * 1000)
    for label, offs in sorted(offsets.items(), key=lambda kv: statistics.median(kv[1])):
        if len(offs) >= len(appends) // 2:
            print(f"  +{statistics.median(offs):6.1f} ms  {label}  (in {len(offs)} of {len(appends)})")
    print(f"  +{statistics.median(ms):6.1f} ms  answer at the client")
    after = collections.Counter((_kind(e["method"], e["path"]), _shape(e["path"], key))
                                for a in appends for e in a["after"])
    if after:
        print("after the answers (background hooks), total over all appends:", dict(after))
    return 0


def _frames(ev) -> list[str]:
    st = ev.get("values", {}).get("stackTrace") or {}
    out = []
    for f in st.get("frames", []) or []:
        m = f["method"]
        if "$$Lambda" in m["type"]["name"]:
            continue
        out.append(f"{m['type']['name'].replace('/', '.')}.{m['name']}:{f.get('lineNumber', '')}")
    return out


def _epoch(ts: str) -> float:
    """Seconds since the epoch of a JFR JSON timestamp (ISO-8601, nanoseconds, ``Z`` or an offset)."""
    from datetime import datetime
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?$", ts)
    frac = (m.group(2) or ".0")[:7]
    zone = m.group(3) or "Z"
    return datetime.fromisoformat(m.group(1) + frac + ("+00:00" if zone == "Z" else zone)).timestamp()


def _dump(jfr_file: str) -> None:
    """Dumps the server's recording to ``jfr_file`` now (``jcmd JFR.dump``): the JVM finishes its own
    file only when it exits, after this script."""
    for pid in os.listdir("/proc"):
        try:
            cmd = Path("/proc", pid, "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if pid.isdigit() and jfr_file.encode() in cmd and b"java" in cmd:
            subprocess.run(["jcmd", pid, "JFR.dump", "name=1", f"filename={jfr_file}"], check=True,
                           capture_output=True)
            return
    raise RuntimeError(f"no server JVM recording to {jfr_file}")


# The frames the inclusive summary counts (class name prefixes).
_INCLUSIVE = ("io.filecommit", "org.apache.hadoop.fs.s3a.", "org.apache.spark.sql.connect",
              "org.apache.spark.sql.execution.QueryExecution", "org.apache.spark.scheduler",
              "org.apache.spark.sql.catalyst.analysis", "org.apache.spark.sql.catalyst.optimizer.Optimizer",
              "io.delta.kernel")


def jfr_summary(jfr_file: str, window, appends: list[dict] | None = None) -> dict:
    """Socket writes to the proxy with their issuing frames; inclusive io.filecommit frames of samples."""
    proc = subprocess.run(["jfr", "print", "--json", "--stack-depth", "1024", "--events",
                           "jdk.SocketWrite,jdk.ExecutionSample,jdk.NativeMethodSample,jdk.ThreadPark,"
                           "jdk.JavaMonitorWait,jdk.JavaMonitorEnter", jfr_file],
                          capture_output=True, text=True, check=True)
    raw = proc.stdout
    events = json.loads(raw)["recording"]["events"]
    lo, hi = window

    def inside(ev):
        try:
            t = _epoch(ev["values"]["startTime"])
        except (KeyError, ValueError):
            return True
        return lo <= t <= hi

    events = [e for e in events if inside(e)]
    issuers = collections.Counter()
    for e in events:
        if e["type"] != "jdk.SocketWrite":
            continue
        fr = _frames(e)
        if not any("software.amazon" in f or "org.apache.http" in f for f in fr):
            continue
        mine = [f for f in fr if f.startswith("io.filecommit") and ".lambda$" not in f]
        hadoop = next((f for f in fr if f.startswith("org.apache.hadoop.fs.s3a.S3AFileSystem.")
                       and ".lambda$" not in f and "Invoker" not in f), "")
        other = next((f for f in fr if f.startswith(("io.delta.kernel", "org.apache.spark.sql.execution.datasources",
                                                     "org.apache.parquet"))), "")
        issuers[(hadoop, " < ".join(mine[:5]) or "-", other)] += 1
    idle = ("epollWait", "Net.accept", "Net.poll", "Unsafe.park", "Object.wait", "Thread.sleep",
            "FileInputStream.readBytes")
    samples = [e for e in events if e["type"] in ("jdk.ExecutionSample", "jdk.NativeMethodSample")
               and _frames(e) and not any(w in _frames(e)[0] for w in idle)]
    incl = collections.Counter()
    leaf = collections.Counter()
    for e in samples:
        fr = _frames(e)
        if not fr:
            continue
        leaf[fr[0].rsplit(":", 1)[0]] += 1
        for f in {f.rsplit(":", 1)[0] for f in fr if f.startswith(_INCLUSIVE)}:
            incl[f] += 1
    total = len(samples) or 1
    print("\nJFR: S3 socket writes in the window by issuer (S3AFileSystem frame | io.filecommit frames, innermost "
          "first | Kernel / Spark / Parquet frame):")
    for (h, chain, other), c in issuers.most_common(30):
        print(f"  {c:5d}  {h} | {chain} | {other}")
    print(f"JFR: {len(samples)} busy execution + native samples in the window (idle waits left out); "
          "top inclusive frames (% of samples):")
    for f, c in incl.most_common(45):
        print(f"  {100 * c / total:5.1f}%  {f}")
    print("JFR: top leaf frames:")
    for f, c in leaf.most_common(15):
        print(f"  {100 * c / total:5.1f}%  {f}")
    gaps = command_thread_gaps(events, appends) if appends else {}
    return {"issuers": [[list(k), v] for k, v in issuers.most_common()], "inclusive": incl.most_common(80),
            "gaps": gaps,
            "leaf": leaf.most_common(40), "samples": len(samples)}



def _duration_s(iso: str | None) -> float:
    """Seconds of a JFR JSON duration (``PT0.0123S``, ``PT1M2.5S``)."""
    m = re.match(r"PT(?:(\d+)M)?([\d.]+)S", iso or "PT0S")
    return int(m.group(1) or 0) * 60 + float(m.group(2)) if m else 0.0


def command_thread_gaps(events: list[dict], appends: list[dict]) -> dict:
    """Where the command thread (``SparkConnectExecuteThread*``) spends each gap between two
    consecutive requests of an append (and between its start / answer and its first / last
    request): per gap, ms per append of its parks / monitor waits (>= 1 ms, by the innermost
    io.filecommit frame and the innermost Spark / Hadoop frame) and of its execution samples
    (10 ms each), over the requests that at least 90% of the appends make. Waits that overlap
    (nested parks) may add up to more than the gap; a thread that waits for a CPU shows neither."""
    spans = []
    for e in events:
        v = e["values"]
        thread = (v.get("eventThread") or v.get("sampledThread") or {}).get("javaName") or ""
        if e["type"] == "jdk.NativeMethodSample" or not thread.startswith("SparkConnectExecuteThread"):
            continue
        start = _epoch(v["startTime"])
        length = 0.01 if e["type"] == "jdk.ExecutionSample" else _duration_s(v.get("duration"))
        fr = [f.rsplit(":", 1)[0] for f in _frames(e)]
        mine = next((f for f in fr if f.startswith("io.filecommit") and ".lambda$" not in f), "-")
        other = next((f for f in fr if f.startswith(("org.apache.spark", "org.apache.hadoop", "io.delta",
                                                     "org.apache.parquet"))), fr[0] if fr else "?")
        kind = "cpu" if e["type"] == "jdk.ExecutionSample" else "wait"
        spans.append((start, start + length, (kind, mine, other)))
    per: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    total: collections.Counter = collections.Counter()
    count: collections.Counter = collections.Counter()

    def name(r):
        key = r["path"].split("?")[0].rsplit("/", 1)[-1]
        return re.sub(r"\d{20}", "<v>", re.sub(r"part-.*parquet", "part-*.parquet", key)), _kind(r["method"], r["path"])

    # Only the requests most appends make (a background checkpoint's reads would split the gaps).
    usual = collections.Counter(n for a in appends for n in {name(r) for r in a["requests"]})
    for a in appends:
        reqs = [r for r in a["requests"] if usual[name(r)] >= 0.9 * len(appends)]
        if not reqs or "wall" not in reqs[0]:
            continue
        wall0 = a["t0"] - (reqs[0]["t"] - reqs[0]["wall"])
        points = [("start", wall0)]
        points += [(f"{name(r)[1]} {name(r)[0]}", r["wall"]) for r in reqs]
        points.append(("answer", wall0 + a["ms"] / 1000))
        for (n1, t1), (n2, t2) in itertools.pairwise(points):
            gap = f"{n1} -> {n2}"
            count[gap] += 1
            total[gap] += (t2 - t1) * 1000
            for s, e, label in spans:
                overlap = min(e, t2) - max(s, t1)
                if overlap > 0:
                    per[gap][label] += overlap * 1000
    out = {}
    print("JFR: the command thread between consecutive requests (ms per append; wait = parks / monitor waits):")
    for gap in sorted(per, key=lambda g: -total[g]):
        if count[gap] < len(appends) // 2:
            continue
        n = count[gap]
        print(f"  {gap}: mean gap {total[gap] / n:.1f} ms (in {n} appends)")
        for (kind, mine, other), ms in per[gap].most_common(5):
            print(f"    {ms / n:7.1f}  {kind:<4} {mine} || {other}")
        out[gap] = {"mean_ms": total[gap] / n, "top": [[list(k), v / n] for k, v in per[gap].most_common(10)]}
    return out


if __name__ == "__main__":
    sys.exit(main())
