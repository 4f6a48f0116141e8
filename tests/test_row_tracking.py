"""Row tracking (PROTOCOL.md "Row Tracking"): tables with the ``rowTracking`` writer feature, made by
delta-spark 4.4 (``delta.enableRowTracking = true``) or by filecommit with that table property.

Every ``add`` filecommit commits carries ``baseRowId`` (above the ``delta.rowTracking`` domain's
``rowIdHighWaterMark``, which the commit advances) and ``defaultRowCommitVersion``; two racing writers
never commit the same row IDs. Judged by Spark + Delta's ``_metadata.row_id`` /
``_metadata.row_commit_version`` (the ``delta_spark`` fixture) and by the raw log; Delta's own
writer co-writes afterwards.
"""

from __future__ import annotations

import faults
import pytest
from helpers import error_class, log_actions, race_held_commit, spark_delta_sql
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

ROW_TRACKING = "TBLPROPERTIES ('delta.enableRowTracking' = 'true')"
IDS = "SELECT id, v, _metadata.row_id AS row_id, _metadata.row_commit_version AS rcv FROM {table}"


def _row_tracking_by_id(delta_spark, path):
    """``{id: (v, row_id, row_commit_version)}`` as Spark + Delta reads them."""
    rows = spark_delta_sql(delta_spark, path, IDS)
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
    spark_delta_sql(delta_spark, path, f"CREATE TABLE {{table}} (id BIGINT, v BIGINT) USING delta {ROW_TRACKING}")
    spark_delta_sql(delta_spark, path, f"INSERT INTO {{table}} VALUES {rows}")


def _assert_unique(ids):
    row_ids = [t[1] for t in ids.values()]
    assert None not in row_ids and len(set(row_ids)) == len(row_ids), ids


def test_append_to_delta_table_assigns_row_ids_above_high_water_mark(spark, delta_spark, table_path):
    _delta_table(delta_spark, table_path)
    before = _row_tracking_by_id(delta_spark, table_path)
    assert _high_water_mark(table_path) == 1
    r = filecommit.write(spark.createDataFrame([(3, 30), (4, 40), (5, 50)], "id long, v long"), table_path)
    assert r.committed and r.version == 2

    adds = [a["add"] for a in log_actions(table_path)[2] if "add" in a]
    assert adds and all(a["defaultRowCommitVersion"] == 2 and a["baseRowId"] >= 2 for a in adds), adds
    assert _high_water_mark(table_path) == 4
    ids = _row_tracking_by_id(delta_spark, table_path)
    assert {k: ids[k] for k in before} == before, "rows of Delta's commit keep their IDs"
    assert sorted(ids[k][1] for k in (3, 4, 5)) == [2, 3, 4]
    assert {ids[k][2] for k in (3, 4, 5)} == {2}

    # Delta's writer co-writes afterwards: its IDs start above filecommit's high-water mark.
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (6, 60)")
    ids = _row_tracking_by_id(delta_spark, table_path)
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
    assert _row_tracking_by_id(delta_spark, table_path) == {1: (10, 0, 0), 2: (20, 1, 0)}

    filecommit.write(spark.createDataFrame([(3, 30)], "id long, v long"), table_path)
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (4, 40)")
    ids = _row_tracking_by_id(delta_spark, table_path)
    assert ids[3][1:] == (2, 1) and ids[4][1:] == (3, 2), ids


def test_racing_writers_never_share_row_ids(spark, delta_spark, table_path):
    if faults.directory() is None:
        pytest.skip("the server under test was not started with the fault-injection jar")
    _delta_table(delta_spark, table_path)
    # The first writer's commit of version 2 is held by the store until the second writer's
    # append has landed as version 2: the first loses the race and must rebase its row IDs.
    outcome, _ = race_held_commit(
        table_path, 2,
        lambda: filecommit.write(spark.createDataFrame([(10, 1), (11, 1)], "id long, v long"), table_path),
        lambda: filecommit.write(spark.createDataFrame([(20, 2), (21, 2), (22, 2)], "id long, v long"), table_path))
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"].version == 3 and outcome["result"].metrics.attempts >= 2, outcome["result"]

    ids = _row_tracking_by_id(delta_spark, table_path)
    _assert_unique(ids)
    assert sorted(ids[k][1] for k in (20, 21, 22)) == [2, 3, 4]
    assert sorted(ids[k][1] for k in (10, 11)) == [5, 6]
    assert {ids[k][2] for k in (10, 11)} == {3}, "the retried commit's rows carry its own version"
    assert _high_water_mark(table_path) == 6



def _at_versions(delta_spark, path, versions):
    """``{version: {id: (v, row_id, row_commit_version)}}`` read by Spark + Delta in one request."""
    reads = [{"kind": "sql", "path": path, "sql": IDS + f" VERSION AS OF {v}"} for v in versions]
    out = {}
    for v, r in zip(versions, delta_spark.read(reads), strict=True):
        assert r["ok"], r
        out[v] = {row["id"]: (row["v"], row["row_id"], row["rcv"]) for row in r["rows"]}
    return out


def test_row_ids_kept_through_update_delete_merge_optimize_restore(spark, delta_spark, table_path):
    # Two files by delta-spark: ids 1-3 get row IDs 0-2 (version 1), ids 4-6 row IDs 3-5 (version 2).
    spark_delta_sql(delta_spark, table_path, "CREATE TABLE {table} (id BIGINT, v BIGINT) USING delta TBLPROPERTIES "
                    "('delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = 'false')")
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (1, 10), (2, 20), (3, 30)")
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (4, 40), (5, 50), (6, 60)")
    start = {1: (10, 0, 1), 2: (20, 1, 1), 3: (30, 2, 1), 4: (40, 3, 2), 5: (50, 4, 2), 6: (60, 5, 2)}

    assert filecommit.update(spark, table_path, set={"v": "v + 100"}, condition="id = 2").version == 3
    assert filecommit.delete(spark, table_path, "id = 3").version == 4
    source = spark.createDataFrame([(4, 400), (7, 700)], "id long, v long")
    assert (filecommit.merge(source, table_path, "target.id = source.id")
            .when_matched_update({"v": "source.v"}).when_not_matched_insert_all().execute()).version == 5
    assert filecommit.optimize(spark, table_path).version == 6
    assert filecommit.restore(spark, table_path, version=3).version == 7
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (8, 80)")  # Delta's writer co-writes

    got = _at_versions(delta_spark, table_path, [2, 3, 4, 5, 6, 7, 8])
    # As Delta gives them (PROTOCOL.md "Row Tracking"): a copied row keeps its row ID and row commit
    # version, an updated row keeps its row ID and takes the commit's version, an inserted row
    # takes a fresh ID above every ID handed out before; RESTORE brings back the rows' own values.
    assert got[2] == start
    v3 = {**start, 2: (120, 1, 3)}
    assert got[3] == v3
    v4 = {k: t for k, t in v3.items() if k != 3}
    assert got[4] == v4
    v5 = {**v4, 4: (400, 3, 5)}
    assert {k: t for k, t in got[5].items() if k != 7} == v5
    assert got[5][7][0::2] == (700, 5) and got[5][7][1] > 5
    assert got[6] == got[5], "OPTIMIZE keeps every row's ID and commit version"
    assert got[7] == v3, "RESTORE brings back the rows with their IDs and versions"
    assert {k: t for k, t in got[8].items() if k != 8} == v3
    assert got[8][8][0::2] == (80, 8) and got[8][8][1] > _high_water_mark_before(table_path, 8)
    for state in got.values():
        _assert_unique(state)


def _high_water_mark_before(path, version):
    """The high-water mark committed before ``version`` (raw log)."""
    import json

    mark = -1
    for v, actions in sorted(log_actions(path).items()):
        for a in actions:
            dm = a.get("domainMetadata")
            if v < version and dm and dm["domain"] == "delta.rowTracking":
                mark = json.loads(dm["configuration"])["rowIdHighWaterMark"]
    return mark


def test_data_cannot_set_materialized_row_ids(spark, table_path):
    """The hidden row ID column is the table's, not the writer's: data that names it is refused, so no
    writer can hand out a row ID another row has."""
    filecommit.write(spark.createDataFrame([(1, 10)], "id long, v long"), table_path,
                     table_properties={"delta.enableRowTracking": "true"})
    conf = next(a["metaData"] for a in log_actions(table_path)[0] if "metaData" in a)["configuration"]
    hidden = conf["delta.rowTracking.materializedRowIdColumnName"]
    forged = spark.createDataFrame([(2, 20, 0)], f"id long, v long, `{hidden}` long")
    with pytest.raises(PySparkException) as e:
        filecommit.write(forged, table_path)
    assert error_class(e.value) == "DELTA_METADATA_MISMATCH", e.value
    # Not as a new column either (schema evolution), as in Delta.
    with pytest.raises(PySparkException) as e:
        filecommit.write(forged, table_path, options={"mergeSchema": "true"})
    assert error_class(e.value) == "DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED", e.value
    assert sorted(log_actions(table_path)) == [0]
