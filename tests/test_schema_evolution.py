"""Schema evolution and table properties against Delta Lake on Spark: ``mergeSchema`` appends and
overwrites (new top-level and nested fields, type widening), column mapping (new tables, the
``none`` -> ``name`` upgrade), and log clean-up after checkpoints.

Each evolution runs on two copies of one Delta-made table: filecommit on one, Delta Lake on Spark
(``.venv-delta``) on the other; Spark + Delta then reads both (schema, rows, change feed), and
delta-rs reads ours where it can.
"""

from __future__ import annotations

import glob
import json
import os
import time

import pyarrow as pa
import pytest
from deltalake import DeltaTable, QueryBuilder
from helpers import checkpoint_versions, delta_table, log_actions, twin_copier
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

BASE = "id BIGINT, s STRUCT<a: INT>, part STRING"
NEW = "id BIGINT, s STRUCT<a: INT, b: STRING>, part STRING, extra STRING"
NEW_JSON = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "s", "type": {"type": "struct", "fields": [
            {"name": "a", "type": "integer", "nullable": True, "metadata": {}},
            {"name": "b", "type": "string", "nullable": True, "metadata": {}}]}, "nullable": True, "metadata": {}},
        {"name": "part", "type": "string", "nullable": True, "metadata": {}},
        {"name": "extra", "type": "string", "nullable": True, "metadata": {}},
    ],
}
FIRST = [[i, [i * 10], "xy"[i % 2]] for i in range(1, 7)]
ADDED = [[i, [i * 10, f"b{i}"], "xy"[i % 2], f"e{i}"] for i in range(7, 12)]

FIXTURES = {
    "plain": [
        {"sql": f"CREATE TABLE {{table}} ({BASE}) USING delta PARTITIONED BY (part) "
                "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"},
        {"sql": "INSERT INTO {table} VALUES " + ", ".join(f"({i}, named_struct('a', {i * 10}), '{p}')"
                                                           for i, (_, _, p) in enumerate(FIRST, 1))},
    ],
    "mapped": [
        {"sql": f"CREATE TABLE {{table}} ({BASE}) USING delta PARTITIONED BY (part) "
                "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.enableChangeDataFeed' = 'true')"},
        {"sql": "INSERT INTO {table} VALUES (1, named_struct('a', 10), 'y'), (2, named_struct('a', 20), 'x')"},
    ],
    "props": [
        {"sql": "CREATE TABLE {table} (id BIGINT, v STRING) USING delta"},
        {"sql": "INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"},
    ],
    "widen": [
        {"sql": "CREATE TABLE {table} (id INT, v FLOAT) USING delta "
                "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"},
        {"sql": "INSERT INTO {table} VALUES (1, 1.5), (2, 2.5)"},
    ],
}


def _fields(schema: dict) -> list:
    """Name, type and nullability of every field, nested ones too (no metadata)."""
    out = []
    for f in schema["fields"]:
        t = f["type"]
        out.append((f["name"], _fields(t) if isinstance(t, dict) and t.get("type") == "struct" else t, f["nullable"]))
    return out


def _sorted_answer_rows(answer, key="id"):
    return sorted((tuple(sorted(r.items())) for r in answer["rows"]), key=lambda r: dict(r)[key])


def _new_df(spark, rows, schema=NEW):
    return spark.createDataFrame([(r[0], tuple(r[1]), *r[2:]) for r in rows], schema)


@pytest.mark.parametrize("where", ["local", "s3"])
def test_merge_schema_append_and_overwrite_match_delta(spark, delta_spark, made, tmp_path, where):
    ours, theirs, version = twin_copier(made, tmp_path, where)("plain")
    overwrite = [[i, [i, f"o{i}"], "x", f"o{i}"] for i in (20, 21)]
    steps = [{"dataframe": {"schema": NEW_JSON, "rows": ADDED, "mode": "append", "options": {"mergeSchema": "true"}}},
             {"dataframe": {"schema": NEW_JSON, "rows": overwrite, "mode": "overwrite",
                            "options": {"mergeSchema": "true"}}}]
    done = delta_spark.make([{"name": "theirs", "path": theirs, "steps": steps}])()
    assert done["theirs"]["ok"], done["theirs"].get("error")

    with pytest.raises(PySparkException) as e:
        filecommit.write(_new_df(spark, ADDED), ours)
    assert e.value.getCondition() == filecommit.errors.DELTA_METADATA_MISMATCH
    r1 = filecommit.write(_new_df(spark, ADDED), ours, options={"mergeSchema": "true"})
    r2 = filecommit.write(_new_df(spark, overwrite), ours, mode="overwrite", options={"mergeSchema": "true"})
    assert (r1.version, r2.version) == (version + 1, version + 2)

    a, b = delta_spark.read([{"kind": "detail", "path": p} for p in (ours, theirs)])
    assert a["ok"] and b["ok"]
    assert _fields(a["schema"]) == _fields(b["schema"])
    for v in (version + 1, version + 2):
        x, y = delta_spark.read([{"kind": "table", "path": p, "version": v} for p in (ours, theirs)])
        assert _sorted_answer_rows(x) == _sorted_answer_rows(y), v
    cx, cy = delta_spark.read([{"kind": "cdf", "path": p, "startingVersion": 0} for p in (ours, theirs)])
    strip = lambda ans: sorted((r["id"], r["_change_type"], r["_commit_version"], r["extra"], str(r["s"]))  # noqa: E731
                               for r in ans["rows"])
    assert strip(cx) == strip(cy)
    got = delta_table(ours).to_pyarrow_table().to_pylist()
    assert sorted(r["id"] for r in got) == [20, 21] and {r["s"]["b"] for r in got} == {"o20", "o21"}


def test_merge_schema_on_a_column_mapped_table_gives_new_fields_ids_and_physical_names(
        spark, delta_spark, made, tmp_path):
    ours, theirs, version = twin_copier(made, tmp_path)("mapped")
    done = delta_spark.make([{"name": "theirs", "path": theirs, "steps": [
        {"dataframe": {"schema": NEW_JSON, "rows": ADDED, "mode": "append", "options": {"mergeSchema": "true"}}}]}])()
    assert done["theirs"]["ok"], done["theirs"].get("error")
    filecommit.write(_new_df(spark, ADDED), ours, options={"mergeSchema": "true"})

    md = [a["metaData"] for a in log_actions(ours)[version + 1] if "metaData" in a][0]
    schema = json.loads(md["schemaString"])
    ids = []

    def walk(fields):
        for f in fields:
            m = f["metadata"]
            assert m["delta.columnMapping.physicalName"] and "delta.columnMapping.id" in m, f
            ids.append(m["delta.columnMapping.id"])
            if isinstance(f["type"], dict) and f["type"].get("type") == "struct":
                walk(f["type"]["fields"])

    walk(schema["fields"])
    assert len(set(ids)) == len(ids) == 6
    assert int(md["configuration"]["delta.columnMapping.maxColumnId"]) == max(ids)
    extra = [f for f in schema["fields"] if f["name"] == "extra"][0]
    assert extra["metadata"]["delta.columnMapping.physicalName"].startswith("col-")
    a, b = delta_spark.read([{"kind": "table", "path": p} for p in (ours, theirs)])
    assert a["ok"], a.get("error")
    assert _sorted_answer_rows(a) == _sorted_answer_rows(b)
    # delta-rs maps physical names in its DataFusion scan (not in to_pyarrow_table).
    got = QueryBuilder().register("t", DeltaTable(ours)).execute("SELECT extra FROM t").read_all()
    assert sorted(r["extra"] for r in pa.table(got).to_pylist() if r["extra"]) == sorted(f"e{i}" for i in range(7, 12))


def test_type_widening_matches_delta_and_needs_the_table_property(spark, delta_spark, made, tmp_path):
    ours, theirs, version = twin_copier(made, tmp_path)("widen")
    wide = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}},
                                         {"name": "v", "type": "double", "nullable": True, "metadata": {}}]}
    rows = [[2**40, 0.125], [3, 3.5]]
    done = delta_spark.make([{"name": "theirs", "path": theirs, "steps": [
        {"dataframe": {"schema": wide, "rows": rows, "mode": "append", "options": {"mergeSchema": "true"}}}]}])()
    assert done["theirs"]["ok"], done["theirs"].get("error")
    df = spark.createDataFrame([tuple(r) for r in rows], "id long, v double")
    filecommit.write(df, ours, options={"mergeSchema": "true"})
    a, b = delta_spark.read([{"kind": "detail", "path": p} for p in (ours, theirs)])
    assert _fields(a["schema"]) == _fields(b["schema"]) == [("id", "long", True), ("v", "double", True)]
    assert "typeWidening" in a["tableFeatures"]
    md = [x["metaData"] for x in log_actions(ours)[version + 1] if "metaData" in x][0]
    changes = {f["name"]: f["metadata"].get("delta.typeChanges") for f in json.loads(md["schemaString"])["fields"]}
    assert changes == {"id": [{"fromType": "integer", "toType": "long"}],
                       "v": [{"fromType": "float", "toType": "double"}]}
    x, y = delta_spark.read([{"kind": "table", "path": p} for p in (ours, theirs)])
    assert _sorted_answer_rows(x) == _sorted_answer_rows(y) and len(x["rows"]) == 4


def test_refused_merges_commit_nothing(spark, tmp_path):
    path = str(tmp_path / "t")
    filecommit.write(spark.createDataFrame([(1, "a")], "id int, name string"), path)
    def listing():  # the log without the checksum file the first commit writes in the background
        return sorted(os.listdir(path)), sorted(f for f in os.listdir(os.path.join(path, "_delta_log"))
                                                if not f.endswith(".crc"))

    before = listing()
    cases = [
        (spark.createDataFrame([(2**40, "b")], "id long, name string"), "widening without the property"),
        (spark.createDataFrame([("x", "b")], "id string, name string"), "incompatible"),
        (spark.createDataFrame([(1, 2)], "id int, name int"), "incompatible"),
    ]
    for df, why in cases:
        with pytest.raises(PySparkException) as e:
            filecommit.write(df, path, options={"mergeSchema": "true"})
        assert e.value.getCondition() == filecommit.errors.DELTA_FAILED_TO_MERGE_FIELDS, why
    assert listing() == before
    # A short integer merges into int (both INT32 in Parquet) without any widening.
    r = filecommit.write(spark.createDataFrame([(7, "c")], "id short, name string"), path,
                         options={"mergeSchema": "true"})
    assert r.committed and sorted(DeltaTable(path).to_pandas()["id"].tolist()) == [1, 7]


def test_column_mapping_upgrade_and_new_mapped_table(spark, delta_spark, tmp_path):
    path = str(tmp_path / "up")
    df = spark.createDataFrame([(1, "a", "p"), (2, "b", "q")], "id long, name string, part string")
    filecommit.write(df, path, partition_by=["part"])
    with pytest.raises(PySparkException) as e:
        filecommit.set_table_properties(spark, path, {"delta.columnMapping.mode": "id"})
    assert e.value.getCondition() == filecommit.errors.DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE
    filecommit.set_table_properties(spark, path, {"delta.columnMapping.mode": "name"})
    filecommit.write(spark.createDataFrame([(3, "c", "p")], "id long, name string, part string"), path)
    fresh = str(tmp_path / "fresh")
    filecommit.write(df, fresh, partition_by=["part"], table_properties={"delta.columnMapping.mode": "id"})
    d_up, d_fresh, t_up, t_fresh = delta_spark.read([
        {"kind": "detail", "path": path}, {"kind": "detail", "path": fresh},
        {"kind": "table", "path": path}, {"kind": "table", "path": fresh}])
    assert d_up["ok"] and d_fresh["ok"], (d_up.get("error"), d_fresh.get("error"))
    assert d_up["properties"]["delta.columnMapping.mode"] == "name"
    assert d_up["minReaderVersion"] >= 2 and d_up["minWriterVersion"] == 7
    assert d_fresh["properties"]["delta.columnMapping.mode"] == "id"
    assert sorted(r["name"] for r in t_up["rows"]) == ["a", "b", "c"]
    assert sorted(r["name"] for r in t_fresh["rows"]) == ["a", "b"]


def _commits(path):
    return sorted(int(os.path.basename(f)[:20]) for f in glob.glob(os.path.join(path, "_delta_log", "*.json")))


def test_log_cleanup_after_checkpoints(spark, delta_spark, tmp_path):
    path, kept = str(tmp_path / "clean"), str(tmp_path / "kept")
    props = {"delta.checkpointInterval": "5", "delta.logRetentionDuration": "interval 1 seconds",
             "delta.deletedFileRetentionDuration": "interval 1 seconds"}
    # Version 0 (row 0) by Delta itself: a retention this short is below this server's floor, so
    # only another tool can set it; the log clean-up it drives is not bound by that floor.
    specs = []
    for name, p, extra in (("clean", path, {}), ("kept", kept, {"delta.enableExpiredLogCleanup": "false"})):
        tblprops = ", ".join(f"'{k}' = '{v}'" for k, v in {**props, **extra}.items())
        specs.append({"name": name, "path": p, "steps": [
            {"sql": f"CREATE TABLE {{table}} USING delta TBLPROPERTIES ({tblprops}) "
                    "AS SELECT CAST(0 AS BIGINT) AS id"}]})
    made = delta_spark.make(specs)()
    assert all(m["ok"] for m in made.values()), {k: m.get("error") for k, m in made.items()}
    for i in range(1, 22):
        if i in (6, 11, 16):
            time.sleep(1.2)
        for p in (path, kept):
            filecommit.write(spark.createDataFrame([(i,)], "id long"), p)
    # Checkpoints and the clean-up after them run in the background after a write answers.
    checkpoint_versions(kept, wait_for=[20])
    checkpoint_versions(path, wait_for=[20])
    deadline = time.monotonic() + 30
    while _commits(path)[0] < 10 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    assert _commits(kept) == list(range(22))
    left = _commits(path)
    # Every commit older than the retention is gone up to the newest checkpoint that covers it; the
    # commit of that checkpoint's version stays, and nothing after it is touched.
    assert left[0] in (10, 15) and left == list(range(left[0], 22)), left
    assert os.path.exists(os.path.join(path, "_delta_log", f"{left[0]:020d}.checkpoint.parquet"))
    latest = delta_spark.read_one({"kind": "table", "path": path})
    assert latest["ok"], latest.get("error")
    assert sorted(r["id"] for r in latest["rows"]) == list(range(22))
    assert sorted(DeltaTable(path).to_pandas()["id"].tolist()) == list(range(22))
    # The oldest kept version still reads (Spark + Delta refuses time travel past the table's 1 s
    # deletedFileRetentionDuration, so delta-rs reads it).
    assert sorted(DeltaTable(path, version=left[0]).to_pandas()["id"].tolist()) == list(range(left[0] + 1))


def test_merge_with_schema_evolution_matches_delta(spark, delta_spark, made, tmp_path):
    ours, theirs, version = twin_copier(made, tmp_path)("plain")
    rows = [[5, [55, "b5"], "y", "e5"], [6, [66, "b6"], "x", "e6"], [30, [300, "b30"], "x", "e30"]]
    source_sql = " UNION ALL ".join(
        f"SELECT CAST({r[0]} AS BIGINT) AS id, named_struct('a', {r[1][0]}, 'b', '{r[1][1]}') AS s, "
        f"'{r[2]}' AS part, '{r[3]}' AS extra" for r in rows)
    done = delta_spark.make([{"name": "theirs", "path": theirs, "steps": [{"sql": (
        f"MERGE WITH SCHEMA EVOLUTION INTO {{table}} AS t USING ({source_sql}) AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")}]}])()
    assert done["theirs"]["ok"], done["theirs"].get("error")

    source = _new_df(spark, rows).alias("s")
    plain = filecommit.merge(source, ours, "t.id = s.id", target_alias="t").when_matched_update_all() \
        .when_not_matched_insert_all()
    with pytest.raises(PySparkException):
        plain.execute()
    r = filecommit.merge(source, ours, "t.id = s.id", target_alias="t").with_schema_evolution() \
        .when_matched_update_all().when_not_matched_insert_all().execute()
    assert r.version == version + 1 and r.metrics.num_updated_rows == 2 and r.metrics.num_inserted_rows == 1

    a, b = delta_spark.read([{"kind": "detail", "path": p} for p in (ours, theirs)])
    assert _fields(a["schema"]) == _fields(b["schema"])
    x, y = delta_spark.read([{"kind": "table", "path": p} for p in (ours, theirs)])
    assert _sorted_answer_rows(x) == _sorted_answer_rows(y) and len(x["rows"]) == 7
    cx, cy = delta_spark.read([{"kind": "cdf", "path": p, "startingVersion": version + 1} for p in (ours, theirs)])
    strip = lambda ans: sorted((r["id"], r["_change_type"], r["extra"], str(r["s"])) for r in ans["rows"])  # noqa: E731
    assert strip(cx) == strip(cy)
    # An assignment to a column the table lacks takes the source's column of that name.
    src2 = spark.createDataFrame([(5, "z")], "id long, extra2 string").alias("s")
    r2 = filecommit.merge(src2, ours, "t.id = s.id", target_alias="t") \
        .with_schema_evolution().when_matched_update({"extra2": "s.extra2"}).execute()
    assert r2.metrics.num_updated_rows == 1
    after = delta_spark.read_one({"kind": "table", "path": ours})
    assert {r["id"]: r["extra2"] for r in after["rows"]} == {r["id"]: ("z" if r["id"] == 5 else None)
                                                            for r in x["rows"]}


PROPERTIES = {
    "delta.enableDeletionVectors": "true",
    "delta.enableTypeWidening": "true",
    "delta.columnMapping.mode": "name",
    "delta.enableChangeDataFeed": "true",
    "delta.appendOnly": "true",
    "delta.isolationLevel": "Serializable",
    "delta.logRetentionDuration": "interval 60 days",
    "delta.deletedFileRetentionDuration": "interval 9 days",
    "delta.enableExpiredLogCleanup": "false",
    "delta.checkpointInterval": "7",
    "delta.autoOptimize.autoCompact": "true",
}
# delta.targetFileSize (a Databricks property that OPTIMIZE honours) is unknown to Delta Lake OSS.


def test_each_table_property_is_honoured_as_delta_writes_it(spark, delta_spark, made, tmp_path):
    copy = twin_copier(made, tmp_path)
    pairs = {}
    for i, (key, value) in enumerate(PROPERTIES.items()):
        ours, theirs, _ = copy("props")
        moved = [os.path.join(str(tmp_path), f"p{i}_{who}") for who in ("ours", "delta")]
        os.rename(ours, moved[0])
        os.rename(theirs, moved[1])
        pairs[key] = moved
        filecommit.set_table_properties(spark, moved[0], {key: value})
    done = delta_spark.make([{"name": k, "path": theirs, "steps": [
        {"sql": f"ALTER TABLE {{table}} SET TBLPROPERTIES ('{k}' = '{PROPERTIES[k]}')"}]}
        for k, (_, theirs) in pairs.items()])()
    assert all(d["ok"] for d in done.values()), {k: d.get("error") for k, d in done.items() if not d["ok"]}
    details = delta_spark.read([{"kind": "detail", "path": ours} for ours, _ in pairs.values()])
    for (key, _), ours_detail in zip(pairs.items(), details):
        theirs_detail = done[key]["detail"]
        got = (ours_detail["minReaderVersion"], ours_detail["minWriterVersion"], sorted(ours_detail["tableFeatures"]),
               ours_detail["properties"].get(key))
        want = (theirs_detail["minReaderVersion"], theirs_detail["minWriterVersion"],
                sorted(theirs_detail["tableFeatures"]), theirs_detail["properties"].get(key))
        assert got == want, key


def test_unknown_and_invalid_properties_are_refused_by_name(spark, tmp_path):
    path = str(tmp_path / "t")
    filecommit.write(spark.createDataFrame([(1,)], "id long"), path)
    for props, cls in (({"delta.autoOptimize.optimizeWrite": "true"}, "DELTA_UNKNOWN_CONFIGURATION"),
                       ({"delta.enableDeletionVector": "true"}, "DELTA_UNKNOWN_CONFIGURATION"),
                       ({"delta.columnMapping.mode": "names"}, "DELTA_ILLEGAL_OPTION"),
                       ({"delta.enableExpiredLogCleanup": "yes"}, "DELTA_ILLEGAL_OPTION"),
                       ({"delta.logRetentionDuration": "interval 1 month"}, "DELTA_ILLEGAL_OPTION"),
                       # Shorter than delta.deletedFileRetentionDuration (1 week), as Delta refuses.
                       ({"delta.logRetentionDuration": "interval 2 days"}, "DELTA_ILLEGAL_OPTION")):
        with pytest.raises(PySparkException) as e:
            filecommit.set_table_properties(spark, path, props)
        assert e.value.getCondition() == cls, props
        assert list(props)[0] in str(e.value)
    assert sorted(log_actions(path)) == [0]
