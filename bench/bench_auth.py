"""The cost of sharing a server: one-row appends with and without authentication, grants and shared
mode, in the same run.

Two standalone Spark Connect servers with the plugin run side by side on this machine (same jars,
same settings but these): ``open`` authenticates no one (``spark.filecommit.auth.mode=none``);
``shared`` authenticates a bearer token (``tokens``), checks the principal's grant on the table's
path at every command, and runs the shared-mode interceptor and check rule
(``spark.filecommit.server.shared=true``). One client per server appends ONE row per call
(``filecommit.write``) to its own table, the two servers taking turns call by call, so both see
the same load on the machine. Prints the nearest-rank p50 / p95 of each (wall ms on the client)
and the difference of the p50s: the authorization check's cost per append. Asserts nothing about
speed; exits 1 only when a table lacks an acknowledged row (delta-rs reads both at the end).

Usage: ``python bench/bench_auth.py [--appends 200] [--warmup 30]``. Units: milliseconds (ms).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=200, help="timed appends per server")
    parser.add_argument("--warmup", type=int, default=30, help="untimed appends per server first")
    args = parser.parse_args()

    import crash_server
    from deltalake import DeltaTable
    from tenants import Tenant, TenantServer

    import filecommit.server

    work = tempfile.mkdtemp(prefix="filecommit-bench-auth-")
    root = os.path.realpath(work)
    shared = TenantServer(os.path.join(work, "shared"), {"writer": Tenant(), "ops": Tenant(admin=True)},
                          conf={"spark.filecommit.server.shared": "true"}, roots=[root])
    plain_conf = {k: v for k, v in shared.server.conf.items() if not k.startswith("spark.filecommit.auth.")}
    plain_conf["spark.filecommit.server.shared"] = "false"
    plain = crash_server.ConnectServer(filecommit.server.find_plugin_jar(), filecommit.server.PLUGIN_CLASS,
                                       os.path.join(work, "open.log"), conf=plain_conf)
    tables = {"open": os.path.join(root, "open", "t"), "shared": os.path.join(root, "shared_t", "t")}
    try:
        shared.start()
        plain.start()
        from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

        ops = shared.session("ops")
        ops.sql(f"GRANT OWNER ON PATH '{os.path.dirname(tables['shared'])}' TO writer").collect()
        sessions = {"open": RemoteSparkSession.builder.remote(plain.url).create(),
                    "shared": shared.session("writer")}
        times: dict[str, list[float]] = {"open": [], "shared": []}
        for i in range(args.warmup + args.appends):
            for name, session in sessions.items():
                df = session.createDataFrame([(i, name)], "id long, who string")
                t0 = time.perf_counter()
                filecommit.write(df, tables[name])
                if i >= args.warmup:
                    times[name].append((time.perf_counter() - t0) * 1000)
        load = os.getloadavg()
        for name in times:
            p50, p95 = percentile(times[name], 50), percentile(times[name], 95)
            print(f"{name:7s} 1-row append p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  ({len(times[name])} appends)")
        delta = percentile(times["shared"], 50) - percentile(times["open"], 50)
        print(f"authorization check (shared - open), p50: {delta:+.1f} ms; "
              f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        ok = True
        for name, path in tables.items():
            n = DeltaTable(path).to_pyarrow_table().num_rows
            if n != args.warmup + args.appends:
                print(f"{name}: {n} rows, expected {args.warmup + args.appends}")
                ok = False
        return 0 if ok else 1
    finally:
        shared.stop()
        plain.stop()


if __name__ == "__main__":
    sys.exit(main())
