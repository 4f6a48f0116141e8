"""OPTIMIZE and RESTORE against Delta Lake on Spark: the same change on copies of the same Delta-made
table removes (and for RESTORE adds) the same files, records the same metric names and leaves the
same rows; Spark + Delta and delta-rs read every result. Errors are refused with Delta's classes
before anything is committed.

Tables are made by real delta-spark (``.venv-delta``); Delta's OPTIMIZE / RESTORE run there too.
"""

from __future__ import annotations

import datetime
import os

import pytest
from helpers import data_files, delta_table, log_actions, twin_copier, values_sql
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

COLUMNS = ["id", "v", "part"]


def _batch(lo, hi):
    return [(i, i * 10, "abc"[i % 3]) for i in range(lo, hi)]


STEPS = [{"sql": s} for s in (
    "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
    "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
    f"INSERT INTO {{table}} VALUES {values_sql(_batch(0, 30))}",
    f"INSERT INTO {{table}} VALUES {values_sql(_batch(30, 60))}",
    f"INSERT INTO {{table}} VALUES {values_sql(_batch(60, 90))}",
    f"INSERT INTO {{table}} VALUES {values_sql(_batch(90, 120))}",
    "DELETE FROM {table} WHERE id % 7 = 0",
    "INSERT INTO {table} VALUES (1000, 1, 'd')",
    "INSERT INTO {table} VALUES (2000, 2, 'e'), (2001, 3, 'e')",
    "DELETE FROM {table} WHERE id = 2000",
    "UPDATE {table} SET v = -v WHERE id % 11 = 0",
)]
FIXTURES = {"small": STEPS}

OPTIMIZE_METRICS = {"numRemovedFiles", "numRemovedBytes", "p25FileSize", "numDeletionVectorsRemoved", "minFileSize",
                    "p75FileSize", "p50FileSize", "numAddedBytes", "numAddedFiles", "maxFileSize"}
RESTORE_METRICS = {"numRestoredFiles", "removedFilesSize", "numRemovedFiles", "restoredFilesSize",
                   "numOfFilesAfterRestore", "tableSizeAfterRestore"}


def _copier(made, tmp_path, where="local"):
    """``copy(name)``: fresh twin copies (ours, Delta's) on every call, in a new directory; ours in
    the session's MinIO bucket with ``where="s3"``."""
    count = iter(range(100))

    def copy(name):
        d = tmp_path / f"copy{next(count)}"
        d.mkdir()
        return twin_copier(made, d, where)(name)

    return copy


def _last_commit(path):
    actions = log_actions(path)
    version = max(actions)
    commit = actions[version]
    info = next(a["commitInfo"] for a in commit if "commitInfo" in a)
    adds = [a["add"] for a in commit if "add" in a]
    removes = [a["remove"] for a in commit if "remove" in a]
    return version, info, adds, removes


def _file_keys(actions):
    return sorted((a["path"], (a.get("deletionVector") or {}).get("pathOrInlineDv")) for a in actions)


def _delta_sql(delta_spark, *statements, path=None):
    reads = [{"kind": "sql", "sql": s, "path": path} if "{table}" in s else {"kind": "sql", "sql": s}
             for s in statements]
    out = delta_spark.read(reads)
    for r, s in zip(out, statements, strict=True):
        assert r["ok"], f"Delta failed {s}: {r.get('error')}"
    return out


def _delta_rs_rows(path):
    """Rows as delta-rs reads them (its DataFusion scan applies deletion vectors)."""
    import pyarrow as pa
    from deltalake import QueryBuilder

    got = pa.table(QueryBuilder().register("t", delta_table(path)).execute("SELECT id, v, part FROM t").read_all())
    return sorted(zip(got["id"].to_pylist(), got["v"].to_pylist(), got["part"].to_pylist(), strict=True))


def _rows_both_readers(delta_spark, path):
    got = delta_spark.read_one({"path": path, "kind": "table"})
    assert got["ok"], got.get("error")
    spark_rows = sorted(tuple(r[c] for c in COLUMNS) for r in got["rows"])
    rs_rows = _delta_rs_rows(path)
    assert spark_rows == rs_rows
    return spark_rows


def _compare_optimize(delta_spark, ours, theirs, result, *, check_bytes=True):
    """Our OPTIMIZE commit against Delta's on the twin copy; returns our rows as both readers read
    them (Delta's copy, the expectation, is read by delta-rs)."""
    v_ours, info_ours, adds_ours, removes_ours = _last_commit(ours)
    v_theirs, info_theirs, _, removes_theirs = _last_commit(theirs)
    assert result.committed and result.version == v_ours == v_theirs
    assert info_ours["operation"] == info_theirs["operation"] == "OPTIMIZE"
    assert set(info_ours["operationMetrics"]) == set(info_theirs["operationMetrics"]) == OPTIMIZE_METRICS
    assert set(result.operation_metrics) == OPTIMIZE_METRICS
    # The same files leave the table, with the same deletion vectors.
    assert _file_keys(removes_ours) == _file_keys(removes_theirs)
    assert sorted(r.path for r in result.remove_files) == sorted(r["path"] for r in removes_ours)
    for name in ("numRemovedFiles", "numRemovedBytes", "numAddedFiles", "numDeletionVectorsRemoved"):
        assert info_ours["operationMetrics"][name] == info_theirs["operationMetrics"][name], name
    assert set(info_ours["operationParameters"]) >= {"predicate", "zOrderBy", "auto"}
    assert not any(a["dataChange"] for a in adds_ours) and not any(r["dataChange"] for r in removes_ours)
    assert all("deletionVector" not in a for a in adds_ours)
    assert not any(f.startswith("_change_data/") for f in data_files(ours))
    rows = _rows_both_readers(delta_spark, ours)
    assert rows == _delta_rs_rows(theirs)
    if check_bytes:
        assert int(info_ours["operationMetrics"]["numAddedBytes"]) == sum(a["size"] for a in adds_ours)
    return rows


@pytest.mark.parametrize("where", ["local", "s3"])
def test_optimize_compacts_the_files_delta_compacts(spark, delta_spark, made, tmp_path, where):
    ours, theirs, version = _copier(made, tmp_path, where)("small")
    before = _delta_rs_rows(ours)
    _delta_sql(delta_spark, "OPTIMIZE {table}", path=theirs)
    result = filecommit.optimize(spark, ours)
    assert _compare_optimize(delta_spark, ours, theirs, result) == before
    assert int(result.operation_metrics["numDeletionVectorsRemoved"]) > 0
    _, info, _, _ = _last_commit(ours)
    assert info["operationParameters"]["predicate"] == "[]" and info["operationParameters"]["zOrderBy"] == "[]"
    # Nothing left to compact: no commit, as Delta.
    again = filecommit.optimize(spark, ours)
    assert not again.committed and again.version == version + 1


def test_optimize_where_and_zorder_follow_delta(spark, delta_spark, made, tmp_path):
    copy = _copier(made, tmp_path)
    ours, theirs, _ = copy("small")
    _delta_sql(delta_spark, "OPTIMIZE {table} WHERE part = 'a'", path=theirs)
    result = filecommit.optimize(spark, ours, where="part = 'a'")
    _compare_optimize(delta_spark, ours, theirs, result)
    assert {r.partition_values["part"] for r in result.remove_files} == {"a"}

    ours, theirs, _ = copy("small")
    _delta_sql(delta_spark, "OPTIMIZE {table} ZORDER BY (v)", path=theirs)
    result = filecommit.optimize(spark, ours, zorder_by="v")
    _compare_optimize(delta_spark, ours, theirs, result)
    _, info, _, _ = _last_commit(ours)
    assert info["operationParameters"]["zOrderBy"] == '["v"]'


def test_target_file_size_from_call_table_property_and_server(spark, delta_spark, made, tmp_path):
    copy = _copier(made, tmp_path)
    ours, theirs, _ = copy("small")
    target = 2500  # a few of the fixture's ~1 KB files per bin: several bins per partition
    _delta_sql(delta_spark, f"SET spark.databricks.delta.optimize.maxFileSize = {target}", "OPTIMIZE {table}",
               "RESET spark.databricks.delta.optimize.maxFileSize", path=theirs)
    result = filecommit.optimize(spark, ours, target_file_size=target)
    _compare_optimize(delta_spark, ours, theirs, result)
    assert result.metrics.files > 3  # more than one file per partition

    ours2, _, _ = copy("small")
    filecommit.set_table_properties(spark, ours2, {"delta.targetFileSize": str(target)})
    by_property = filecommit.optimize(spark, ours2)
    assert _file_keys([{"path": r.path} for r in by_property.remove_files]) == \
        _file_keys([{"path": r.path} for r in result.remove_files])
    assert by_property.metrics.files == result.metrics.files


def test_optimize_refuses_what_delta_refuses(spark, made, tmp_path):
    ours, _, version = _copier(made, tmp_path)("small")
    cases = [
        ({"where": "v = 1"}, filecommit.errors.DELTA_NON_PARTITION_COLUMN_REFERENCE),
        ({"where": ["part = 'a'", "id > 3"]}, filecommit.errors.DELTA_NON_PARTITION_COLUMN_REFERENCE),
        ({"zorder_by": ["part"]}, filecommit.errors.DELTA_ZORDERING_ON_PARTITION_COLUMN),
        ({"zorder_by": ["nope"]}, filecommit.errors.DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST),
        ({"where": "part = "}, filecommit.errors.DELTA_FAILED_RECOGNIZE_PREDICATE),
    ]
    for kwargs, condition in cases:
        with pytest.raises(PySparkException) as e:
            filecommit.optimize(spark, ours, **kwargs)
        assert e.value.getCondition() == condition, kwargs
    filecommit.set_table_properties(spark, ours, {"delta.dataSkippingNumIndexedCols": "1"})
    with pytest.raises(PySparkException) as e:
        filecommit.optimize(spark, ours, zorder_by="v")
    assert e.value.getCondition() == filecommit.errors.DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS
    for bad in (0, -5, True, "1g"):
        with pytest.raises(PySparkException) as e:
            filecommit.optimize(spark, ours, target_file_size=bad)
        assert e.value.getCondition() in (filecommit.errors.NOT_EXPECTED_TYPE, filecommit.errors.VALUE_OUT_OF_BOUNDS,
                                          filecommit.errors.NEGATIVE_VALUE)
    with pytest.raises(PySparkException) as e:
        filecommit.set_table_properties(spark, ours, {"delta.autoOptimize.autoCompact": "sometimes"})
    assert e.value.getCondition() == filecommit.errors.DELTA_INVALID_AUTO_COMPACT_TYPE
    with pytest.raises(PySparkException) as e:
        filecommit.set_table_properties(spark, ours, {"delta.targetFileSize": "big"})
    assert e.value.getCondition() == filecommit.errors.DELTA_ILLEGAL_OPTION
    assert max(log_actions(ours)) == version + 1  # only the property change landed


def _commit_ms(path, version):
    return int(os.path.getmtime(os.path.join(path, "_delta_log", f"{version:020d}.json")) * 1000)


def test_restore_brings_back_what_delta_brings_back(spark, delta_spark, made, tmp_path):
    """RESTORE by version and by timestamp commits what Delta's RESTORE commits. (RESTORE of an
    s3a:// table, read back by Spark + Delta, is in test_s3's every-command test.)"""
    copy = _copier(made, tmp_path)
    for target in (2, 6):
        ours, theirs, latest = copy("small")
        _delta_sql(delta_spark, f"RESTORE TABLE {{table}} TO VERSION AS OF {target}", path=theirs)
        result = filecommit.restore(spark, ours, version=target)
        v_ours, info_ours, adds_ours, removes_ours = _last_commit(ours)
        v_theirs, info_theirs, adds_theirs, removes_theirs = _last_commit(theirs)
        assert result.version == v_ours == v_theirs == latest + 1
        assert info_ours["operation"] == info_theirs["operation"] == "RESTORE"
        assert info_ours["operationMetrics"] == info_theirs["operationMetrics"]
        assert set(result.operation_metrics) == RESTORE_METRICS
        assert result.operation_metrics == info_theirs["operationMetrics"]
        assert _file_keys(adds_ours) == _file_keys(adds_theirs)
        assert _file_keys(removes_ours) == _file_keys(removes_theirs)
        assert all(a["dataChange"] for a in adds_ours) and all(r["dataChange"] for r in removes_ours)
        old = delta_spark.read_one({"path": ours, "kind": "table", "version": target})
        now = _rows_both_readers(delta_spark, ours)
        assert sorted(tuple(r[c] for c in COLUMNS) for r in old["rows"]) == now
        assert now == _delta_rs_rows(theirs)  # Delta's copy, the expectation

    ours, theirs, latest = copy("small")
    ms = _commit_ms(ours, 3) + 1
    stamp = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    _delta_sql(delta_spark, f"RESTORE TABLE {{table}} TO TIMESTAMP AS OF '{stamp.strftime('%Y-%m-%d %H:%M:%S.%f')}'",
               path=theirs)
    result = filecommit.restore(spark, ours, timestamp=stamp)
    assert result.operation_metrics == _last_commit(theirs)[1]["operationMetrics"]
    assert _file_keys(_last_commit(ours)[2]) == _file_keys(_last_commit(theirs)[2])


def test_restore_refuses_out_of_range_and_vacuumed_versions(spark, delta_spark, made, tmp_path):
    ours, _, latest = _copier(made, tmp_path)("small")
    for version in (latest, latest + 5):
        with pytest.raises(PySparkException) as e:
            filecommit.restore(spark, ours, version=version)
        assert e.value.getCondition() == filecommit.errors.DELTA_CANNOT_RESTORE_TABLE_VERSION
    with pytest.raises(PySparkException) as e:
        filecommit.restore(spark, ours, timestamp="2999-01-01")
    assert e.value.getCondition() == filecommit.errors.DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER
    with pytest.raises(PySparkException) as e:
        filecommit.restore(spark, ours, timestamp="1999-01-01")
    assert e.value.getCondition() == filecommit.errors.DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER
    for kwargs in ({}, {"version": 1, "timestamp": "2024-01-01"}):
        with pytest.raises(PySparkException) as e:
            filecommit.restore(spark, ours, **kwargs)
        assert e.value.getCondition() == filecommit.errors.VALUE_NOT_ALLOWED
    optimized = filecommit.optimize(spark, ours)
    for r in optimized.remove_files:  # what VACUUM would delete once the retention has passed
        os.remove(os.path.join(ours, r.path))
    with pytest.raises(PySparkException) as e:
        filecommit.restore(spark, ours, version=2)
    assert e.value.getCondition() == filecommit.errors.FILECOMMIT_RESTORE_MISSING_FILES
    # A retention this server refuses to set (below its floor), set by another tool.
    _delta_sql(delta_spark, "ALTER TABLE {table} SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = "
               "'interval 0 hours')", path=ours)
    with pytest.raises(PySparkException) as e:
        filecommit.restore(spark, ours, version=latest + 1)
    assert e.value.getCondition() == \
        filecommit.errors.DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION
    assert max(log_actions(ours)) == latest + 2  # the OPTIMIZE and the property only
    got = delta_spark.read_one({"path": ours, "kind": "table"})
    assert got["ok"] and len(got["rows"]) == len(_rows_both_readers(delta_spark, ours)) > 0
