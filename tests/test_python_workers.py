"""The embedded server's Python workers run with the client's interpreter (``local_session``).

Spark Connect's planner starts the Python workers of Python UDFs with the server JVM's
``PYSPARK_PYTHON`` (default ``python3``, which need not have pyspark); ``local_session()`` starts
the server with ``sys.executable`` there, so a DataFrame with a Python UDF can be written without
any environment variable set.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pandas as pd
import pytest
from helpers import canonical, delta_rows, log_actions

import filecommit
from filecommit import _connect

EMBEDDED = not os.environ.get("FILECOMMIT_REMOTE")


def test_local_session_starts_the_server_with_the_client_interpreter(monkeypatch):
    """Unit level: the server conf and the JVM's environment at launch name ``sys.executable``."""
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    seen = {}

    class Started(Exception):
        pass

    def fake_start(master, opts):
        seen["env"] = os.environ.get("PYSPARK_PYTHON")
        seen["conf"] = dict(opts)
        raise Started

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setattr(_connect, "_local_url", None)  # as if no server ran in this process yet
    monkeypatch.setattr(RemoteSparkSession, "_start_connect_server", staticmethod(fake_start))
    monkeypatch.setattr(filecommit.session, "find_plugin_jar", lambda: "/x/plugin.jar")
    with pytest.raises(Started):
        filecommit.local_session()
    assert seen["env"] == sys.executable
    assert seen["conf"]["spark.pyspark.python"] == sys.executable
    assert "PYSPARK_PYTHON" not in os.environ, "the client's environment is restored"

    # An explicit choice wins: spark.pyspark.python in conf, else $PYSPARK_PYTHON.
    with pytest.raises(Started):
        filecommit.local_session(conf={"spark.pyspark.python": "/opt/py/bin/python3"})
    assert seen["env"] == seen["conf"]["spark.pyspark.python"] == "/opt/py/bin/python3"
    monkeypatch.setenv("PYSPARK_PYTHON", "/usr/bin/python3.11")
    with pytest.raises(Started):
        filecommit.local_session()
    assert seen["env"] == seen["conf"]["spark.pyspark.python"] == "/usr/bin/python3.11"
    assert os.environ["PYSPARK_PYTHON"] == "/usr/bin/python3.11"


@pytest.mark.slow
@pytest.mark.refused_in_shared_mode("writes the columns of a Python UDF")
def test_python_udf_columns_are_written_exactly(spark, table_path):
    # pyspark.sql.functions, as a user writes it: Connect columns because the session marks the
    # process as a Connect client, although the embedded server's classic session lives here too.
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType

    @F.udf(returnType=StringType())
    def label(i):
        return f"n{i:03d}-" + ("even" if i % 2 == 0 else "odd")

    @F.udf(returnType=StringType())
    def worker_python(_i):
        import sys as worker_sys

        return worker_sys.executable

    columns = [F.col("id"), label("id").alias("label"), worker_python("id").alias("python")]
    have_arrow = importlib.util.find_spec("pyarrow") is not None
    if have_arrow:
        @F.pandas_udf(LongType())
        def squared(s: pd.Series) -> pd.Series:
            return s * s

        columns.append(squared("id").alias("squared"))

    df = spark.range(0, 50, 1, 3).select(*columns)
    result = filecommit.write(df, table_path)
    assert result.committed and result.metrics.rows == 50

    got = delta_rows(table_path)
    expected = pd.DataFrame({"id": range(50)})
    expected["label"] = [f"n{i:03d}-" + ("even" if i % 2 == 0 else "odd") for i in range(50)]
    if have_arrow:
        expected["squared"] = [i * i for i in range(50)]
    assert sorted(got.columns) == sorted([*expected.columns, "python"])
    pythons = set(got.pop("python"))
    pd.testing.assert_frame_equal(got, canonical(expected))
    assert len(pythons) == 1
    if EMBEDDED and "PYSPARK_PYTHON" not in os.environ:
        assert pythons == {sys.executable}, "the workers ran the client's interpreter"


@pytest.mark.slow
@pytest.mark.refused_in_shared_mode("writes the columns of a Python UDF")
def test_string_udf_column_is_a_plain_delta_string(spark, table_path):
    """A Python UDF's StringType result is a Delta ``"string"`` column that delta-rs reads.

    Spark 4.3 resolves a UDF's StringType as an explicitly collated UTF8_BINARY string; Delta's
    schema has no such type name (collations go to field metadata), so the table must say
    "string" (the server stores the default collation as plain "string").
    """
    import json

    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    upper = F.udf(lambda s: s.upper(), StringType())
    df = spark.createDataFrame([("a",), ("b",)], "s string").select(upper("s").alias("s"))
    filecommit.write(df, table_path)
    meta = next(a["metaData"] for a in log_actions(table_path)[0] if "metaData" in a)
    assert json.loads(meta["schemaString"])["fields"][0]["type"] == "string"
    assert delta_rows(table_path, ["s"]).values.tolist() == [["A"], ["B"]]
