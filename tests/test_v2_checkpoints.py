"""V2 checkpoints on small tables made by Delta Lake on Spark with ``delta.checkpointPolicy = v2``
(protocol "V2 Spec", "Sidecar Files", "Last Checkpoint File Schema", "Metadata Cleanup"):

* the checkpoint file as Parquet under Delta's ``spark.databricks.delta.checkpointV2.topLevelFileFormat``
  (JSON when unset, Delta 4.4's default), read by Spark + Delta and delta-rs from the checkpoint alone;
* the sidecars of a failed checkpoint attempt, and those of checkpoints that expired, deleted by
  metadata cleanup once older than the log retention; never a sidecar a kept checkpoint lists.

The server writes checkpoints, then cleans up the log, in the background after a command answers:
the tests wait for the files they expect (at most 30 s each).
"""

from __future__ import annotations

import glob
import json
import os
import time

import faults
from delta_tables import drop_commits_before

import filecommit

TOP_LEVEL_FORMAT = "spark.databricks.delta.checkpointV2.topLevelFileFormat"
DAY_S = 86_400


def _make_v2_table(delta_spark, path):
    made = delta_spark.make([{"name": "t", "path": path, "steps": [{"sql": (
        "CREATE TABLE {table} (id BIGINT) USING delta TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', "
        "'delta.checkpointInterval' = '2')")}]}])()["t"]
    assert made["ok"], made


def _append_id(spark, path, i):
    return filecommit.write(spark.createDataFrame([(i,)], "id long"), path, mode="append")


def _log(path):
    return os.path.join(path, "_delta_log")


def _sidecars(path):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(_log(path), "_sidecars", "*.parquet")))


def _checkpoints(path, version):
    return glob.glob(os.path.join(_log(path), f"{version:020d}.checkpoint.*"))


def _wait(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _last_checkpoint(path):
    try:
        with open(os.path.join(_log(path), "_last_checkpoint")) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def _referenced(path, version):
    """Sidecar names the UUID-named JSON checkpoint file of ``version`` lists."""
    (top,) = glob.glob(os.path.join(_log(path), f"{version:020d}.checkpoint.*-*.json"))
    with open(top) as fh:
        return sorted(json.loads(line)["sidecar"]["path"] for line in fh if '"sidecar"' in line)


def _all_referenced(path):
    """Sidecar names every checkpoint file in the log lists (JSON and Parquet ones). A checkpoint
    the server's background log cleanup deletes while this reads is skipped (callers poll)."""
    import pyarrow.parquet as pq

    names = []
    for f in glob.glob(os.path.join(_log(path), "*.checkpoint*")):
        try:
            if f.endswith(".json"):
                with open(f) as fh:
                    names += [json.loads(line)["sidecar"]["path"] for line in fh if '"sidecar"' in line]
            elif f.endswith(".parquet") and "sidecar" in pq.read_schema(f).names:
                names += [s["path"] for s in
                          pq.read_table(f, columns=["sidecar"]).column("sidecar").drop_null().to_pylist()]
        except FileNotFoundError:
            continue
    return sorted(names)


def _age_all(paths, days=40):
    t = time.time() - days * DAY_S
    for p in paths:
        os.utime(p, (t, t))


def _readers_see(delta_spark, path, ids, version):
    r = delta_spark.read([{"path": path, "kind": "sql", "sql": "SELECT id FROM {table}"},
                          {"path": path, "kind": "detail"}])
    assert all(x["ok"] for x in r), r
    assert sorted(row["id"] for row in r[0]["rows"]) == ids
    assert r[1]["latest_version"] == version
    # delta-rs: its Rust reader (QueryBuilder, add actions) reads V2 checkpoints; the Python
    # ``to_pyarrow_table`` path refuses the v2Checkpoint reader feature (DeltaProtocolError).
    from deltalake import DeltaTable, QueryBuilder

    dt = DeltaTable(path)
    assert dt.version() == version
    assert dt.get_add_actions(flatten=True).num_rows == len(ids)
    got = QueryBuilder().register("t", dt).execute("SELECT id FROM t").read_all()
    assert sorted(got.column("id").to_pylist()) == ids


def test_parquet_checkpoint_file_read_by_spark_delta_and_delta_rs(spark, delta_spark, table_path):
    _make_v2_table(delta_spark, table_path)
    spark.conf.set(TOP_LEVEL_FORMAT, "parquet")
    try:
        assert _append_id(spark, table_path, 1).version == 1
        assert _append_id(spark, table_path, 2).version == 2
        _wait(lambda: _last_checkpoint(table_path).get("version") == 2, "the checkpoint of version 2")
    finally:
        spark.conf.unset(TOP_LEVEL_FORMAT)
    (top,) = _checkpoints(table_path, 2)
    assert top.endswith(".parquet") and len(os.path.basename(top).split(".")) == 4, top
    last = _last_checkpoint(table_path)
    assert last["v2Checkpoint"]["path"] == os.path.basename(top)
    assert [s["path"] for s in last["v2Checkpoint"]["sidecarFiles"]] == _sidecars(table_path)
    assert len(last["checksum"]) == 32
    import pyarrow.parquet as pq

    t = pq.read_table(top)
    assert {"checkpointMetadata", "sidecar", "protocol", "metaData"} <= set(t.column_names)
    assert t.column("checkpointMetadata").drop_null().to_pylist()[0]["version"] == 2
    assert [s["path"] for s in t.column("sidecar").drop_null().to_pylist()] == _sidecars(table_path)

    drop_commits_before(table_path, 2)  # the files are known only from the checkpoint's sidecars
    _readers_see(delta_spark, table_path, [1, 2], 2)


def test_cleanup_deletes_sidecars_of_failed_attempts_and_expired_checkpoints(spark, delta_spark, table_path):
    _make_v2_table(delta_spark, table_path)
    # Version 2's checkpoint fails after its sidecar is written: the sidecar is left unreferenced.
    fault = faults.arm(table_path, faults.CHECKPOINT_BEFORE, times=1)
    assert _append_id(spark, table_path, 1).version == 1
    assert _append_id(spark, table_path, 2).version == 2
    _wait(lambda: fault.fired() == 1, "the failed checkpoint attempt")
    fault.disarm()
    assert _checkpoints(table_path, 2) == []
    (orphan,) = _sidecars(table_path)

    # Everything so far is older than the 30-day log retention; version 4's checkpoint and the
    # cleanup after it delete the orphan, never version 4's own sidecar.
    _age_all(glob.glob(os.path.join(_log(table_path), "*"))
             + glob.glob(os.path.join(_log(table_path), "_sidecars", "*")))
    assert _append_id(spark, table_path, 3).version == 3
    assert _append_id(spark, table_path, 4).version == 4
    _wait(lambda: orphan not in _sidecars(table_path), "the orphan sidecar's deletion")
    v4 = _referenced(table_path, 4)
    assert set(v4) <= set(_sidecars(table_path))
    assert _sidecars(table_path) == _all_referenced(table_path)

    # Everything grows old; version 6's cleanup deletes the commits before version 4 but keeps a
    # checkpoint of version 4 (the newest one before the cut-off): the old sidecars it lists stay.
    _age_all(glob.glob(os.path.join(_log(table_path), "*"))
             + glob.glob(os.path.join(_log(table_path), "_sidecars", "*")))
    assert _append_id(spark, table_path, 5).version == 5
    assert _append_id(spark, table_path, 6).version == 6
    _wait(lambda: not os.path.exists(os.path.join(_log(table_path), f"{3:020d}.json")), "version 3's cleanup")
    assert _checkpoints(table_path, 4) != []
    old = [s for s in _sidecars(table_path)
           if os.path.getmtime(os.path.join(_log(table_path), "_sidecars", s)) < time.time() - 30 * DAY_S]
    assert old, "a kept checkpoint's sidecars are older than the retention"
    _wait(lambda: _sidecars(table_path) == _all_referenced(table_path), "exactly the kept checkpoints' sidecars")
    # Files expired while the newest checkpoint was UUID-named: a classic-named one beside it, as
    # Delta's metadata cleanup writes, for clients that do not know UUID-named checkpoints.
    _wait(lambda: os.path.exists(os.path.join(_log(table_path), f"{6:020d}.checkpoint.parquet")),
          "the compatibility checkpoint of version 6")

    # Checkpoint 4 expires with version 8's checkpoint (6 is kept): its sidecar goes, the others stay.
    _age_all(glob.glob(os.path.join(_log(table_path), "*"))
             + glob.glob(os.path.join(_log(table_path), "_sidecars", "*")))
    assert _append_id(spark, table_path, 7).version == 7
    assert _append_id(spark, table_path, 8).version == 8
    _wait(lambda: _checkpoints(table_path, 4) == [], "checkpoint 4 (both files) to expire")
    _wait(lambda: not set(v4) & set(_sidecars(table_path)), "the expired checkpoint's sidecar's deletion")
    _wait(lambda: os.path.exists(os.path.join(_log(table_path), f"{8:020d}.checkpoint.parquet")),
          "the compatibility checkpoint of version 8")
    _wait(lambda: _sidecars(table_path) == _all_referenced(table_path), "exactly the kept checkpoints' sidecars")
    assert set(_referenced(table_path, 8)) <= set(_sidecars(table_path))
    import pyarrow.parquet as pq

    compat = pq.read_table(os.path.join(_log(table_path), f"{8:020d}.checkpoint.parquet"))
    protocols = compat.column("protocol").drop_null().to_pylist()
    assert len(protocols) == 1 and "v2Checkpoint" in protocols[0]["readerFeatures"]
    _readers_see(delta_spark, table_path, list(range(1, 9)), 8)
