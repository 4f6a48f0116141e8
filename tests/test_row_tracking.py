"""Row tracking (PROTOCOL.md "Row Tracking"): tables with the ``rowTracking`` writer feature, made by
delta-spark 4.4 (``delta.enableRowTracking = true``) or by filecommit with that table property.

Every ``add`` filecommit commits carries ``baseRowId`` (above the ``delta.rowTracking`` domain's
``rowIdHighWaterMark``, which the commit advances) and ``defaultRowCommitVersion``; two racing writers
never commit the same row IDs. Judged by Spark + Delta's ``_metadata.row_id`` /
``_metadata.row_commit_version`` (the ``delta_spark`` fixture) and by the raw log; Delta's own
writer co-writes afterwards.
"""

from __future__ import annotations

import threading
import time

import faults
import pytest
from helpers import log_actions

import filecommit

pytestmark = pytest.mark.slow

ROW_TRACKING = "TBLPROPERTIES ('delta.enableRowTracking' = 'true')"
IDS = "SELECT id, v, _metadata.row_id AS row_id, _metadata.row_commit_version AS rcv FROM {table}"


def _sql(delta_spark, path, stmt):
    r = delta_spark.read_one({"kind": "sql", "path": path, "sql": stmt})
    assert r["ok"], r
    return r["rows"]


def _ids(delta_spark, path):
    """``{id: (v, row_id, row_commit_version)}`` as Spark + Delta reads them."""
    rows = _sql(delta_spark, path, IDS)
    out = {r["id"]: (r["v"], r["row_id"], r["rcv"]) for r in rows}
    assert len(out) == len(rows), rows
    return out


def _high_water_mark(path):
    """The ``delta.rowTracking`` high-water mark of the latest commit that set one (raw log)."""
    mark = None
    for _version, actions in sorted(log_actions(path).items()):
        for a in actions:
            dm = a.get("domainMetadata")
            if dm and dm["domain"] == "delta.rowTracking":
                import json

                mark = json.loads(dm["configuration"])["rowIdHighWaterMark"]
    return mark


def _delta_table(delta_spark, path, rows="(1, 10), (2, 20)"):
    _sql(delta_spark, path, f"CREATE TABLE {{table}} (id BIGINT, v BIGINT) USING delta {ROW_TRACKING}")
    _sql(delta_spark, path, f"INSERT INTO {{table}} VALUES {rows}")


def _assert_unique(ids):
    row_ids = [t[1] for t in ids.values()]
    assert None not in row_ids and len(set(row_ids)) == len(row_ids), ids


def test_append_to_delta_table_assigns_row_ids_above_high_water_mark(spark, delta_spark, table_path):
    _delta_table(delta_spark, table_path)
    before = _ids(delta_spark, table_path)
    assert _high_water_mark(table_path) == 1
    r = filecommit.write(spark.createDataFrame([(3, 30), (4, 40), (5, 50)], "id long, v long"), table_path)
    assert r.committed and r.version == 2

    adds = [a["add"] for a in log_actions(table_path)[2] if "add" in a]
    assert adds and all(a["defaultRowCommitVersion"] == 2 and a["baseRowId"] >= 2 for a in adds), adds
    assert _high_water_mark(table_path) == 4
    ids = _ids(delta_spark, table_path)
    assert {k: ids[k] for k in before} == before, "rows of Delta's commit keep their IDs"
    assert sorted(ids[k][1] for k in (3, 4, 5)) == [2, 3, 4]
    assert {ids[k][2] for k in (3, 4, 5)} == {2}

    # Delta's writer co-writes afterwards: its IDs start above filecommit's high-water mark.
    _sql(delta_spark, table_path, "INSERT INTO {table} VALUES (6, 60)")
    ids = _ids(delta_spark, table_path)
    assert ids[6][1:] == (5, 3), ids
    _assert_unique(ids)


def test_new_table_with_row_tracking_property(spark, delta_spark, table_path):
    df = spark.createDataFrame([(1, 10), (2, 20)], "id long, v long").coalesce(1)
    r = filecommit.write(df, table_path, table_properties={"delta.enableRowTracking": "true"})
    assert r.version == 0
    detail = delta_spark.read_one({"path": table_path, "kind": "detail"})
    assert detail["ok"], detail
    assert {"rowTracking", "domainMetadata"} <= set(detail["tableFeatures"]), detail
    props = detail["properties"]
    assert props["delta.rowTracking.materializedRowIdColumnName"].startswith("_row-id-col-"), props
    assert props["delta.rowTracking.materializedRowCommitVersionColumnName"].startswith("_row-commit-version-col-")
    assert _ids(delta_spark, table_path) == {1: (10, 0, 0), 2: (20, 1, 0)}

    filecommit.write(spark.createDataFrame([(3, 30)], "id long, v long"), table_path)
    _sql(delta_spark, table_path, "INSERT INTO {table} VALUES (4, 40)")
    ids = _ids(delta_spark, table_path)
    assert ids[3][1:] == (2, 1) and ids[4][1:] == (3, 2), ids


def test_racing_writers_never_share_row_ids(spark, delta_spark, table_path):
    if faults.directory() is None:
        pytest.skip("the server under test was not started with the fault-injection jar")
    _delta_table(delta_spark, table_path)
    # The first writer's commit of version 2 is held by the store until the second writer's
    # append has landed as version 2: the first loses the race and must rebase its row IDs.
    held = faults.arm(table_path, faults.COMMIT_HOLD, times=1, version=2)
    outcome: dict = {}

    def first() -> None:
        try:
            outcome["result"] = filecommit.write(
                spark.createDataFrame([(10, 1), (11, 1)], "id long, v long"), table_path)
        except Exception as e:  # noqa: BLE001 - judged below
            outcome["error"] = e

    t = threading.Thread(target=first)
    t.start()
    try:
        deadline = time.time() + 60
        while held.fired() == 0 and time.time() < deadline:
            time.sleep(0.05)
        assert held.fired() == 1, f"the first writer's commit never reached the store: {outcome}"
        second = filecommit.write(spark.createDataFrame([(20, 2), (21, 2), (22, 2)], "id long, v long"), table_path)
        assert second.committed and second.version == 2, second
    finally:
        held.disarm()
        t.join(timeout=120)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"].version == 3 and outcome["result"].metrics.attempts >= 2, outcome["result"]

    ids = _ids(delta_spark, table_path)
    _assert_unique(ids)
    assert sorted(ids[k][1] for k in (20, 21, 22)) == [2, 3, 4]
    assert sorted(ids[k][1] for k in (10, 11)) == [5, 6]
    assert {ids[k][2] for k in (10, 11)} == {3}, "the retried commit's rows carry its own version"
    assert _high_water_mark(table_path) == 6


def _twins(delta_spark, root, dvs):
    """Two equal tables made by delta-spark (two INSERTs: two files), the first for filecommit's
    commands, the second for Delta's own."""
    paths = [f"{root}/ours", f"{root}/theirs"]
    props = f"'delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = '{str(dvs).lower()}'"
    for p in paths:
        _sql(delta_spark, p, f"CREATE TABLE {{table}} (id BIGINT, v BIGINT) USING delta TBLPROPERTIES ({props})")
        _sql(delta_spark, p, "INSERT INTO {table} VALUES (1, 10), (2, 20), (3, 30)")
        _sql(delta_spark, p, "INSERT INTO {table} VALUES (4, 40), (5, 50), (6, 60)")
    return paths


def _same_as_delta(delta_spark, ours, theirs, fresh=()):
    """Spark + Delta reads the same (v, row_id, row_commit_version) for every row in both tables;
    rows in ``fresh`` (inserted by the step) only have to carry unique IDs (their position in the
    new files is the writer's choice)."""
    a, b = _ids(delta_spark, ours), _ids(delta_spark, theirs)
    assert a.keys() == b.keys(), (a, b)
    assert {k: a[k] for k in a if k not in fresh} == {k: b[k] for k in b if k not in fresh}, (a, b)
    assert {k: a[k][0::2] for k in fresh} == {k: b[k][0::2] for k in fresh}, (a, b)
    _assert_unique(a)
    return a


@pytest.mark.parametrize("dvs", [False, True], ids=["rewrite", "deletion_vectors"])
def test_row_ids_kept_through_update_delete_merge_optimize_restore(spark, delta_spark, tmp_path, dvs):
    ours, theirs = _twins(delta_spark, str(tmp_path), dvs)

    filecommit.update(spark, ours, set={"v": "v + 100"}, condition="id = 2")
    _sql(delta_spark, theirs, "UPDATE {table} SET v = v + 100 WHERE id = 2")
    ids = _same_as_delta(delta_spark, ours, theirs)
    assert ids[2][1:] == (1, 3) and ids[1][1:] == (0, 1), "an updated row keeps its ID with a new version"

    filecommit.delete(spark, ours, "id = 3")
    _sql(delta_spark, theirs, "DELETE FROM {table} WHERE id = 3")
    _same_as_delta(delta_spark, ours, theirs)

    source = spark.createDataFrame([(4, 400), (7, 700)], "id long, v long")
    (filecommit.merge(source, ours, "target.id = source.id")
     .when_matched_update({"v": "source.v"}).when_not_matched_insert_all().execute())
    _sql(delta_spark, theirs, "MERGE INTO {table} t USING (SELECT * FROM VALUES (4, 400), (7, 700) AS s(id, v)) s "
         "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    _same_as_delta(delta_spark, ours, theirs, fresh=(7,))

    filecommit.optimize(spark, ours)
    _sql(delta_spark, theirs, "OPTIMIZE {table}")
    after = _same_as_delta(delta_spark, ours, theirs, fresh=(7,))

    filecommit.restore(spark, ours, version=3)
    _sql(delta_spark, theirs, "RESTORE TABLE {table} TO VERSION AS OF 3")
    _same_as_delta(delta_spark, ours, theirs)

    # Delta's writer co-writes afterwards; no ID of the table's history is handed out again.
    _sql(delta_spark, ours, "INSERT INTO {table} VALUES (8, 80)")
    ids = _ids(delta_spark, ours)
    _assert_unique(ids)
    assert ids[8][1] > max(t[1] for t in after.values()), ids
