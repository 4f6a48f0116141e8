"""The writers' journals of ``tests/test_crash.py`` and the rows they allow.

* :func:`read_journals` turns the writers' journals (``crash_writer.py``) into per-writer op
  records: for every attempt of every op, whether it was acknowledged, failed with a server error
  (nothing committed), or is ambiguous (a connection error, or still in flight at a crash).
* :func:`check_main_rows` / :func:`check_shared_rows` compare a table's rows (read by delta-rs,
  ``tests/crash_check.py``) with what the journals allow: every acknowledged op applied exactly
  once, no failed op applied, an ambiguous op applied at most once (see there);
  :func:`check_txn_versions` checks the ``txn`` versions of the log against the journals.
"""

from __future__ import annotations

import collections
import glob
import json
import os
from dataclasses import dataclass, field

KEY_COLUMNS = ["writer", "seq", "attempt", "row", "bucket", "val"]


# ---------------------------------------------------------------------------------------------
# Journals
# ---------------------------------------------------------------------------------------------

@dataclass
class Attempt:
    n: int
    status: str = "amb"          # "ack" | "fail" (server error: nothing committed) | "amb"
    committed: bool | None = None
    version: int | None = None
    cls: str | None = None       # error class of a failed / ambiguous attempt
    in_flight: bool = True       # no outcome journaled (yet)


@dataclass
class OpRecord:
    writer: str
    seq: int
    op: dict
    attempts: dict = field(default_factory=dict)   # n -> Attempt
    gave_up: bool = False

    @property
    def ack(self) -> Attempt | None:
        acks = [a for a in self.attempts.values() if a.status == "ack"]
        return acks[-1] if acks else None

    @property
    def ambiguous(self) -> list[int]:
        return [a.n for a in self.attempts.values() if a.status == "amb"]

    @property
    def possible(self) -> list[int]:
        """Attempts that may have committed: ambiguous ones and an acknowledged commit."""
        ack = self.ack
        out = self.ambiguous
        if ack is not None and ack.committed:
            out = [*out, ack.n]
        return sorted(out)

    @property
    def txn(self):
        return tuple(self.op["txn"]) if self.op.get("txn") else None


@dataclass
class WriterJournal:
    writer: str
    ops: dict = field(default_factory=dict)        # seq -> OpRecord (in seq order)
    done: bool = False
    crashed: str | None = None
    events: int = 0


def read_journals(folder: str, final: bool) -> tuple[dict, list]:
    """``writer -> WriterJournal`` from ``journal-<writer>.jsonl`` files.

    :param final: the writers have exited: every line must parse (mid-run, a last line being
        written may be cut and is ignored)
    :returns: (journals, errors)
    """
    journals, errors = {}, []
    for f in sorted(glob.glob(os.path.join(folder, "journal-*.jsonl"))):
        writer = os.path.basename(f)[len("journal-"):-len(".jsonl")]
        j = journals[writer] = WriterJournal(writer)
        with open(f, "rb") as fh:
            raw = fh.read()
        lines = raw.split(b"\n")
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                if final or i != len(lines) - 1:
                    errors.append(f"journal {f}: line {i + 1} does not parse: {line[:200]!r}")
                continue
            j.events += 1
            kind = ev["ev"]
            if kind == "intent":
                rec = j.ops.get(ev["seq"])
                if rec is None:
                    rec = j.ops[ev["seq"]] = OpRecord(writer, ev["seq"], ev["op"])
                rec.attempts[ev["attempt"]] = Attempt(ev["attempt"])
            elif kind == "ack":
                a = j.ops[ev["seq"]].attempts[ev["attempt"]]
                a.status, a.committed, a.version, a.in_flight = "ack", bool(ev["committed"]), ev.get("version"), False
            elif kind == "error":
                a = j.ops[ev["seq"]].attempts[ev["attempt"]]
                a.status = "amb" if ev["ambiguous"] else "fail"
                a.cls, a.in_flight = ev["cls"], False
            elif kind == "gave_up":
                if ev["seq"] in j.ops:
                    j.ops[ev["seq"]].gave_up = True
            elif kind == "done":
                j.done = True
            elif kind == "crash":
                j.crashed = ev.get("error")
    return journals, errors


# ---------------------------------------------------------------------------------------------
# Expected rows
# ---------------------------------------------------------------------------------------------

@dataclass
class Rec:
    bucket: int
    val: int
    required: bool


class World:
    """One possible state of one writer's partitions: rows that may be there (``recs``, keyed by
    (seq, attempt, row)), of which ``required`` ones must be; ``must_land``: seqs of txn ops of
    which exactly one attempt committed (acknowledged as already applied)."""

    def __init__(self):
        self.recs: dict = {}
        self.must_land: set = set()
        self.notes: list = []

    def copy(self) -> World:
        w = World()
        w.recs = {k: Rec(r.bucket, r.val, r.required) for k, r in self.recs.items()}
        w.must_land = set(self.must_land)
        w.notes = list(self.notes)
        return w


def _matches(seq: int, row: int, op: dict) -> bool:
    return (seq + row) % op["mod"] == op["rem"]


def _effect(world: World, rec: OpRecord) -> None:
    """Apply a committed op to a world (overwrite / delete / update effect, then its rows)."""
    op = rec.op
    kind = op["kind"]
    if kind in ("overwrite", "delete", "update"):
        for key in list(world.recs):
            r = world.recs[key]
            if r.bucket != op["bucket"]:
                continue
            if kind == "overwrite" or (kind == "delete" and _matches(key[0], key[2], op)):
                del world.recs[key]
            elif kind == "update" and _matches(key[0], key[2], op):
                r.val = int(op["set_val"])
    if kind in ("append", "overwrite"):
        ack = rec.ack
        for a in rec.possible:
            required = ack is not None and ack.n == a and bool(ack.committed)
            for row, bucket, val in op["rows"]:
                world.recs[(rec.seq, a, row)] = Rec(int(bucket), int(val), required)
        if rec.txn and ack is not None and not ack.committed:
            world.must_land.add(rec.seq)


MAX_WORLDS = 64


def worlds_for(journal: WriterJournal) -> tuple[list, list]:
    """Every state the writer's main-table partitions may be in. Appends never branch (their
    uncommitted-or-not attempts are optional rows); an overwrite / delete / update whose outcome is
    unknown (ambiguous attempts, no acknowledgement) branches into landed and not landed."""
    errors = []
    worlds = [World()]
    for seq in sorted(journal.ops):
        rec = journal.ops[seq]
        if rec.op.get("table") != "main":
            continue
        ack = rec.ack
        if rec.txn and ack is not None and not ack.committed and rec.op["kind"] in ("append", "overwrite") \
                and not rec.ambiguous:
            errors.append(f"{rec.writer}:{seq} {rec.op['kind']} txn {rec.txn} acknowledged as already applied "
                          f"(committed=False) although no earlier attempt of it can have committed")
        if rec.op["kind"] == "append":
            for w in worlds:
                _effect(w, rec)
            continue
        if ack is not None:
            for w in worlds:
                _effect(w, rec)
        elif rec.ambiguous:
            landed = [w.copy() for w in worlds]
            for w in landed:
                _effect(w, rec)
                if rec.op["kind"] == "overwrite":
                    w.must_land.add(seq)  # then exactly one of its attempts committed
                w.notes.append(f"{seq} landed")
            for w in worlds:
                w.notes.append(f"{seq} not landed")
            worlds += landed
            if len(worlds) > MAX_WORLDS:
                raise AssertionError(f"writer {rec.writer}: more than {MAX_WORLDS} possible states")
    return worlds, errors


def _describe_unexpected(journal: WriterJournal, key: tuple) -> str:
    seq, attempt, row = key
    rec = journal.ops.get(seq)
    if rec is None:
        return "of a write that was never attempted"
    a = rec.attempts.get(attempt)
    if a is None:
        return f"of attempt {attempt} of {rec.op['kind']} {seq}, which was never made"
    if rec.op.get("table") != "main":
        return f"of a write to {rec.op.get('table')}"
    if a.status == "fail":
        return f"of an attempt that failed with {a.cls} (the server said nothing was committed)"
    if a.status == "ack" and not a.committed:
        return "of an attempt acknowledged as not committed (committed=False)"
    if row not in {r for r, _b, _v in rec.op.get("rows", [])}:
        return "that the write did not contain"
    return "that a later overwrite/delete of this writer should have removed"


def _check_world(journal: WriterJournal, world: World, actual: list, stats: dict | None) -> list:
    w = journal.writer
    errors = []
    counts = collections.Counter((s, a, r) for s, a, r, _b, _v in actual)
    values = {(s, a, r): (b, v) for s, a, r, b, v in actual}
    for key, n in sorted(counts.items()):
        if n > 1:
            errors.append(f"row {w}:{key} (seq, attempt, row) appears {n} times")
        rec = world.recs.get(key)
        if rec is None:
            errors.append(f"row {w}:{key} is there but should not be: a row {_describe_unexpected(journal, key)}")
        elif values[key] != (rec.bucket, rec.val):
            errors.append(f"row {w}:{key} has (bucket, val) {values[key]}, expected {(rec.bucket, rec.val)}")
    by_seq: dict = collections.defaultdict(lambda: collections.defaultdict(list))
    for key, rec in world.recs.items():
        by_seq[key[0]][key[1]].append(key)
        if rec.required and key not in counts:
            op = journal.ops[key[0]]
            errors.append(f"row {w}:{key} of acknowledged {op.op['kind']} (txn={op.txn}) is missing")
    for seq, per_attempt in sorted(by_seq.items()):
        op = journal.ops[seq]
        present = sorted(a for a, keys in per_attempt.items() if any(k in counts for k in keys))
        for a in present:
            lost = [k for k in per_attempt[a] if k not in counts]
            if lost:
                errors.append(f"{w}:{seq} attempt {a} landed partially: rows {sorted(k[2] for k in lost)} missing")
        if op.txn and len(present) > 1:
            errors.append(f"{w}:{seq} {op.op['kind']} with txn {op.txn} landed {len(present)} times "
                          f"(attempts {present}; outcomes {_outcomes(op)})")
        if seq in world.must_land and not present and len(per_attempt) == len(op.ambiguous):
            errors.append(f"{w}:{seq} {op.op['kind']} txn {op.txn} was acknowledged as already applied "
                          f"(committed=False) but none of its attempts {op.ambiguous} is in the table")
        if stats is not None:
            amb_present = [a for a in present if op.attempts[a].status == "amb" and not op.attempts[a].in_flight]
            stats["landed_after_error"] += len(amb_present)
            if not op.txn and len(present) > 1:
                stats["duplicate_retries"] += len(present) - 1
    return errors


def _outcomes(op: OpRecord) -> str:
    return ", ".join(f"{a.n}:{a.status}" + (f"(committed={a.committed}, v{a.version})" if a.status == "ack" else
                                            f"({a.cls or 'in flight'})") for a in op.attempts.values())


def check_main_rows(journals: dict, rows: list, stats: dict | None = None) -> list:
    """The main table's rows against each writer's journal.

    Per writer: every row comes from an attempt that may have committed and was not removed by a
    later op of that writer, with the value its later updates gave it; no (seq, attempt, row) twice;
    every row of an acknowledged commit present; an attempt lands whole or not at all; a txn op
    lands at most once over its attempts, and exactly once when acknowledged as already applied.
    A non-txn op retried after a connection error may have landed once per ambiguous attempt.
    """
    errors = []
    by_writer: dict = collections.defaultdict(list)
    for w, s, a, r, b, v in rows:
        by_writer[w].append((s, a, r, b, v))
    for w in sorted(set(by_writer) - set(journals)):
        errors.append(f"{len(by_writer[w])} rows of unknown writer {w!r}")
    for w, journal in sorted(journals.items()):
        worlds, errs = worlds_for(journal)
        errors += errs
        results = [(_check_world(journal, world, by_writer.get(w, []), None), world) for world in worlds]
        best, world = min(results, key=lambda x: len(x[0]))
        if best:
            head = f"writer {w}"
            if len(worlds) > 1:
                head += f" (closest of {len(worlds)} possible states: {world.notes})"
            errors += [f"{head}: {e}" for e in best]
        if stats is not None:
            _check_world(journal, world, by_writer.get(w, []), stats)
    return errors


def check_txn_versions(journals: dict, dt) -> list:
    """delta-rs ``transaction_version`` of each writer's app id against its acknowledged txn ops."""
    from crash_writer import app_id

    errors = []
    for w, journal in sorted(journals.items()):
        txn_ops = [r for r in journal.ops.values() if r.op.get("table") == "main" and r.txn]
        acked = [r.seq for r in txn_ops if r.ack is not None]
        possible = {r.seq for r in txn_ops if r.possible or r.ack is not None}
        tv = dt.transaction_version(app_id(w))
        if acked and (tv is None or tv < max(acked)):
            errors.append(f"delta-rs transaction_version({app_id(w)!r}) = {tv}, but txn version {max(acked)} "
                          f"was acknowledged")
        if tv is not None and tv not in possible:
            errors.append(f"delta-rs transaction_version({app_id(w)!r}) = {tv}: no such txn write can have committed")
    return errors


def shared_ops(journals: dict, rnd: int) -> list:
    return [r for j in journals.values() for r in j.ops.values()
            if r.op.get("kind") == "shared" and r.op.get("round") == rnd]


def check_shared_rows(journals: dict, rnd: int, rows: list, txn_version, stats: dict | None = None) -> list:
    """A fresh table where every writer raced ``txn=("shared-<rnd>", 1)`` (creating the table) and
    then ``("shared-<rnd>", 2)``: each txn version committed at most once over all writers and
    attempts, exactly once when anyone was acknowledged, by the writer acknowledged with
    committed=True if any; rows whole, never twice; delta-rs' transaction_version the highest."""
    errors = []
    ops = shared_ops(journals, rnd)
    expected = {}
    for r in ops:
        for a in r.possible:
            for row, _b, _v in r.op["rows"]:
                expected[(r.writer, r.seq, a, row)] = r
    counts = collections.Counter((w, s, a, r) for w, s, a, r, _b, _v in rows)
    for key, n in sorted(counts.items()):
        if n > 1:
            errors.append(f"fresh-{rnd}: row {key} appears {n} times")
        if key not in expected:
            errors.append(f"fresh-{rnd}: row {key} is there but no attempt that may have committed wrote it")
    landed_max = None
    for v in (1, 2):
        of_v = [r for r in ops if r.op["txn"][1] == v]
        present = sorted({(r.writer, r.seq, a) for r in of_v for a in r.possible
                          if any((r.writer, r.seq, a, row) in counts for row, _b, _v in r.op["rows"])})
        for w, s, a in present:
            r = next(r for r in of_v if (r.writer, r.seq) == (w, s))
            lost = [row for row, _b, _v in r.op["rows"] if (w, s, a, row) not in counts]
            if lost:
                errors.append(f"fresh-{rnd}: {w}:{s} attempt {a} landed partially (rows {lost} missing)")
        committed = [(r.writer, r.seq, r.ack.n) for r in of_v if r.ack is not None and r.ack.committed]
        acked = [r for r in of_v if r.ack is not None]
        txn = f"txn ('shared-{rnd}', {v})"
        if len(committed) > 1:
            errors.append(f"fresh-{rnd}: {txn} acknowledged committed=True to {len(committed)} writers {committed}")
        if len(present) > 1:
            errors.append(f"fresh-{rnd}: {txn} committed {len(present)} times: (writer, seq, attempt) {present}; "
                          f"outcomes {[(r.writer, _outcomes(r)) for r in of_v]}")
        if committed and present and committed[0] not in present:
            errors.append(f"fresh-{rnd}: {txn} acknowledged to {committed[0]} but the rows are of {present}")
        if acked and not present:
            errors.append(f"fresh-{rnd}: {txn} acknowledged to {[r.writer for r in acked]} but no rows of it")
        if present:
            landed_max = v
        if stats is not None:
            stats["landed_after_error"] += sum(1 for w, s, a in present
                                               for r in of_v if (r.writer, r.seq) == (w, s)
                                               and r.attempts[a].status == "amb")
    if txn_version != landed_max and not (landed_max is None and txn_version is None):
        errors.append(f"fresh-{rnd}: delta-rs transaction_version('shared-{rnd}') = {txn_version}, "
                      f"rows say {landed_max}")
    return errors
