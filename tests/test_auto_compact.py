"""Auto compaction (``delta.autoOptimize.autoCompact``, Delta's ``AutoCompact`` post-commit hook):
concurrent Spark Connect clients (4 appending 20 times each in ``make test``, 8 appending 25 times in
``make test-stress``: ``helpers.stress_size``) append to a table with auto compaction on; the OPTIMIZE
commits it adds (``auto=true``, ``dataChange=false``) keep the file count down, every append lands
and Spark + Delta and delta-rs read exactly the appended rows. A compaction that loses a race
never fails the write that triggered it.
"""

from __future__ import annotations

import json
import threading

import pytest
from helpers import delta_table, log_actions, second_session, stress_size

import filecommit

pytestmark = pytest.mark.slow

CLIENTS = stress_size("FILECOMMIT_AUTO_COMPACT_CLIENTS", 4, 8)  # 2 files per append: one per part
APPENDS = stress_size("FILECOMMIT_AUTO_COMPACT_APPENDS", 20, 25)  # >= 50 files a part (Delta's minNumFiles)
ROWS_PER_APPEND = 4


def _append_df(session, client, n):
    base = 100_000 * (client + 1) + 100 * n
    return session.createDataFrame([(base + j, "ab"[j % 2]) for j in range(ROWS_PER_APPEND)],
                                   "id long, part string").coalesce(1)


def _delta_rs_ids(path):
    import pyarrow as pa
    from deltalake import QueryBuilder

    got = pa.table(QueryBuilder().register("t", delta_table(path)).execute("SELECT id FROM t").read_all())
    return sorted(got["id"].to_pylist())


@pytest.mark.stress
def test_auto_compaction_under_concurrent_appending_clients(spark, delta_spark, table_path):
    filecommit.write(spark.createDataFrame([(0, "a"), (1, "b")], "id long, part string"), table_path,
                     partition_by=["part"], table_properties={"delta.autoOptimize.autoCompact": "true"})
    sessions = [spark] + [second_session(spark) for _ in range(CLIENTS - 1)]
    errors, results = [], []

    def client(i):
        try:
            for n in range(APPENDS):
                results.append(filecommit.write(_append_df(sessions[i], i, n), table_path))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=900)
    for s in sessions[1:]:
        s.stop()
    assert not errors, errors
    assert len(results) == CLIENTS * APPENDS and all(r.committed for r in results)
    # The writes' own results are theirs: WRITE versions, only their own added files.
    log = log_actions(table_path)
    ops = {v: next(a["commitInfo"] for a in acts if "commitInfo" in a) for v, acts in log.items()}
    assert all(ops[r.version]["operation"] == "WRITE" for r in results)
    autos = [v for v, ci in ops.items() if ci["operation"] == "OPTIMIZE"]
    assert autos, "auto compaction committed at least once"
    for v in autos:
        assert ops[v]["operationParameters"]["auto"] in (True, "true")
        assert json.loads(ops[v]["operationParameters"]["zOrderBy"]) == []
        acts = log[v]
        assert all(not a[k]["dataChange"] for a in acts for k in ("add", "remove") if k in a)
    added = sum(len(r.add_files) for r in results) + 2
    final = delta_spark.read_one({"path": table_path, "kind": "detail"})
    files_after = final["numFiles"]
    print(f"\nauto compaction: {added} files appended by {CLIENTS}x{APPENDS} writes, {len(autos)} OPTIMIZE "
          f"commits, {files_after} files in the final snapshot")
    assert files_after < added / 2
    expected = sorted([0, 1] + [100_000 * (i + 1) + 100 * n + j for i in range(CLIENTS) for n in range(APPENDS)
                                for j in range(ROWS_PER_APPEND)])
    table = delta_spark.read_one({"path": table_path, "kind": "table"})
    assert table["ok"], table.get("error")
    assert sorted(r["id"] for r in table["rows"]) == expected
    assert _delta_rs_ids(table_path) == expected


def test_auto_compaction_is_off_by_default_and_below_the_threshold(spark, delta_spark, table_path):
    """Off until the table property turns it on; then a partition is compacted once it holds the 50
    small files Delta needs. (OPTIMIZE of an s3a:// table is in test_s3's every-command test.)"""
    df = spark.createDataFrame([(i, "a") for i in range(3)], "id long, part string").coalesce(1)
    filecommit.write(df, table_path, partition_by=["part"])
    for _ in range(3):
        filecommit.write(df, table_path)
    filecommit.set_table_properties(spark, table_path, {"delta.autoOptimize.autoCompact": "true"})
    r = filecommit.write(df, table_path)  # 5 small files: below the 50 Delta needs in a partition
    ops = [next(a["commitInfo"]["operation"] for a in acts if "commitInfo" in a)
           for _, acts in sorted(log_actions(table_path).items())]
    assert ops == ["WRITE"] * 4 + ["SET TBLPROPERTIES", "WRITE"]
    assert r.version == 5
    # At the threshold: one write of 50 small files in partition a compacts it, in a commit of its own.
    many = spark.range(100, 150, 1, 50).selectExpr("id", "'a' AS part")
    assert filecommit.write(many, table_path).version == 6
    log = log_actions(table_path)
    assert sorted(log) == [0, 1, 2, 3, 4, 5, 6, 7]
    info = next(a["commitInfo"] for a in log[7] if "commitInfo" in a)
    assert info["operation"] == "OPTIMIZE" and info["operationParameters"]["auto"] in (True, "true")
    assert len([a for a in log[7] if "remove" in a]) == 55 and len([a for a in log[7] if "add" in a]) == 1
    expected = sorted([i for i in range(3)] * 5 + list(range(100, 150)))
    assert _delta_rs_ids(table_path) == expected
    table = delta_spark.read_one({"path": table_path, "kind": "table"})
    assert table["ok"], table.get("error")
    assert sorted(r["id"] for r in table["rows"]) == expected


@pytest.mark.parametrize("statement", ["DELETE FROM {t} WHERE id = 100",
                                       "UPDATE {t} SET id = id + 1000 WHERE id = 101",
                                       "MERGE INTO {t} AS t USING (SELECT 102L AS id) AS s ON t.id = s.id "
                                       "WHEN MATCHED THEN DELETE"])
def test_sql_row_level_changes_trigger_auto_compaction(spark, delta_spark, tmp_path, statement):
    """Auto compaction is a hook on the transaction: SQL DELETE / UPDATE / MERGE (not only the
    Python client's writes) compact the partitions they added files to."""
    path = str(tmp_path / "t")
    many = spark.range(100, 200, 1, 50).selectExpr("id", "'a' AS part")  # 50 small files of 2 rows in partition a
    filecommit.write(many, path, partition_by=["part"])
    filecommit.set_table_properties(spark, path, {"delta.autoOptimize.autoCompact": "true"})
    spark.sql(statement.format(t=f"delta.`{path}`")).collect()  # rewrites one file: adds it to partition a
    log = log_actions(path)
    assert sorted(log) == [0, 1, 2, 3]
    ops = [next(a["commitInfo"] for a in log[v] if "commitInfo" in a) for v in (2, 3)]
    assert ops[0]["operation"] == statement.split()[0]
    assert ops[1]["operation"] == "OPTIMIZE" and ops[1]["operationParameters"]["auto"] in (True, "true")
    assert len([a for a in log[3] if "add" in a]) == 1
    changed = {"DELETE": {100: None}, "UPDATE": {101: 1101}, "MERGE": {102: None}}[statement.split()[0]]
    expected = sorted(changed.get(i, i) for i in range(100, 200) if changed.get(i, i) is not None)
    assert _delta_rs_ids(path) == expected
    table = delta_spark.read_one({"path": path, "kind": "table"})
    assert table["ok"], table.get("error")
    assert sorted(r["id"] for r in table["rows"]) == expected
