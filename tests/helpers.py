"""Test helpers: independent readers (delta-rs, raw log JSON, pyarrow) and canonical row order."""

from __future__ import annotations

import glob
import json
import os
import time

import numpy as np
import pandas as pd
import pytest


def stress_size(env: str, suite: int, stress: int) -> int:
    """The size of a stress test (kills, clients, files): ``$<env>`` when set, else ``stress`` under
    ``FILECOMMIT_STRESS=1`` (``make test-stress``, tests marked ``stress``), else ``suite``, the
    smaller size ``make test`` runs them at (same code paths and checks, less work)."""
    if os.environ.get(env):
        return int(os.environ[env])
    return stress if os.environ.get("FILECOMMIT_STRESS") == "1" else suite


def error_class(e) -> str | None:
    """The error class (``getCondition()``) of an exception or of a ``pytest.raises`` result;
    None for an exception without one. Tests match errors on this, never on message text."""
    exc = e.value if isinstance(e, pytest.ExceptionInfo) else e
    get = getattr(exc, "getCondition", None)
    return get() if get is not None else None


def second_session(spark):
    """An independent Spark Connect client session on the same server as ``spark``.

    ``$FILECOMMIT_REMOTE`` when the suite runs against an existing server (it may carry a token),
    else the URL of the server ``spark`` is connected to (the embedded one). The caller stops it.
    """
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    from filecommit import _connect

    url = os.environ.get("FILECOMMIT_REMOTE") or _connect.server_url(spark)
    return RemoteSparkSession.builder.remote(url).create()


# Runs a test on a local table and on an s3a:// table in the session's MinIO bucket: the
# ``table_path`` fixture (conftest) takes the parameter; the helpers below read both.
on_s3 = pytest.mark.parametrize("table_path", ["local", "s3"], indirect=True)


def shared_mode() -> bool:
    """Whether the suite's server runs in shared mode (``FILECOMMIT_TEST_SERVER_CONF`` sets
    ``spark.filecommit.server.shared=true``)."""
    conf = json.loads(os.environ.get("FILECOMMIT_TEST_SERVER_CONF") or "{}")
    return str(conf.get("spark.filecommit.server.shared", "false")).strip().lower() == "true"


def is_s3(path: str) -> bool:
    """Whether ``path`` is an ``s3a://`` table of the session's MinIO (``tests/s3.py``)."""
    return str(path).startswith("s3a://")


def delta_table(path: str, version=None):
    """delta-rs's ``DeltaTable`` of a local or ``s3a://`` table (delta-rs names the scheme ``s3``,
    with the MinIO server's storage options)."""
    from deltalake import DeltaTable

    kwargs = {} if version is None else {"version": version}
    if is_s3(path):
        import s3

        return DeltaTable("s3://" + path.removeprefix("s3a://"), storage_options=s3.ACTIVE.storage_options(),
                          **kwargs)
    return DeltaTable(path, **kwargs)


def _s3_files(path: str, recursive: bool) -> list[tuple[str, str]]:
    """(relative name, key) of the objects under an s3a:// directory."""
    import s3
    from pyarrow import fs

    base = path.removeprefix("s3a://").rstrip("/")
    infos = s3.ACTIVE.filesystem().get_file_info(fs.FileSelector(base, allow_not_found=True, recursive=recursive))
    return sorted((i.path[len(base) + 1:], i.path) for i in infos if i.type == fs.FileType.File)


def log_names(path: str) -> list[str]:
    """The file names directly in the table's ``_delta_log`` (sorted), local or ``s3a://``."""
    if is_s3(path):
        return [name for name, _ in _s3_files(f"{path}/_delta_log", False)]
    log = os.path.join(path, "_delta_log")
    return sorted(n for n in os.listdir(log) if os.path.isfile(os.path.join(log, n)))


def exists(path: str) -> bool:
    """Whether the file ``path`` exists, local or ``s3a://``."""
    if is_s3(path):
        import s3
        from pyarrow import fs

        return s3.ACTIVE.filesystem().get_file_info(path.removeprefix("s3a://")).type == fs.FileType.File
    return os.path.exists(path)


def read_bytes(path: str) -> bytes:
    """A file's bytes, local or s3a://."""
    if is_s3(path):
        import s3

        with s3.ACTIVE.filesystem().open_input_stream(path.removeprefix("s3a://")) as fh:
            return fh.read()
    with open(path, "rb") as fh:
        return fh.read()


def delta_rows(path: str, columns=None, version=None) -> pd.DataFrame:
    """The table's rows as read by delta-rs (``DeltaTable.to_pyarrow_table``), in canonical order
    with exact types (see ``canonical``)."""
    return canonical(delta_table(path, version).to_pyarrow_table(), columns)


def _null(v) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def _arrow_dtype(t):
    """``to_pandas`` types_mapper: Arrow integers as pandas ``Int64``, floating point as ``Float64``
    (nullable, so a null does not turn an integer column into float64)."""
    import pyarrow as pa

    if pa.types.is_integer(t):
        return pd.Int64Dtype()
    if pa.types.is_floating(t):
        return pd.Float64Dtype()
    return None


def _exact(col: pd.Series) -> pd.Series:
    """One column with an exact type: any integer column as ``Int64``, any floating point column as
    ``Float64``, everything else (strings, booleans, dates, decimals, ...) as objects with None for
    null. An object column takes ``Int64`` when its values are all integers and ``Float64`` when
    they are all numbers with at least one float, so rows parsed from JSON keep 1 and 1.0 apart. An
    empty or all-null column is objects, whatever its type: a JSON reader cannot tell its type."""
    if pd.api.types.is_bool_dtype(col) or not col.notna().any():
        # An empty or all-null column has no value to type: objects (None) from every reader.
        return col.astype(object).where(col.notna(), None)
    if pd.api.types.is_integer_dtype(col):
        return col.astype("Int64")
    if pd.api.types.is_float_dtype(col):
        return col.astype("Float64")
    if col.dtype == object:
        values = [v for v in col if not _null(v)]
        ints = [isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values]
        floats = [isinstance(v, (float, np.floating)) for v in values]
        if values and all(ints):
            return pd.Series(pd.array([None if _null(v) else int(v) for v in col], dtype="Int64"), index=col.index)
        if values and all(i or f for i, f in zip(ints, floats)):
            return pd.Series(pd.array([None if _null(v) else float(v) for v in col], dtype="Float64"),
                             index=col.index)
    return col.astype(object).where(col.notna(), None)


def canonical(df, columns=None) -> pd.DataFrame:
    """Rows of a pandas frame or a pyarrow Table, sorted by all columns, with exact types for exact
    comparison (``pd.testing.assert_frame_equal``, ``DataFrame.equals``): integers as ``Int64``,
    floating point as ``Float64`` (an int/double change is a difference; integers above 2^53 stay
    exact), other values as objects with None for null. ``columns`` selects and orders the columns
    (default: all, sorted by name). Build frames from rows with ``dtype=object`` (``rows_frame``,
    ``dicts_frame``), or pandas infers float64 for an integer column with a null."""
    import pyarrow as pa

    if isinstance(df, pa.Table):
        df = df.to_pandas(types_mapper=_arrow_dtype)
    cols = list(columns) if columns is not None else sorted(df.columns)
    out = pd.DataFrame({c: _exact(df[c]) for c in cols}, index=df.index)
    # Sort keys put nulls first; a null compares false with everything, so sorting by it directly
    # would keep the readers' own row order.
    key = [out[c].astype(object).map(lambda v: (0, 0) if _null(v) else (1, v)) for c in cols]
    order = pd.DataFrame({i: k for i, k in enumerate(key)}).sort_values(list(range(len(cols)))).index
    return out.loc[order].reset_index(drop=True)


def log_actions(path: str) -> dict[int, list[dict]]:
    """Raw ``_delta_log`` commits: version -> list of action dicts, parsed with the json module."""
    out = {}
    if is_s3(path):
        files = [(f"{path}/_delta_log/{name}", name) for name, _ in _s3_files(f"{path}/_delta_log", False)]
    else:
        files = [(f, os.path.basename(f)) for f in sorted(glob.glob(os.path.join(path, "_delta_log", "*.json")))]
    for f, name in files:
        if name.startswith(".") or not name.endswith(".json") or not name[:20].isdigit():
            continue
        out[int(name.split(".")[0])] = [json.loads(line) for line in read_bytes(f).decode().splitlines()
                                        if line.strip()]
    return out


def adds_in_log(path: str, version: int) -> list[dict]:
    """The ``add`` actions of one commit."""
    return [a["add"] for a in log_actions(path)[version] if "add" in a]


def dv_id(dv) -> str | None:
    """A deletion vector descriptor's unique id (protocol "Deletion Vector Descriptor"), None without."""
    if not dv:
        return None
    offset = dv.get("offset")
    return f"{dv['storageType']}{dv['pathOrInlineDv']}" + (f"@{offset}" if offset is not None else "")


def checkpoint_actions(path: str, version: int) -> list[dict]:
    """The actions of a classic single-file checkpoint, as dicts like the JSON lines (pyarrow)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = os.path.join(path, "_delta_log", f"{version:020d}.checkpoint.parquet")
    out = []
    for row in pq.read_table(pa.BufferReader(read_bytes(f))).to_pylist():
        for kind, value in row.items():
            if value is not None:
                out.append({kind: value})
    return out


def checkpoint_versions(path: str, wait_for: tuple | list = ()) -> list[int]:
    """Versions of the classic checkpoints in the log, ascending. Checkpoints are written in the
    background after a command answers, so with ``wait_for`` this first waits (at most 30 s) until
    each of those versions has its checkpoint and ``_last_checkpoint`` names at least the newest of
    them; the answer is then whatever the log holds (the caller's assertion judges it)."""
    def listed():
        return sorted(int(n.split(".")[0]) for n in log_names(path) if n.endswith(".checkpoint.parquet")
                      and n[:20].isdigit() and n.count(".") == 2)

    deadline = time.monotonic() + 30
    while wait_for and time.monotonic() < deadline:
        last = None
        try:
            last = json.loads(read_bytes(os.path.join(path, "_delta_log", "_last_checkpoint"))).get("version")
        except (OSError, ValueError):
            pass
        if set(wait_for) <= set(listed()) and last is not None and last >= max(wait_for):
            break
        time.sleep(0.05)
    return listed()


def log_state(path: str) -> dict:
    """The table state replayed from the raw log with the json module and pyarrow, independent of
    our code: from version 0 when its JSON commit is there, else from the newest checkpoint.

    Returns ``{"version", "protocol", "metaData", "active": {(path, dv_id): add}}``; logical files
    are keyed by path and deletion vector id, as the protocol reconciles them.
    """
    commits = log_actions(path)
    state = {"version": None, "protocol": None, "metaData": None, "active": {}}
    start = 0
    if 0 not in commits:
        cps = checkpoint_versions(path)
        if not cps:
            raise AssertionError(f"{path}: no commit 0 and no checkpoint")
        start = cps[-1] + 1
        batches = [(cps[-1], checkpoint_actions(path, cps[-1]))]
    else:
        batches = []
    batches += [(v, commits[v]) for v in sorted(commits) if v >= start]
    for version, actions in batches:
        for a in actions:
            if a.get("protocol"):
                state["protocol"] = a["protocol"]
            elif a.get("metaData"):
                state["metaData"] = a["metaData"]
            elif a.get("remove"):
                r = a["remove"]
                state["active"].pop((r["path"], dv_id(r.get("deletionVector"))), None)
            elif a.get("add"):
                ad = a["add"]
                state["active"][(ad["path"], dv_id(ad.get("deletionVector")))] = ad
        state["version"] = version
    return state


def data_files(path: str) -> list[str]:
    """Every file under the table directory outside ``_delta_log`` (relative, sorted): debris checks."""
    if is_s3(path):
        return [name for name, _ in _s3_files(path, True) if not name.startswith("_delta_log/")]
    out = []
    for d, _, files in os.walk(path):
        rel = os.path.relpath(d, path)
        if rel == "_delta_log" or rel.startswith("_delta_log" + os.sep):
            continue
        out += [os.path.normpath(os.path.join(rel, f)) for f in files]
    return sorted(out)


def shared_dir(tmp) -> str:
    """A fresh directory the server sees too: under ``$FILECOMMIT_TEST_DIR`` when set (a remote
    server on a shared volume, as the ``table_path`` fixture), else ``tmp`` (a pytest tmp dir)."""
    import uuid

    base = os.environ.get("FILECOMMIT_TEST_DIR")
    if not base:
        return str(tmp)
    path = os.path.join(base, uuid.uuid4().hex[:8])
    os.makedirs(path)
    return path


def race_held_commit(path: str, version: int, first, second, check=None):
    """Two writers racing for ``version`` of ``path``, decided by the store (``tests/faults.py``):
    ``first()`` runs in a thread whose commit of ``version`` the fault-injection jar holds until
    ``second()`` (run here) has committed ``version``; then the hold is released.

    :param check: asserts on second's return; default: a filecommit result committed as ``version``
        (a DeltaTable call returns metric rows instead)
    :returns: ``(outcome, result)``: ``outcome`` has ``"result"`` (first's return) or ``"error"``
        (what it raised); ``result`` is second's return, checked by ``check``
    :raises AssertionError: when first's commit never reached the store within 180 s (a busy
        machine reads slowly)
    """
    import threading

    import faults

    held = faults.arm(path, faults.COMMIT_HOLD, times=1, version=version)
    outcome: dict = {}

    def run_first() -> None:
        try:
            outcome["result"] = first()
        except Exception as e:  # noqa: BLE001 - judged by the caller
            outcome["error"] = e

    t = threading.Thread(target=run_first)
    t.start()
    try:
        deadline = time.time() + 180
        while held.fired() == 0 and time.time() < deadline:
            time.sleep(0.05)
        assert held.fired() == 1, f"the first writer's commit never reached the store: {outcome}"
        result = second()
        if check is None:
            assert result.committed and result.version == version, result
        else:
            check(result)
    finally:
        held.disarm()
        t.join(timeout=120)
    return outcome, result


def make_fixture_tables(delta_spark, tmp_path_factory, request, fixtures: dict, label: str) -> dict:
    """Every fixture table of a module, made by real Delta in one Spark + Delta request while the
    Connect server starts (the ``spark`` fixture is requested in between).

    ``fixtures`` maps a name to the steps ``tests/delta_tables.py`` runs, or to a dict with
    ``steps`` and optionally ``drop_commits_before``; returns name -> its answer (``path``,
    ``version``, ...). Fails the module when a table could not be made."""
    from pathlib import Path

    root = Path(shared_dir(tmp_path_factory.mktemp(label)))
    specs = []
    for n, s in fixtures.items():
        spec = dict(s) if isinstance(s, dict) else {"steps": s}
        specs.append({"name": n, "path": str(root / n), **spec})
    wait = delta_spark.make(specs)
    request.getfixturevalue("spark")
    out = wait()
    for name, m in out.items():
        assert m["ok"], f"fixture {name} could not be made by delta-spark: {m.get('error')}"
    return out


def s3_dir() -> str:
    """A fresh ``s3a://`` directory in the session's MinIO bucket (``tests/s3.py``)."""
    import uuid

    import s3

    if s3.ACTIVE is None:
        pytest.skip("object-storage tests need the embedded server's MinIO (FILECOMMIT_REMOTE is set)")
    return f"s3a://{s3.ACTIVE.bucket}/{uuid.uuid4().hex[:8]}"


def upload_table(local_dir: str, dest: str) -> str:
    """Copies the local directory ``local_dir`` (a table) to the ``s3a://`` path ``dest`` with
    pyarrow's S3 client; returns ``dest``."""
    import s3
    from pyarrow import fs

    fs.copy_files(local_dir, dest.removeprefix("s3a://"), source_filesystem=fs.LocalFileSystem(),
                  destination_filesystem=s3.ACTIVE.filesystem())
    return dest


def twin_copier(made: dict, tmp, where: str = "local"):
    """``copy(name)``: two fresh copies of fixture table ``name`` (ours, Delta's) and its version,
    so that filecommit and Delta run the same change on the same files. With ``where="s3"`` ours is
    an ``s3a://`` copy in the session's MinIO bucket (Delta's stays local)."""
    import shutil

    root = shared_dir(tmp)
    remote = s3_dir() if where == "s3" else None

    def _copy(name):
        paths = []
        for who in ("ours", "delta"):
            dest = os.path.join(root, f"{name}_{who}")
            shutil.copytree(made[name]["path"], dest, symlinks=True)
            if who == "ours" and remote:
                dest = upload_table(dest, f"{remote}/{name}_{who}")
            paths.append(dest)
        return paths[0], paths[1], made[name]["version"]

    return _copy


def spark_delta_rows(delta_spark, path: str, columns, version=None) -> pd.DataFrame:
    """The table's rows as Spark + Delta (the ``delta_spark`` fixture) reads them, in canonical
    order; fails when it cannot read the table."""
    got = delta_spark.read_one({"path": path, "kind": "table", "version": version})
    assert got["ok"], f"Spark + Delta cannot read {path}: {got.get('error')}"
    return canonical(pd.DataFrame([{c: r.get(c) for c in columns} for r in got["rows"]], columns=list(columns),
                                  dtype=object), columns)


def assert_both_readers(delta_spark, path: str, expected: pd.DataFrame, columns, version=None) -> None:
    """delta-rs and Spark + Delta both read ``expected`` (a canonical frame) from the table."""
    pd.testing.assert_frame_equal(delta_rows(path, columns, version), expected)
    pd.testing.assert_frame_equal(spark_delta_rows(delta_spark, path, columns, version), expected)


def file_tree(root: str) -> dict[str, tuple[int, int]]:
    """Every file under ``root``: relative path -> (size in bytes, mtime in ns): the "untouched"
    check of a directory another client attacked."""
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            st = os.stat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


def versioned_rows_delta_rs(path: str, columns=("id", "v", "part")) -> tuple[int, list]:
    """The table's version and its rows (tuples of ``columns``, sorted) as delta-rs reads them (its
    DataFusion scan applies deletion vectors)."""
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    t = DeltaTable(path)
    got = pa.table(QueryBuilder().register("t", t).execute(f"SELECT {', '.join(columns)} FROM t").read_all())
    return t.version(), sorted(zip(*(got[c].to_pylist() for c in columns), strict=True))


def versioned_rows_spark_delta(delta_spark, path: str, columns=("id", "v", "part")) -> tuple[int, list]:
    """The table's version and its rows (tuples of ``columns``, sorted) as Spark + Delta reads them."""
    answer = delta_spark.read_one({"path": path, "kind": "table"})
    assert answer["ok"], answer
    return answer["version"], sorted(tuple(r[c] for c in columns) for r in answer["rows"])



def copy_fixture(made, name: str, tmp, where: str = "local") -> str:
    """A fresh copy of fixture table ``name`` of ``made`` (``make_fixture_tables``) under
    ``shared_dir(tmp)``, local, or (``where="s3"``) uploaded to a fresh ``s3a://`` directory in the
    session's MinIO bucket; returns the copy's path."""
    import shutil

    dest = os.path.join(shared_dir(tmp), name)
    shutil.copytree(made[name]["path"], dest, symlinks=True)
    return upload_table(dest, f"{s3_dir()}/{name}") if where == "s3" else dest


def sql_steps(*statements: str) -> list[dict]:
    """Steps of a fixture table (``make_fixture_tables``, ``tests/delta_tables.py``): one
    ``{"sql": statement}`` per statement, in order (``{table}`` names the table)."""
    return [{"sql": s} for s in statements]


def values_sql(rows) -> str:
    """``(id, v, part)`` rows as the text of a SQL ``VALUES`` list, ``(1, 10, 'a'), (2, 20, 'b')``:
    ``id`` and ``v`` as Python prints them, ``part`` quoted."""
    return ", ".join(f"({i}, {v}, '{p}')" for i, v, p in rows)


def spark_delta_sql(delta_spark, path: str, stmt: str) -> list[dict]:
    """The rows (dicts, column -> value) of ``stmt`` run by Spark + Delta (the ``delta_spark``
    fixture) with ``{table}`` naming the table at ``path``; fails when the statement fails."""
    r = delta_spark.read_one({"kind": "sql", "path": path, "sql": stmt})
    assert r["ok"], r
    return r["rows"]


def result_frame(result: dict, columns) -> pd.DataFrame:
    """The rows of one Spark + Delta read (the ``delta_spark`` fixture's answer: ``rows`` as value
    lists in ``columns`` order of the read) as a canonical frame of ``columns``."""
    return canonical(pd.DataFrame(result["rows"], columns=result["columns"], dtype=object), columns)


def rows_frame(rows, columns) -> pd.DataFrame:
    """``rows`` (sequences of values in ``columns`` order) as a canonical frame with ``columns`` in
    that order: what ``delta_rows(path, columns)`` returns for a table holding them."""
    return canonical(pd.DataFrame([list(r) for r in rows], columns=columns, dtype=object), columns)


# The table of the staging tests (tests/test_staging*.py): (id long, v string, part long),
# partitioned by part, with the change data feed on.
STAGING_ROWS = [(i, f"v{i}", i % 3) for i in range(30)]
# Its columns in the order of a canonical frame of it (by name).
STAGING_COLUMNS = ["id", "part", "v"]


def staging_df(spark, rows):
    """A Spark DataFrame of ``rows``, ``(id, v, part)`` tuples typed ``id long, v string, part long``."""
    return spark.createDataFrame(rows, "id long, v string, part long")


def staging_frame(rows) -> pd.DataFrame:
    """``(id, v, part)`` tuples as a canonical frame (columns by name: id, part, v): what
    ``delta_rows(path)`` returns for a staging table holding them."""
    return canonical(pd.DataFrame(rows, columns=["id", "v", "part"], dtype=object))


def make_staging_table(spark, path: str, rows=STAGING_ROWS, props=None) -> None:
    """Writes ``rows`` (``(id, v, part)`` tuples) as a new table at ``path``, partitioned by ``part``,
    with the change data feed on and the table properties ``props``."""
    import filecommit

    filecommit.write(staging_df(spark, rows), path, partition_by=["part"],
                     table_properties={"delta.enableChangeDataFeed": "true", **(props or {})})
