"""Many small writers on one server: group commit of blind appends, end to end.

16 client sessions x 15 small appends at once (50 in ``make test-stress``: ``helpers.stress_size``), to a partitioned table (some clients idempotent with
``txn=(app_id, version)``, and sending some of their writes twice) and to a change-data-feed table
(``change_data=True``). Checked against the log and two independent readers (delta-rs, and Spark +
Delta through ``tests/delta_spark_reader.py``): every row exactly once, each client's answer lists
only its own files, the version each client was told holds its files in its JSON commit, each
``txn`` in exactly one commit, and several appends did share a version.
"""

from __future__ import annotations

import json
import os
import threading
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from helpers import log_actions, second_session, stress_size

import filecommit

pytestmark = pytest.mark.slow

CLIENTS = 16
APPENDS = stress_size("FILECOMMIT_GROUP_COMMIT_APPENDS", 15, 50)
CDC_CLIENTS = {12, 13, 14, 15}     # write change data to the CDF table
TXN_CLIENTS = {0, 1, 2, 3}         # idempotent; every 10th write is sent twice
SCHEMA = "id long, part string"
CDC_SCHEMA = "id long, part string, _change_type string"


def _client_ids(client: int, n: int) -> list[int]:
    base = (client * 1000 + n) * 10
    return [base, base + 1]


def _write(session, client: int, n: int, plain: str, cdf: str):
    ids = _client_ids(client, n)
    part = f"p{client % 3}"
    if client in CDC_CLIENTS:
        rows = [(i, part, None) for i in ids] + [(ids[0], part, "insert")]
        return filecommit.write(session.createDataFrame(rows, CDC_SCHEMA), cdf, change_data=True)
    txn = (f"loader-{client}", n) if client in TXN_CLIENTS else None
    return filecommit.write(session.createDataFrame([(i, part) for i in ids], SCHEMA), plain, txn=txn)


def _file_ids(table: str, rel_path: str) -> list[int]:
    return pq.read_table(os.path.join(table, unquote(rel_path))).column("id").to_pylist()


@pytest.mark.stress
def test_sixteen_clients_many_small_appends_each(spark, delta_spark, tmp_path):
    plain = str(tmp_path / "plain")
    cdf = str(tmp_path / "cdf")
    filecommit.write(spark.createDataFrame([(-1, "p0")], SCHEMA), plain, partition_by=["part"])
    filecommit.write(spark.createDataFrame([(-1, "p0")], SCHEMA), cdf,
                     table_properties={"delta.enableChangeDataFeed": "true"})
    sessions = [second_session(spark) for _ in range(CLIENTS)]
    results: dict = {c: [] for c in range(CLIENTS)}
    repeats: dict = {c: [] for c in range(CLIENTS)}
    errors: list = []

    def client(c: int) -> None:
        try:
            for n in range(APPENDS):
                results[c].append((n, _write(sessions[c], c, n, plain, cdf)))
                if c in TXN_CLIENTS and n % 10 == 0:
                    repeats[c].append((n, _write(sessions[c], c, n, plain, cdf)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((c, e))

    threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
    finally:
        for s in sessions:
            s.stop()
    assert not errors, errors[:3]

    logs = {plain: log_actions(plain), cdf: log_actions(cdf)}
    expected = {plain: [-1], cdf: [-1]}
    expected_changes: list = []
    seen_files: set = set()
    for c in range(CLIENTS):
        table = cdf if c in CDC_CLIENTS else plain
        assert len(results[c]) == APPENDS
        for n, r in results[c]:
            assert r.committed, f"client {c} write {n}: {r}"
            ids = _client_ids(c, n)
            expected[table] += ids
            # Only its own files: every listed file holds exactly rows of this write.
            listed = [a.path for a in r.add_files]
            got = sorted(i for p in listed for i in _file_ids(table, p))
            assert got == ids, f"client {c} write {n}: its files hold {got}, wrote {ids}"
            assert not seen_files & {(table, p) for p in listed}, "a file reported to two writes"
            seen_files |= {(table, p) for p in listed}
            # The reported version's JSON commit holds its files (and its change files).
            commit = logs[table][r.version]
            in_commit = {a["add"]["path"] for a in commit if "add" in a}
            assert set(listed) <= in_commit, f"client {c} write {n}: version {r.version} lacks its files"
            if c in CDC_CLIENTS:
                assert len(r.cdc_files) == 1
                cdc_in_commit = {a["cdc"]["path"] for a in commit if "cdc" in a}
                assert {f.path for f in r.cdc_files} <= cdc_in_commit
                expected_changes.append((ids[0], r.version))
            if c in TXN_CLIENTS:
                txns = {(a["txn"]["appId"], a["txn"]["version"]) for a in commit if "txn" in a}
                assert (f"loader-{c}", n) in txns
        for n, again in repeats[c]:
            assert not again.committed and not again.add_files, f"client {c}: txn {n} committed twice"

    # Each txn in exactly one commit, and no app id twice in one commit.
    for c in TXN_CLIENTS:
        for n in range(APPENDS):
            holding = [v for v, commit in logs[plain].items()
                       if any("txn" in a and a["txn"]["appId"] == f"loader-{c}" and a["txn"]["version"] == n
                              for a in commit)]
            assert len(holding) == 1, f"txn (loader-{c}, {n}) in versions {holding}"
    # Several appends shared a version (group commit), and such a commit says so.
    plain_commits = len(logs[plain]) - 1
    plain_writes = (CLIENTS - len(CDC_CLIENTS)) * APPENDS
    grouped = [json.loads(a["commitInfo"]["operationParameters"]["groupedWrites"])
               for commit in logs[plain].values() for a in commit
               if "commitInfo" in a and "groupedWrites" in a["commitInfo"].get("operationParameters", {})]
    largest = max(map(len, grouped), default=1)
    print(f"plain table: {plain_writes} appends in {plain_commits} versions; largest group {largest}")
    assert plain_commits < plain_writes and grouped, "no append was grouped"
    for commit in logs[plain].values():
        apps = [a["txn"]["appId"] for a in commit if "txn" in a]
        assert len(apps) == len(set(apps)), f"an app id twice in one commit: {apps}"

    # Every row exactly once, as both independent readers see it.
    for table in (plain, cdf):
        dt = DeltaTable(table)
        assert dt.version() == len(logs[table]) - 1
        assert sorted(dt.to_pandas()["id"].tolist()) == sorted(expected[table])
    answers = delta_spark.read([{"path": plain, "kind": "table"}, {"path": cdf, "kind": "table"}])
    for table, answer in zip((plain, cdf), answers, strict=True):
        assert answer["ok"], answer
        assert sorted(r["id"] for r in answer["rows"]) == sorted(expected[table])
    # The change feed: each insert change row once, at the version its writer was told.
    feed = pa.table(DeltaTable(cdf).load_cdf(starting_version=1)).to_pandas()
    got_changes = sorted(zip(feed["id"].tolist(), feed["_commit_version"].tolist(), strict=True))
    assert got_changes == sorted(expected_changes)
