"""The client's own argument checks: pyspark error classes (``e.getCondition()``), raised before
anything is sent; the pyspark version guard; the typed package (py.typed).

pyspark validates an error class against its registry (error-conditions.json) when the exception
is built: an unknown class becomes a plain ``ValueError`` ("Cannot find main error class") and a
missing message parameter an ``AssertionError``, so every class the client uses is raised here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from pyspark.errors import PySparkException, PySparkTypeError, PySparkValueError

import filecommit
from filecommit import _checks, _connect

ROOT = Path(__file__).resolve().parent.parent


def _raises(exc_type, condition, fn, *args, **kwargs):
    with pytest.raises(exc_type) as e:
        fn(*args, **kwargs)
    assert isinstance(e.value, PySparkException), type(e.value)
    assert e.value.getCondition() == condition, e.value
    return e.value


# ------------------------------------------------------------------ checks alone (no server)

@pytest.mark.parametrize(
    "fn, args, exc_type, condition, params",
    [
        (_checks.check_path, ("",), PySparkValueError, "VALUE_NOT_NON_EMPTY_STR",
         {"arg_name": "path", "arg_value": ""}),
        (_checks.check_path, (None,), PySparkValueError, "VALUE_NOT_NON_EMPTY_STR",
         {"arg_name": "path", "arg_value": "None"}),
        (_checks.flag, ("change_data", 1), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "change_data", "expected_type": "bool", "arg_type": "int"}),
        (_checks.string_map, ("options", [("a", "b")]), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "options", "expected_type": "a mapping of str to str", "arg_type": "list"}),
        (_checks.string_map, ("options", {1: "b"}), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "options key", "expected_type": "str", "arg_type": "int"}),
        (_checks.string_map, ("options", {"a": None}), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "options['a']", "expected_type": "str (or int, float, bool)", "arg_type": "NoneType"}),
        (_checks.partition_columns, (["a", ""],), PySparkValueError, "VALUE_NOT_NON_EMPTY_STR",
         {"arg_name": "partition_by", "arg_value": ""}),
        (_checks.partition_columns, (5,), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "partition_by", "expected_type": "str or an iterable of str", "arg_type": "int"}),
        (_checks.int64_at_least_zero, ("batch_id", -1), PySparkValueError, "NEGATIVE_VALUE",
         {"arg_name": "batch_id", "arg_value": "-1"}),
        (_checks.int64_at_least_zero, ("batch_id", 2**63), PySparkValueError, "VALUE_OUT_OF_BOUNDS",
         {"arg_name": "batch_id", "lower_bound": "0", "upper_bound": str(2**63 - 1), "actual": str(2**63)}),
        (_checks.int64_at_least_zero, ("batch_id", 1.0), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "batch_id", "expected_type": "int", "arg_type": "float"}),
        (_checks.int_in_range, ("port", 70000, 0, 65535), PySparkValueError, "VALUE_OUT_OF_BOUNDS",
         {"arg_name": "port", "lower_bound": "0", "upper_bound": "65535", "actual": "70000"}),
        (_checks.not_empty, ("table property in `properties`", {}), PySparkValueError, "CANNOT_BE_EMPTY",
         {"item": "table property in `properties`"}),
        (_checks.txn, ("app",), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "txn", "expected_type": "a tuple (app_id: str, version: int)", "arg_type": "str"}),
        (_checks.txn, (("app", 1, 2),), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "txn", "expected_type": "a tuple (app_id: str, version: int)", "arg_type": "tuple"}),
        (_checks.txn, (("", 1),), PySparkValueError, "VALUE_NOT_NON_EMPTY_STR",
         {"arg_name": "txn app_id", "arg_value": ""}),
        (_checks.txn, ((7, 1),), PySparkValueError, "VALUE_NOT_NON_EMPTY_STR",
         {"arg_name": "txn app_id", "arg_value": "7"}),
        (_checks.txn, (("app", True),), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "txn version", "expected_type": "int", "arg_type": "bool"}),
        (_checks.txn, (("app", "1"),), PySparkTypeError, "NOT_EXPECTED_TYPE",
         {"arg_name": "txn version", "expected_type": "int", "arg_type": "str"}),
        (_checks.txn, (("app", -1),), PySparkValueError, "NEGATIVE_VALUE",
         {"arg_name": "txn version", "arg_value": "-1"}),
        (_checks.txn, (("app", 2**63),), PySparkValueError, "VALUE_OUT_OF_BOUNDS",
         {"arg_name": "txn version", "lower_bound": "0", "upper_bound": str(2**63 - 1), "actual": str(2**63)}),
    ],
)
def test_each_check_raises_a_registered_pyspark_error_class(fn, args, exc_type, condition, params):
    e = _raises(exc_type, condition, fn, *args)
    assert e.getMessageParameters() == params
    assert str(e).startswith(f"[{condition}] "), str(e)
    # The base classes callers already catch.
    assert isinstance(e, ValueError if exc_type is PySparkValueError else TypeError)


def test_checks_accept_good_values():
    assert _checks.txn(("app", 0)) == ("app", 0)
    assert _checks.txn(["app", 2**63 - 1]) == ("app", 2**63 - 1)
    assert _checks.txn(None) is None
    assert _checks.string_map("options", {"a": True, "b": 1, "c": 1.5, "d": "x"}) == {
        "a": "true", "b": "1", "c": "1.5", "d": "x"}
    assert _checks.partition_columns("day") == ["day"]
    assert _checks.partition_columns(("a", "b")) == ["a", "b"]
    assert _checks.partition_columns(None) == []


def test_connect_dataframe_is_required():
    import pandas as pd

    e = _raises(PySparkTypeError, "NOT_EXPECTED_TYPE", filecommit.write, pd.DataFrame({"a": [1]}), "/tmp/x")
    assert e.getMessageParameters()["arg_name"] == "df"
    assert e.getMessageParameters()["arg_type"] == "DataFrame"


def test_local_session_arguments_are_checked_before_a_server_starts(monkeypatch):
    def no_server(*args, **kwargs):
        raise AssertionError("no server may start for invalid arguments")

    monkeypatch.setattr(_connect, "start_local_server", no_server)
    _raises(PySparkValueError, "VALUE_NOT_NON_EMPTY_STR", filecommit.local_session, master="")
    _raises(PySparkTypeError, "NOT_EXPECTED_TYPE", filecommit.local_session, conf=["a"])
    _raises(PySparkTypeError, "NOT_EXPECTED_TYPE", filecommit.local_session, port="15002")
    _raises(PySparkValueError, "NEGATIVE_VALUE", filecommit.local_session, port=-1)
    _raises(PySparkValueError, "VALUE_OUT_OF_BOUNDS", filecommit.local_session, port=65536)


# ------------------------------------------------------------------ pyspark version guard, typing

def test_pyspark_version_guard_accepts_the_supported_series_only():
    _connect.check_pyspark_version()  # the installed one is supported (the package imported)
    for version in ("4.1.0", "4.1.3", "4.2.0", "4.3.0", "4.3.1", "4.3.0.dev0"):
        _connect.check_pyspark_version(version)
    for version in ("4.0.4", "4.4.0", "3.5.9", "5.0.0", "41.0"):
        with pytest.raises(ImportError) as e:
            _connect.check_pyspark_version(version)
        message = str(e.value)
        assert f"pyspark {version} is installed" in message
        assert f"pyspark[connect]{_connect.SUPPORTED_PYSPARK_RANGE}" in message
        assert f"pyspark-client{_connect.SUPPORTED_PYSPARK_RANGE}" in message


def test_local_session_refuses_the_connect_only_pyspark_client(monkeypatch):
    # pyspark-client has no pyspark.core (no JVM, no jars): local_session says so before starting anything.
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "pyspark.core" else real(n, *a))
    with pytest.raises(ImportError, match="pyspark-client"):
        filecommit.local_session()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_pyspark_range_matches_the_supported_series():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pins = [d for d in project["project"]["dependencies"] if d.startswith("pyspark")]
    assert pins == [f"pyspark[connect]{_connect.SUPPORTED_PYSPARK_RANGE}"]
    low, high = _connect.SUPPORTED_PYSPARK_SERIES[0], _connect.SUPPORTED_PYSPARK_SERIES[-1]
    major, minor = high.split(".")
    assert _connect.SUPPORTED_PYSPARK_RANGE == f">={low},<{major}.{int(minor) + 1}"
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["filecommit"]


def test_package_is_marked_typed():
    assert (Path(filecommit.__file__).parent / "py.typed").is_file()


def test_public_functions_are_annotated_and_documented():
    import inspect
    import typing

    for module, name in (
        (filecommit, "write"), (filecommit, "write_batch"), (filecommit, "set_table_properties"),
        (filecommit, "local_session"), (filecommit.server, "find_plugin_jar"),
    ):
        fn = getattr(module, name)
        hints = typing.get_type_hints(fn, include_extras=False, localns=_type_namespace())
        params = [p for p in inspect.signature(fn).parameters]
        assert set(params) | {"return"} == set(hints), (name, params, hints)
        doc = inspect.getdoc(fn) or ""
        assert "Raises:" in doc and "Returns:" in doc, name
    hints = typing.get_type_hints(filecommit.write, localns=_type_namespace())
    assert typing.get_args(hints["mode"]) == ("append", "overwrite", "error", "errorifexists", "ignore")
    assert hints["df"].__module__ == "pyspark.sql.connect.dataframe"
    spark_hint = typing.get_type_hints(filecommit.set_table_properties, localns=_type_namespace())["spark"]
    assert spark_hint.__module__ == "pyspark.sql.connect.session"


def _type_namespace():
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.session import SparkSession

    return {"DataFrame": DataFrame, "SparkSession": SparkSession}


# ------------------------------------------------------------------ through the public functions

@pytest.mark.slow
@pytest.mark.parametrize(
    "kwargs, exc_type, condition",
    [
        ({"mode": "upsert"}, PySparkValueError, "VALUE_NOT_ALLOWED"),
        ({"mode": None}, PySparkValueError, "VALUE_NOT_ALLOWED"),
        ({"partition_by": [""]}, PySparkValueError, "VALUE_NOT_NON_EMPTY_STR"),
        ({"options": {"a": [1]}}, PySparkTypeError, "NOT_EXPECTED_TYPE"),
        ({"table_properties": "delta.appendOnly=true"}, PySparkTypeError, "NOT_EXPECTED_TYPE"),
        ({"change_data": "true"}, PySparkTypeError, "NOT_EXPECTED_TYPE"),
        ({"txn": "app-1"}, PySparkTypeError, "NOT_EXPECTED_TYPE"),
        ({"txn": ("", 0)}, PySparkValueError, "VALUE_NOT_NON_EMPTY_STR"),
        ({"txn": ("app", False)}, PySparkTypeError, "NOT_EXPECTED_TYPE"),
        ({"txn": ("app", -1)}, PySparkValueError, "NEGATIVE_VALUE"),
        ({"txn": ("app", 2**63)}, PySparkValueError, "VALUE_OUT_OF_BOUNDS"),
    ],
)
def test_write_refuses_bad_arguments_before_sending(spark, table_path, kwargs, exc_type, condition):
    _raises(exc_type, condition, filecommit.write, spark.range(1), table_path, **kwargs)
    assert not os.path.exists(table_path)


@pytest.mark.slow
def test_write_checks_the_path_first(spark):
    e = _raises(PySparkValueError, "VALUE_NOT_NON_EMPTY_STR", filecommit.write, spark.range(1), "   ")
    assert e.getMessageParameters() == {"arg_name": "path", "arg_value": "   "}


@pytest.mark.slow
def test_set_table_properties_refuses_bad_arguments_before_sending(spark, table_path):
    filecommit.write(spark.range(1), table_path)
    cases = [
        (("",  {"a": "b"}), {}, PySparkValueError, "VALUE_NOT_NON_EMPTY_STR"),
        ((table_path, {}), {}, PySparkValueError, "CANNOT_BE_EMPTY"),
        ((table_path, None), {}, PySparkValueError, "CANNOT_BE_EMPTY"),
        ((table_path, ["x"]), {}, PySparkTypeError, "NOT_EXPECTED_TYPE"),
        ((table_path, {"delta.appendOnly": "true"}), {"txn": ("app", "1")}, PySparkTypeError, "NOT_EXPECTED_TYPE"),
        ((table_path, {"delta.appendOnly": "true"}), {"txn": (None, 1)}, PySparkValueError,
         "VALUE_NOT_NON_EMPTY_STR"),
        ((table_path, {"delta.appendOnly": "true"}), {"txn": ("app", -5)}, PySparkValueError, "NEGATIVE_VALUE"),
    ]
    for args, kwargs, exc_type, condition in cases:
        _raises(exc_type, condition, filecommit.set_table_properties, spark, *args, **kwargs)
    # (the version's checksum file, written after the commit in the background, may be there too)
    assert sorted(f for f in os.listdir(os.path.join(table_path, "_delta_log")) if not f.endswith(".crc")) == [
        "00000000000000000000.json"]


@pytest.mark.slow
def test_write_batch_refuses_bad_arguments_before_sending(spark, table_path):
    df = spark.range(1)
    _raises(PySparkTypeError, "NOT_EXPECTED_TYPE", filecommit.write_batch, df, table_path, batch_id="0")
    _raises(PySparkValueError, "NEGATIVE_VALUE", filecommit.write_batch, df, table_path, batch_id=-1)
    _raises(PySparkValueError, "VALUE_NOT_NON_EMPTY_STR", filecommit.write_batch, df, table_path, batch_id=0,
            partition_by=[None])
    _raises(PySparkTypeError, "NOT_EXPECTED_TYPE", filecommit.write_batch, df, table_path, batch_id=0,
            options={"retention": object()})
    assert not os.path.exists(table_path)


@pytest.mark.slow
def test_txn_is_sent_in_the_contract_field(spark, table_path):
    from filecommit.writer import build_write_command

    command = build_write_command(spark.range(1), table_path, txn=("app", 3))
    assert command.HasField("txn")
    assert (command.txn.app_id, command.txn.version) == ("app", 3)
    assert not build_write_command(spark.range(1), table_path).HasField("txn")


def test_history_checks_its_arguments_before_reading():
    _raises(PySparkValueError, "VALUE_NOT_NON_EMPTY_STR", filecommit.history, None, "")
    _raises(PySparkValueError, "NEGATIVE_VALUE", filecommit.history, None, "/t", limit=-1)
    _raises(PySparkTypeError, "NOT_EXPECTED_TYPE", filecommit.history, None, "/t", limit="2")
