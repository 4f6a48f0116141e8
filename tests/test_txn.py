"""Idempotent writes end to end: ``txn=(app_id, version)`` (Delta's txnAppId / txnVersion,
protocol "Transaction Identifiers").

A write whose version the table already has for its app id (latest txn version >= version) writes
nothing and returns ``committed=False`` with the table's version; any other write commits with a
``txn`` action ``{appId, version, lastUpdated}``. Checked with delta-rs (rows and its
``transaction_version``) and the raw log JSON.
"""

from __future__ import annotations

import threading
import time

import pytest
from deltalake import DeltaTable
from helpers import delta_rows, delta_table, log_actions, on_s3, second_session

import filecommit

pytestmark = pytest.mark.slow


def _id_tag_df(session, ids, tag="x"):
    return session.createDataFrame([(int(i), tag) for i in ids], "id long, tag string")


def _delta_rows_ids(path):
    return sorted(int(i) for i in delta_rows(path, ["id"])["id"])


def _txn_actions(path):
    """version -> the txn actions of that commit."""
    return {v: [a["txn"] for a in actions if "txn" in a] for v, actions in log_actions(path).items()}


@pytest.mark.container
@on_s3
def test_same_txn_twice_commits_once(spark, table_path):
    first = filecommit.write(_id_tag_df(spark, range(5)), table_path, txn=("loader", 0))
    again = filecommit.write(_id_tag_df(spark, range(5)), table_path, txn=("loader", 0))

    assert first.committed and first.version == 0
    assert again.committed is False
    assert again.version == first.version
    assert again.add_files == [] and again.remove_files == [] and again.metrics.files == 0
    assert sorted(log_actions(table_path)) == [0], "the retry committed nothing"
    assert _delta_rows_ids(table_path) == [0, 1, 2, 3, 4], "rows not duplicated"
    assert delta_table(table_path).transaction_version("loader") == 0


def test_higher_version_commits_and_lower_ones_are_skipped(spark, table_path):
    r0 = filecommit.write(_id_tag_df(spark, [1]), table_path, txn=("loader", 0))
    r5 = filecommit.write(_id_tag_df(spark, [2]), table_path, txn=("loader", 5))
    assert (r0.committed, r5.committed) == (True, True)
    assert (r0.version, r5.version) == (0, 1)
    # Versions need not be consecutive, but a lower or equal one is skipped.
    for old in (0, 3, 5):
        r = filecommit.write(_id_tag_df(spark, [99]), table_path, txn=("loader", old))
        assert r.committed is False and r.version == 1, old
    r6 = filecommit.write(_id_tag_df(spark, [3]), table_path, txn=("loader", 6))
    assert r6.committed and r6.version == 2
    assert _delta_rows_ids(table_path) == [1, 2, 3]
    assert delta_table(table_path).transaction_version("loader") == 6


@pytest.mark.container
@on_s3
def test_commit_carries_the_txn_action(spark, table_path):
    before = int(time.time() * 1000)
    filecommit.write(_id_tag_df(spark, [1]), table_path, txn=("app-a", 7))
    filecommit.write(_id_tag_df(spark, [2]), table_path)                      # no txn
    filecommit.write(_id_tag_df(spark, [3]), table_path, txn=("app-a", 8))
    after = int(time.time() * 1000)

    txns = _txn_actions(table_path)
    assert [len(txns[v]) for v in (0, 1, 2)] == [1, 0, 1]
    for v, expected in ((0, 7), (2, 8)):
        (txn,) = txns[v]
        assert set(txn) == {"appId", "version", "lastUpdated"}
        assert txn["appId"] == "app-a" and txn["version"] == expected
        assert isinstance(txn["lastUpdated"], int) and before - 60_000 <= txn["lastUpdated"] <= after + 60_000


def test_app_ids_are_independent(spark, table_path):
    assert filecommit.write(_id_tag_df(spark, [1]), table_path, txn=("a", 10)).committed
    assert filecommit.write(_id_tag_df(spark, [2]), table_path, txn=("b", 0)).committed
    assert not filecommit.write(_id_tag_df(spark, [3]), table_path, txn=("a", 10)).committed
    assert not filecommit.write(_id_tag_df(spark, [4]), table_path, txn=("b", 0)).committed
    assert filecommit.write(_id_tag_df(spark, [5]), table_path, txn=("b", 1)).committed
    dt = DeltaTable(table_path)
    assert (dt.transaction_version("a"), dt.transaction_version("b")) == (10, 1)
    assert _delta_rows_ids(table_path) == [1, 2, 5]


def test_skipped_overwrite_leaves_the_table_as_it_was(spark, table_path):
    filecommit.write(_id_tag_df(spark, [1, 2]), table_path, txn=("job", 1))
    r = filecommit.write(_id_tag_df(spark, [9]), table_path, mode="overwrite", txn=("job", 1))
    assert r.committed is False and r.version == 0 and r.remove_files == []
    assert _delta_rows_ids(table_path) == [1, 2]
    r = filecommit.write(_id_tag_df(spark, [9]), table_path, mode="overwrite", txn=("job", 2))
    assert r.committed and r.version == 1
    assert _delta_rows_ids(table_path) == [9]


def test_txn_is_found_across_a_checkpoint(spark, table_path):
    # 12 commits: a checkpoint at version 10 (delta.checkpointInterval default 10), so the txn of
    # early versions is read from the checkpoint, not from the JSON commits.
    for v in range(12):
        assert filecommit.write(_id_tag_df(spark, [v]), table_path, txn=("stream", v)).version == v
    r = filecommit.write(_id_tag_df(spark, [100]), table_path, txn=("stream", 4))
    assert r.committed is False and r.version == 11
    r = filecommit.write(_id_tag_df(spark, [100]), table_path, txn=("stream", 11))
    assert r.committed is False and r.version == 11
    assert filecommit.write(_id_tag_df(spark, [12]), table_path, txn=("stream", 12)).version == 12
    assert _delta_rows_ids(table_path) == list(range(13))


def test_set_table_properties_with_txn(spark, table_path):
    filecommit.write(_id_tag_df(spark, [1]), table_path)
    r = filecommit.set_table_properties(spark, table_path, {"delta.appendOnly": "true"}, txn=("admin", 0))
    assert r.committed and r.version == 1
    assert _txn_actions(table_path)[1] == [
        {"appId": "admin", "version": 0, "lastUpdated": _txn_actions(table_path)[1][0]["lastUpdated"]}]
    # The same txn again: nothing committed, even though the property would change.
    r = filecommit.set_table_properties(spark, table_path, {"delta.appendOnly": "false"}, txn=("admin", 0))
    assert r.committed is False and r.version == 1
    assert DeltaTable(table_path).metadata().configuration["delta.appendOnly"] == "true"
    assert delta_table(table_path).transaction_version("admin") == 0


def _is_concurrent_txn(e: Exception) -> bool:
    condition = getattr(e, "getCondition", lambda: None)()
    return condition == "DELTA_CONCURRENT_TRANSACTION"


def test_two_sessions_with_the_same_app_id_commit_each_version_once(spark, table_path):
    """Two producers retrying the same stream of writes: versions 0..19 each committed once.

    Each session writes versions 0..19 in order with the same rows per version. A write that
    loses a race to the other session's commit of the same app id is either skipped
    (``committed=False``) or refused with ``DELTA_CONCURRENT_TRANSACTION``, and then retried
    (the retry is skipped).
    """
    filecommit.write(_id_tag_df(spark, []), table_path)  # the table exists before the race
    other = second_session(spark)
    sessions = [spark, other]
    n = 20
    results = {0: [], 1: []}
    errors = []
    barrier = threading.Barrier(2)

    def worker(k):
        session = sessions[k]
        try:
            barrier.wait()
            for v in range(n):
                for attempt in range(10):
                    try:
                        r = filecommit.write(_id_tag_df(session, range(10 * v, 10 * v + 3), f"v{v}"), table_path,
                                             txn=("shared-app", v))
                        break
                    except Exception as e:
                        if not _is_concurrent_txn(e) or attempt == 9:
                            raise
                results[k].append((v, r.committed, r.version))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((k, e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    other.stop()
    assert not errors, errors
    assert all(len(results[k]) == n for k in results)

    committed = {}
    for k in results:
        for v, was_committed, version in results[k]:
            if was_committed:
                assert v not in committed, f"txn version {v} committed twice"
                committed[v] = version
    assert sorted(committed) == list(range(n)), "every txn version committed exactly once"

    # The log: one txn action per data commit, versions increasing with the table version.
    txns = _txn_actions(table_path)
    by_table_version = {tv: t[0]["version"] for tv, t in txns.items() if t}
    assert by_table_version == {tv: v for v, tv in committed.items()}
    assert [by_table_version[tv] for tv in sorted(by_table_version)] == list(range(n))
    assert delta_table(table_path).transaction_version("shared-app") == n - 1

    expected = sorted(i for v in range(n) for i in range(10 * v, 10 * v + 3))
    assert _delta_rows_ids(table_path) == expected, "rows exact: no version lost or duplicated"


def test_four_clients_racing_the_same_txn_on_a_new_path_commit_once(spark, tmp_path):
    """Four sessions write ``txn=("loader", 1)`` to the same new path at once, 20 times over.

    Each round exactly one write commits (the one that created the table); the others are
    duplicates (``committed=False``) or, having lost the race to a concurrent creation of another
    table, refused with a conflict class, never committed again. Checked in the raw log (one
    ``txn`` action in all) and with delta-rs (the rows once).
    """
    sessions = [spark] + [second_session(spark) for _ in range(3)]
    try:
        for round_ in range(20):
            path = str(tmp_path / f"round_{round_}")
            barrier = threading.Barrier(len(sessions))
            outcomes = [None] * len(sessions)

            def worker(k):
                session = sessions[k]
                df = _id_tag_df(session, range(3), f"w{k}")
                barrier.wait()
                try:
                    r = filecommit.write(df, path, txn=("loader", 1))
                    outcomes[k] = ("committed" if r.committed else "duplicate", r.version)
                except Exception as e:  # noqa: BLE001 - classified below
                    outcomes[k] = ("error", getattr(e, "getCondition", lambda: type(e).__name__)())

            threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(sessions))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
            committed = [o for o in outcomes if o[0] == "committed"]
            assert len(committed) == 1, f"round {round_}: {outcomes}"
            for o in outcomes:
                assert o[0] in ("committed", "duplicate") or o[1] in (
                    "DELTA_CONCURRENT_TRANSACTION", "DELTA_PROTOCOL_CHANGED"), f"round {round_}: {outcomes}"
            txns = [t for actions in _txn_actions(path).values() for t in actions]
            assert [(t["appId"], t["version"]) for t in txns] == [("loader", 1)], f"round {round_}: {txns}"
            assert _delta_rows_ids(path) == [0, 1, 2], f"round {round_}: rows once"
    finally:
        for s in sessions[1:]:
            s.stop()
