"""The table handle (``filecommit.table`` / ``filecommit.Table``): every method end to end, by path and
by catalog name, with what it committed read back by delta-rs (which knows nothing of the client),
and the handle's plumbing (path or name, argument checks, deprecated names) without a server.
"""

from __future__ import annotations

import os
import uuid
import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import canonical, delta_rows, delta_table, rows_frame
from pyspark.errors import PySparkTypeError, PySparkValueError

import filecommit

COLUMNS = ["id", "v", "part"]
SCHEMA = "id long, v string, part string"


def _assert_metric_aliases(m: filecommit.WriteMetrics) -> None:
    """The deprecated names hold the same values as Delta's num_* names."""
    assert (m.rows, m.files, m.bytes, m.removed_files, m.cdc_files) == (
        m.num_output_rows, m.num_files, m.num_output_bytes, m.num_removed_files, m.num_added_change_files)


@pytest.mark.slow
def test_every_method_by_path(spark, tmp_path):
    path = str(tmp_path / "t")
    t = filecommit.table(spark, path)
    assert isinstance(t, filecommit.Table) and (t.path, t.name) == (path, None)

    r = t.write(spark.createDataFrame([(1, "a", "x"), (2, "b", "x"), (3, "c", "y")], SCHEMA), partition_by=["part"])
    assert (r.version, r.committed) == (0, True)
    assert r.metrics.num_output_rows == 3 and r.metrics.num_files == len(r.add_files) == 2
    assert r.metrics.num_output_bytes == sum(a.size for a in r.add_files) > 0
    _assert_metric_aliases(r.metrics)
    assert delta_table(path).version() == 0 and delta_table(path).metadata().partition_columns == ["part"]
    pd.testing.assert_frame_equal(delta_rows(path, COLUMNS),
                                  rows_frame([(1, "a", "x"), (2, "b", "x"), (3, "c", "y")], COLUMNS))

    r = t.set_table_properties({"delta.enableChangeDataFeed": "true"})
    assert r.version == 1 and delta_table(path).metadata().configuration["delta.enableChangeDataFeed"] == "true"

    r = t.delete("id = 1")
    assert r.version == 2 and r.metrics.num_deleted_rows == 1 and r.metrics.num_removed_files == 1
    _assert_metric_aliases(r.metrics)
    assert r.metrics.num_added_change_files == len(r.cdc_files) == 1
    r = t.update(set={"v": "'B'"}, condition="id = 2")
    assert r.version == 3 and r.metrics.num_updated_rows == 1
    source = spark.createDataFrame([(3, "C", "y"), (4, "d", "y")], SCHEMA)
    r = t.merge(source, "target.id = source.id").when_matched_update_all().when_not_matched_insert_all().execute()
    assert r.version == 4 and (r.metrics.num_updated_rows, r.metrics.num_inserted_rows) == (1, 1)
    after_merge = rows_frame([(2, "B", "x"), (3, "C", "y"), (4, "d", "y")], COLUMNS)
    pd.testing.assert_frame_equal(delta_rows(path, COLUMNS), after_merge)

    # reads: the latest version and time travel, against delta-rs at the same versions
    pd.testing.assert_frame_equal(canonical(t.to_df().toArrow(), COLUMNS), after_merge)
    pd.testing.assert_frame_equal(canonical(t.to_df(version=0).toArrow(), COLUMNS), delta_rows(path, COLUMNS, 0))
    commits = t.history()
    assert [c.version for c in commits] == [4, 3, 2, 1, 0]
    assert [c.operation for c in commits] == [h["operation"] for h in delta_table(path).history()]
    assert [c.version for c in t.history(limit=2)] == [4, 3]
    at_v2 = t.to_df(timestamp=commits[2].timestamp)
    pd.testing.assert_frame_equal(canonical(at_v2.toArrow(), COLUMNS), delta_rows(path, COLUMNS, 2))

    # staged commits: write, audit, publish; abort; stage files already under the root
    staged = t.write(spark.createDataFrame([(5, "e", "x")], SCHEMA), stage=True)
    assert isinstance(staged, filecommit.StagedCommit) and staged.id is not None
    assert delta_table(path).version() == 4  # nothing in the log yet
    assert t.get_staged(staged.id).id == staged.id
    assert [tuple(row) for row in t.read_staged(staged).collect()] == [(5, "e", "x")]
    assert t.read_staged(staged, table_after=True).count() == 4
    r = t.commit(staged)
    assert r.version == 5 and delta_table(path).version() == 5
    dropped = t.delete("id = 5", stage=filecommit.Stage(expires_after_ms=60_000))
    assert t.abort(dropped) == 1 and delta_table(path).version() == 5
    os.makedirs(os.path.join(path, "part=z"))
    pq.write_table(pa.table({"id": pa.array([6], pa.int64()), "v": ["f"]}), os.path.join(path, "part=z", "ext.parquet"))
    r = t.commit(t.stage(["part=z/ext.parquet"]))
    assert r.version == 6
    pd.testing.assert_frame_equal(
        delta_rows(path, COLUMNS),
        rows_frame([(2, "B", "x"), (3, "C", "y"), (4, "d", "y"), (5, "e", "x"), (6, "f", "z")], COLUMNS))

    # maintenance
    t.write(spark.createDataFrame([(7, "g", "x")], SCHEMA))
    r = t.optimize(where="part = 'x'")
    assert r.version == 8 and int(r.operation_metrics["numRemovedFiles"]) >= 2
    assert int(r.operation_metrics["numAddedFiles"]) == 1 and delta_table(path).version() == 8
    assert len(delta_rows(path, COLUMNS)) == 6
    r = t.restore(version=4)
    assert r.version == 9 and r.operation_metrics
    pd.testing.assert_frame_equal(delta_rows(path, COLUMNS), after_merge)
    v = t.vacuum(dry_run=True)
    assert v.dry_run and v.num_files == len(v.files) and v.num_bytes >= 0
    assert delta_table(path).version() == 9  # VACUUM commits nothing


@pytest.mark.slow
def test_every_method_by_catalog_name(spark, tmp_path):
    path = str(tmp_path / "named")
    name = f"default.handle_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING, part STRING) USING delta PARTITIONED BY (part) "
              f"LOCATION '{path}'").collect()
    t = filecommit.table(spark, name)
    assert (t.path, t.name) == (None, name)

    r = t.write(spark.createDataFrame([(1, "a", "x"), (2, "b", "y")], SCHEMA))
    assert r.version == 1 and delta_table(path).version() == 1
    _assert_metric_aliases(r.metrics)
    assert t.set_table_properties({"delta.appendOnly": "false"}).version == 2
    assert t.delete("id = 1").metrics.num_deleted_rows == 1
    assert t.update({"v": "'B'"}, "id = 2").metrics.num_updated_rows == 1
    r = (t.merge(spark.createDataFrame([(3, "c", "x")], SCHEMA).alias("s"), "target.id = s.id")
         .when_not_matched_insert_all().execute())
    assert r.version == 5
    expected = rows_frame([(2, "B", "y"), (3, "c", "x")], COLUMNS)
    pd.testing.assert_frame_equal(delta_rows(path, COLUMNS), expected)
    pd.testing.assert_frame_equal(canonical(t.to_df().toArrow(), COLUMNS), expected)
    pd.testing.assert_frame_equal(canonical(t.to_df(version=1).toArrow(), COLUMNS), delta_rows(path, COLUMNS, 1))
    commits = t.history()
    assert [c.version for c in commits] == [5, 4, 3, 2, 1, 0]
    pd.testing.assert_frame_equal(canonical(t.to_df(timestamp=str(commits[4].timestamp)).toArrow(), COLUMNS),
                                  delta_rows(path, COLUMNS, 1))

    staged = t.write(spark.createDataFrame([(4, "d", "y")], SCHEMA), stage=True)
    assert t.get_staged(str(staged.id)).operation == "WRITE"
    assert t.commit([staged]).version == 6
    assert t.optimize().version == 7
    assert t.restore(version=1).version == 8
    pd.testing.assert_frame_equal(delta_rows(path, COLUMNS), delta_rows(path, COLUMNS, 1))
    assert t.vacuum(dry_run=True).dry_run


@pytest.mark.slow
def test_handle_results_equal_free_functions(spark, tmp_path):
    """The handle delegates: the same calls through the functions and the handle commit the same."""
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    df = spark.createDataFrame([(1, "a", "x"), (2, "b", "y")], SCHEMA)
    ra = filecommit.write(df, a, partition_by="part")
    rb = filecommit.table(spark, b).write(df, partition_by="part")
    assert (ra.version, ra.metrics.num_output_rows, len(ra.add_files)) == (
        rb.version, rb.metrics.num_output_rows, len(rb.add_files))
    da = filecommit.delete(spark, a, "id = 1")
    db = filecommit.table(spark, b).delete("id = 1")
    assert (da.version, da.metrics.num_deleted_rows) == (db.version, db.metrics.num_deleted_rows)
    pd.testing.assert_frame_equal(delta_rows(a, COLUMNS), delta_rows(b, COLUMNS))


def test_path_or_name():
    assert filecommit.table(None, "/data/t").path == "/data/t"  # type: ignore[arg-type]
    assert filecommit.table(None, "s3a://bucket/t").path == "s3a://bucket/t"  # type: ignore[arg-type]
    assert filecommit.table(None, "file:rel").path == "file:rel"  # type: ignore[arg-type]
    assert filecommit.table(None, "db.t").name == "db.t"  # type: ignore[arg-type]
    assert filecommit.table(None, "t").name == "t"  # type: ignore[arg-type]
    assert filecommit.Table.for_path(None, "t").path == "t"  # type: ignore[arg-type]
    assert repr(filecommit.Table.for_name(None, "db.t")) == "Table(name='db.t')"  # type: ignore[arg-type]


def test_bad_arguments_raise_before_anything_is_sent():
    with pytest.raises(PySparkValueError) as e:
        filecommit.table(None, "")  # type: ignore[arg-type]
    assert e.value.getCondition() == "VALUE_NOT_NON_EMPTY_STR"
    with pytest.raises(PySparkValueError) as e:
        filecommit.table(None, 7)  # type: ignore[arg-type]
    assert e.value.getCondition() == "VALUE_NOT_NON_EMPTY_STR"
    with pytest.raises(PySparkTypeError) as e:
        t0 = filecommit.table(None, "/data/t")  # type: ignore[arg-type]
        t0.to_df(version="1")  # type: ignore[arg-type]
    assert e.value.getCondition() == "NOT_EXPECTED_TYPE"
    with pytest.raises(PySparkValueError) as e:
        filecommit.Table(None, path="/t", name="db.t")  # type: ignore[arg-type]
    assert e.value.getCondition() == "CANNOT_SET_TOGETHER"
    t = filecommit.table(None, "/data/t")  # type: ignore[arg-type]
    with pytest.raises(PySparkValueError) as e:
        t.to_df(version=1, timestamp="2026-01-01")
    assert e.value.getCondition() == "VALUE_NOT_ALLOWED"
    with pytest.raises(PySparkValueError) as e:
        t.to_df(version=-1)
    assert e.value.getCondition() == "NEGATIVE_VALUE"


def test_plumbing_moved_to_server_module():
    for name in ("PLUGIN_CLASS", "find_plugin_jar", "find_native_jars"):
        assert name not in filecommit.__all__
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(filecommit, name) is getattr(filecommit.server, name)
        assert [w.category for w in caught] == [DeprecationWarning], name
    with pytest.raises(AttributeError):
        filecommit.no_such_name  # noqa: B018
    assert "table" in filecommit.__all__ and "Table" in filecommit.__all__
