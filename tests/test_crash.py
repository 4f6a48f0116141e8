"""Crash test: SIGKILL the Spark Connect server again and again while several clients commit.

Acceptance of the reliability promise "a commit is whole or absent, an acknowledged write is in
the table exactly once, a ``txn`` write commits exactly once however often it is retried", under
real process crashes:

* A standalone Spark Connect server with the plugin runs as its own process (``crash_server.py``,
  started with ``spark-submit``, killed with SIGKILL to its process group).
* ``FILECOMMIT_CRASH_WRITERS`` (default 3) writer processes (``crash_writer.py``), each with its
  own Spark Connect session, commit a stream to one table partitioned by ``writer, bucket``: blind
  appends with and without ``txn``, ``replaceWhere`` overwrites, deletes and updates of their own
  partitions (with ``txn``), and race ``txn=("shared-<n>", 1)`` / ``2`` on fresh tables announced
  at the start and after every 4th kill (the first write on a new path). Every row carries
  ``writer, seq, attempt, row``. Each writer journals durably (fsync) what it is about to send
  and what came back; after a connection error it waits for the server and retries the same op.
* The controller kills the server ``FILECOMMIT_CRASH_KILLS`` times (2 in ``make test``, 20 in ``make
  test-stress``: ``helpers.stress_size``), each time once
  writes flow again after the restart, the even kills 1-6 s later, the odd ones the moment a new
  commit file of the main table appears (its writer most likely has no answer yet: a lost
  response). The points are drawn from ``FILECOMMIT_CRASH_SEED`` (random unless set; printed).
* While the server is dead the tables are frozen: every table is checked then (before the restart,
  so before the writers resume), and once more at the end after the writers stopped, with
  independent readers only (``crash_check.py``: raw ``_delta_log`` JSON, pyarrow, delta-rs; at the
  end also Spark + Delta through the ``delta_spark`` fixture), against the journals
  (``crash_journals.py``).

``FILECOMMIT_CRASH_STOP_ON_FAILURE=1`` stops at the first failed check (the tables stay as they
were at that crash, under the printed work dir). The summary line printed at the end (run pytest
with ``-s``) gives kills, wall time, commits, acknowledged writes, retries, ambiguous outcomes and
errors by class.
"""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from crash_check import check_table, commit_versions
from crash_journals import KEY_COLUMNS, check_main_rows, check_shared_rows, check_txn_versions, read_journals
from crash_server import ConnectServer
from crash_writer import shared_app_id
from helpers import stress_size

import filecommit

pytestmark = [pytest.mark.slow, pytest.mark.stress]

HERE = os.path.dirname(os.path.abspath(__file__))
KILLS = stress_size("FILECOMMIT_CRASH_KILLS", 2, 20)
WRITERS = int(os.environ.get("FILECOMMIT_CRASH_WRITERS", "3"))
FRESH_EVERY = 4          # a fresh shared-txn table at the start and after every 4th kill (2, 6, 10, ...)
FLOW_TIMEOUT = 120       # s: writes must be acknowledged again this soon after a restart
STOP_TIMEOUT = 180       # s: writers finish their current op after the stop file appears


class Run:
    """The processes and files of one crash run."""

    def __init__(self, root: str, seed: int, server=None):
        self.root = root
        self.seed = seed
        self.main = os.path.join(root, "tables", "main")
        self.journals = os.path.join(root, "journals")
        self.stop_file = os.path.join(root, "stop")
        self.fresh_file = os.path.join(root, "fresh.json")
        os.makedirs(self.journals)
        os.makedirs(os.path.join(root, "tables"))
        # A ConnectServer, or one with its interface (tests/crash_container.py)
        self.server = server or ConnectServer(filecommit.server.find_plugin_jar(), filecommit.server.PLUGIN_CLASS,
                                              os.path.join(root, "server.log"))
        self.writers: dict = {}
        self.rounds: dict = {}        # round -> fresh table path
        self.failures: list = []      # (checkpoint label, message)
        self.checks = 0
        self.check_seconds = 0.0
        self.start_seconds: list = []
        self.acks_at_start = 0        # acknowledged writes when the server was last (re)started
        self.kills = 0
        self.kill_modes: collections.Counter = collections.Counter()

    # -- writers ---------------------------------------------------------------------------------

    def start_writers(self, n: int) -> None:
        env = {k: v for k, v in os.environ.items()
               if k not in ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_AUTHENTICATE_TOKEN")}
        for i in range(n):
            w = f"w{i}"
            cfg = {"writer": w, "url": self.server.url, "journal": os.path.join(self.journals, f"journal-{w}.jsonl"),
                   "main": self.main, "seed": self.seed, "stop": self.stop_file, "fresh": self.fresh_file}
            err = open(os.path.join(self.root, f"writer-{w}.log"), "w")
            cmd = [sys.executable, os.path.join(HERE, "crash_writer.py"), json.dumps(cfg)]
            self.writers[w] = (subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.STDOUT,
                                                env=env, cwd=self.root, start_new_session=True), err)

    def dead_writers(self) -> list:
        return [w for w, (p, _) in self.writers.items() if p.poll() is not None]

    def writer_logs(self, chars: int = 3000) -> str:
        out = []
        for w, (_p, err) in self.writers.items():
            try:
                with open(err.name, errors="replace") as fh:
                    text = fh.read()[-chars:]
            except OSError:
                text = ""
            out.append(f"--- writer {w} log tail ---\n{text}")
        return "\n".join(out)

    def stop_writers(self) -> None:
        open(self.stop_file, "w").close()
        deadline = time.monotonic() + STOP_TIMEOUT
        for w, (p, _err) in self.writers.items():
            try:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.failures.append(("stop", f"writer {w} did not finish its op within {STOP_TIMEOUT} s of the stop"))
        for w, (p, _err) in self.writers.items():
            if p.returncode not in (0, None):
                self.failures.append(("stop", f"writer {w} exited with {p.returncode}"))

    def kill_writers(self) -> None:
        if not os.path.exists(self.stop_file):
            open(self.stop_file, "w").close()
        for p, err in self.writers.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=60)
            err.close()

    # -- progress --------------------------------------------------------------------------------

    def acks(self) -> int:
        n = 0
        for name in os.listdir(self.journals):
            with open(os.path.join(self.journals, name), "rb") as fh:
                n += fh.read().count(b'"ev":"ack"')
        return n

    def wait_for_flow(self, since: int, label: str) -> bool:
        """Until a write is acknowledged after ``since`` acks (the writers are back at work)."""
        deadline = time.monotonic() + FLOW_TIMEOUT
        while self.acks() <= since:
            dead = self.dead_writers()
            if dead:
                self.failures.append((label, f"writers {dead} exited early\n{self.writer_logs()}"))
                return False
            if time.monotonic() > deadline:
                self.failures.append((label, f"no write acknowledged within {FLOW_TIMEOUT} s of the server start"))
                return False
            time.sleep(0.1)
        return True

    def wait_for_commit(self, timeout: float) -> bool:
        """Until the main table's next commit file appears (polled every ms)."""
        versions = commit_versions(self.main)
        target = os.path.join(self.main, "_delta_log", f"{(versions[-1] + 1) if versions else 0:020d}.json")
        deadline = time.monotonic() + timeout
        while not os.path.exists(target):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)
        return True

    def announce_round(self, rnd: int, delay: float) -> None:
        path = os.path.join(self.root, "tables", f"fresh-{rnd}")
        self.rounds[rnd] = path
        tmp = self.fresh_file + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({"round": rnd, "path": path, "start_at": time.time() + delay}, fh)
        os.replace(tmp, self.fresh_file)

    # -- checks ----------------------------------------------------------------------------------

    def check(self, label: str, final: bool, stats: dict | None = None) -> dict:
        """All tables, with independent readers, against the journals; failures are recorded."""
        t0 = time.monotonic()
        journals, errors = read_journals(self.journals, final)
        out = {"journals": journals, "tables": {}}
        e, info, rows, dt = check_table(self.main, "main")
        errors += e
        out["tables"]["main"] = (info, rows)
        if rows is not None or not info["versions"]:
            errors += [f"[main] {x}" for x in check_main_rows(journals, rows or [], stats)]
        if dt is not None:
            errors += [f"[main] {x}" for x in check_txn_versions(journals, dt)]
        for rnd, path in sorted(self.rounds.items()):
            label_t = f"fresh-{rnd}"
            e, info, rows, dt = check_table(path, label_t)
            errors += e
            out["tables"][label_t] = (info, rows)
            if rows is not None or not info["versions"]:
                tv = dt.transaction_version(shared_app_id(rnd)) if dt is not None else None
                errors += [f"[{label_t}] {x}" for x in check_shared_rows(journals, rnd, rows or [], tv, stats)]
        for msg in errors:
            self.failures.append((label, msg))
        self.checks += 1
        self.check_seconds += time.monotonic() - t0
        return out


def _summary(run: Run, final: dict, stats: dict, wall: float) -> str:
    journals = final["journals"]
    ops = [r for j in journals.values() for r in j.ops.values()]
    attempts = [a for r in ops for a in r.attempts.values()]
    acked = [r for r in ops if r.ack is not None]
    errors = collections.Counter(a.cls for a in attempts if a.status in ("amb", "fail") and a.cls)
    commits = {t: len(info["versions"]) for t, (info, _rows) in final["tables"].items()}
    kinds = collections.Counter(r.op["kind"] + ("+txn" if r.txn else "") for r in ops)
    restart = sum(run.start_seconds) / max(1, len(run.start_seconds))
    return (f"crash test: seed={run.seed} kills={run.kills} ({dict(run.kill_modes)}) writers={len(run.writers)} "
            f"wall={wall:.0f}s (server start {restart:.1f}s avg, {run.checks} checks {run.check_seconds:.0f}s) | "
            f"commits landed={sum(commits.values())} (main {commits.get('main', 0)}, {len(commits) - 1} fresh tables "
            f"{sum(v for k, v in commits.items() if k != 'main')}) | ops={len(ops)} {dict(sorted(kinds.items()))} | "
            f"acknowledged={len(acked)} (committed {sum(1 for r in acked if r.ack.committed)}, "
            f"already applied / no-op {sum(1 for r in acked if not r.ack.committed)}) gave up="
            f"{sum(1 for r in ops if r.gave_up)} | retries={len(attempts) - len(ops)} "
            f"ambiguous attempts={sum(1 for a in attempts if a.status == 'amb' and not a.in_flight)} "
            f"landed after error={stats['landed_after_error']} "
            f"duplicate non-txn retries={stats['duplicate_retries']} | "
            f"errors by class={dict(errors.most_common())}")


def _crash_cycle(run: Run, k: int, rng: random.Random, t_start: float, kills: int = KILLS) -> bool:
    """Kill ``k``: wait for writes to flow, SIGKILL the server at a random point, check the
    frozen tables, restart. False when the run cannot go on."""
    t_wait = time.monotonic()
    if not run.wait_for_flow(run.acks_at_start, f"restart {k - 1}"):
        return False
    flowing = time.monotonic()
    if k % 2 == 1:  # odd kills on a commit, even ones at random: both kinds in every run
        # When a commit file appears (or up to 100 ms later, into the checkpoint every 10th commit
        # writes): its writer most likely has no answer yet.
        time.sleep(rng.uniform(0.5, 3.0))
        after = rng.choice([0.0, 0.0, 0.01, 0.03, 0.1])
        mode, how = "on a commit", f"{after * 1000:.0f} ms after a commit"
        if run.wait_for_commit(timeout=10):
            time.sleep(after)
        else:
            mode, how = "at random", "at random (no commit in 10 s)"
    else:
        time.sleep(rng.uniform(1.0, 6.0))
        mode = how = "at random"
    run.server.kill()
    run.kills += 1
    run.kill_modes[mode] += 1
    killed = time.monotonic()
    run.check(f"after kill {k}", final=False)
    if run.failures and os.environ.get("FILECOMMIT_CRASH_STOP_ON_FAILURE"):
        return False
    run.acks_at_start = run.acks()
    checked = time.monotonic()
    run.start_seconds.append(run.server.start())
    if k % FRESH_EVERY == 2:
        run.announce_round(len(run.rounds), delay=2.5)
    print(f"crash test: kill {k}/{kills} {how}: writes flowed {flowing - t_wait:.1f}s after the restart, "
          f"killed {killed - flowing:.1f}s later; check {checked - killed:.1f}s, restart "
          f"{run.start_seconds[-1]:.1f}s; {len({m for _l, m in run.failures})} distinct failures so far; "
          f"{time.monotonic() - t_start:.0f}s",
          flush=True)
    return True


def _compare_with_spark_delta(run: Run, delta_spark, final: dict) -> None:
    """Spark + Delta (delta-spark in ``.venv-delta``) reads the rows and version delta-rs read."""
    tables = [(label, run.main if label == "main" else run.rounds[int(label.split("-")[1])])
              for label, (info, _rows) in final["tables"].items() if info["versions"]]
    try:
        reads = delta_spark.read([{"path": p, "kind": "table"} for _label, p in tables])
    except Exception as e:  # noqa: BLE001 - recorded with the other failures
        run.failures.append(("end", f"Spark + Delta worker failed: {e}"))
        return
    for (label, _p), got in zip(tables, reads, strict=True):
        info, rows = final["tables"][label]
        if not got.get("ok"):
            run.failures.append(("end", f"[{label}] Spark + Delta cannot read the table: {got.get('error')}"))
            continue
        spark_rows = sorted(tuple(r[c] for c in KEY_COLUMNS) for r in got["rows"])
        if rows is not None and spark_rows != sorted(rows):
            run.failures.append(("end", f"[{label}] Spark + Delta reads {len(spark_rows)} rows, delta-rs {len(rows)}; "
                                        f"rows read by one only: {sorted(set(spark_rows) ^ set(rows))[:5]}"))
        if got.get("version") != info["versions"][-1]:
            run.failures.append(("end", f"[{label}] Spark + Delta reads version {got.get('version')}, the log ends "
                                        f"at {info['versions'][-1]}"))


def test_sigkill_server_during_commit_stream(tmp_path, delta_spark):
    seed = int(os.environ.get("FILECOMMIT_CRASH_SEED") or random.SystemRandom().randrange(2**31))
    print(f"\ncrash test: seed {seed} (FILECOMMIT_CRASH_SEED={seed} repeats the kill points and op mix), "
          f"kills {KILLS}, writers {WRITERS}, work dir {tmp_path}", flush=True)
    run_crash_test(Run(str(tmp_path), seed), delta_spark, KILLS, WRITERS)


def run_crash_test(run: Run, delta_spark, kills: int, writers: int) -> None:
    """``kills`` crash cycles of ``run.server`` while ``writers`` clients commit, the checks after
    each kill and at the end (both readers); fails the test with every distinct failure. Also used
    by tests/test_container_crash.py with the server in a container."""
    seed, tmp_path = run.seed, run.root
    rng = random.Random(seed)
    t_start = time.monotonic()
    stats = {"landed_after_error": 0, "duplicate_retries": 0}
    final = None
    try:
        run.start_seconds.append(run.server.start())
        run.announce_round(0, delay=4.0)   # the writers race the fresh table's first write at once
        run.start_writers(writers)
        completed = all(_crash_cycle(run, k, rng, t_start, kills) for k in range(1, kills + 1))
        if completed:
            # The writers finish the retries of the last crash and go on a little, then stop.
            run.wait_for_flow(run.acks_at_start, "end")
            time.sleep(2.0)
        elif not run.server.alive():
            run.start_seconds.append(run.server.start())
        run.stop_writers()
        final = run.check("end", final=True, stats=stats)
        _compare_with_spark_delta(run, delta_spark, final)
    finally:
        run.kill_writers()
        run.server.stop()
    wall = time.monotonic() - t_start
    summary = _summary(run, final, stats, wall) if final is not None else "crash test: no final check"
    print(summary, flush=True)
    if run.failures:
        seen, lines = set(), []
        for label, msg in run.failures:
            if msg not in seen:
                seen.add(msg)
                lines.append(f"{label}: {msg}")
        pytest.fail(f"{len(lines)} distinct failures (seed {seed}, work dir {tmp_path}):\n" + "\n".join(lines[:60])
                    + f"\n{summary}\n{run.server.log_tail(4000)}\n{run.writer_logs(1500)}", pytrace=False)
