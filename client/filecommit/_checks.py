"""Argument checks of the public functions, raising pyspark's own error classes.

Every check raises ``pyspark.errors.PySparkValueError`` (a ``ValueError``) or
``pyspark.errors.PySparkTypeError`` (a ``TypeError``) with a class of pyspark's registry
(``pyspark/errors/error-conditions.json``) and its message parameters, as pyspark's own argument
checks do (e.g. ``DataStreamWriter.queryName``). The classes are :data:`filecommit.errors.CLIENT`.
pyspark turns an unknown class into a plain ``ValueError`` and a missing parameter into an
``AssertionError``, so tests/test_client_checks.py raises each one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sized
from typing import NoReturn, TypeVar

from pyspark.errors import PySparkTypeError, PySparkValueError

from filecommit import errors
from filecommit._typing import PartitionBy, StrMap, WriteTxn

INT64_MAX = 2**63 - 1
"""Largest value of a protobuf ``int64`` field (batch ids, txn versions)."""

_SizedT = TypeVar("_SizedT", bound=Sized)


def type_error(arg_name: str, expected_type: str, value: object) -> NoReturn:
    """Raise ``PySparkTypeError`` ``NOT_EXPECTED_TYPE`` for ``value`` given as ``arg_name``."""
    raise PySparkTypeError(
        errorClass=errors.NOT_EXPECTED_TYPE,
        messageParameters={"arg_name": arg_name, "expected_type": expected_type, "arg_type": type(value).__name__},
    )


def non_empty_str(arg_name: str, value: object) -> str:
    """``value`` if it is a str with a non-blank character, else ``VALUE_NOT_NON_EMPTY_STR``.

    Like pyspark's own checks (e.g. ``DataStreamWriter.queryName``), a value that is not a str at
    all is refused with the same ValueError class.
    """
    if not isinstance(value, str) or not value.strip():
        raise PySparkValueError(
            errorClass=errors.VALUE_NOT_NON_EMPTY_STR,
            messageParameters={"arg_name": arg_name, "arg_value": str(value)},
        )
    return value


def check_path(path: object) -> str:
    """A table or sink path: a non-empty str (``VALUE_NOT_NON_EMPTY_STR`` otherwise)."""
    return non_empty_str("path", path)


def path_or_table(path: object, table: object) -> tuple[str, str]:
    """The ``(path, table)`` wire fields of a command given a table root or a catalog table name.

    Exactly one of them: ``table`` (a non-empty str) names a table of the server's catalog, else
    ``path`` is checked as :func:`check_path`; an unset one is ``""``.

    Raises:
        pyspark.errors.PySparkValueError: ``CANNOT_SET_TOGETHER`` when both are given,
            ``VALUE_NOT_NON_EMPTY_STR`` for an empty (or missing) path or an empty table name.
        pyspark.errors.PySparkTypeError: ``NOT_EXPECTED_TYPE`` for a non-str path or table.
    """
    if table is None:
        return check_path(path), ""
    name = non_empty_str("table", table)
    if path is not None:
        raise PySparkValueError(errorClass="CANNOT_SET_TOGETHER", messageParameters={"arg_list": "path, table"})
    return "", name


def flag(arg_name: str, value: object) -> bool:
    """A bool argument (True or False exactly, not a truthy value): ``NOT_EXPECTED_TYPE`` otherwise."""
    if not isinstance(value, bool):
        type_error(arg_name, "bool", value)
    return value


def string_map(arg_name: str, value: StrMap | None) -> dict[str, str]:
    """A str -> str map for the wire (options, table properties); ``None`` is empty.

    Values may be str, int, float or bool; bools are written "true" / "false", numbers with str().

    Raises:
        PySparkTypeError: ``NOT_EXPECTED_TYPE`` for a non-mapping, a non-str key
            (arg_name ``<name> key``) or a value of another type (arg_name ``<name>[<key>]``).
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        type_error(arg_name, "a mapping of str to str", value)
    out = {}
    for k, v in value.items():
        if not isinstance(k, str):
            type_error(f"{arg_name} key", "str", k)
        if isinstance(v, bool):
            v = "true" if v else "false"
        if not isinstance(v, (str, int, float)):
            type_error(f"{arg_name}[{k!r}]", "str (or int, float, bool)", v)
        out[k] = str(v)
    return out


def partition_columns(partition_by: PartitionBy, name: str = "partition_by") -> list[str]:
    """Column names in order (partition columns, clustering columns); one str is one column, ``None`` is none.

    ``name`` is the argument's name in errors.

    Raises:
        PySparkTypeError: ``NOT_EXPECTED_TYPE`` when ``partition_by`` is not iterable.
        PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for a name that is not a non-empty str.
    """
    if partition_by is None:
        return []
    if isinstance(partition_by, str):
        return [non_empty_str(name, partition_by)]
    if not isinstance(partition_by, Iterable):
        type_error(name, "str or an iterable of str", partition_by)
    return [non_empty_str(name, c) for c in partition_by]


def int_in_range(arg_name: str, value: object, lower: int, upper: int) -> int:
    """An int in [lower, upper] (a bool is not an int here).

    Raises:
        PySparkTypeError: ``NOT_EXPECTED_TYPE`` for a non-int or a bool.
        PySparkValueError: ``NEGATIVE_VALUE`` below 0 when ``lower`` is 0, else
            ``VALUE_OUT_OF_BOUNDS`` outside the range.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        type_error(arg_name, "int", value)
    if value < 0 <= lower:
        raise PySparkValueError(
            errorClass=errors.NEGATIVE_VALUE, messageParameters={"arg_name": arg_name, "arg_value": str(value)}
        )
    if not lower <= value <= upper:
        raise PySparkValueError(
            errorClass=errors.VALUE_OUT_OF_BOUNDS,
            messageParameters={
                "arg_name": arg_name,
                "lower_bound": str(lower),
                "upper_bound": str(upper),
                "actual": str(value),
            },
        )
    return value


def int64_at_least_zero(arg_name: str, value: object) -> int:
    """An int in [0, 2**63 - 1], a protobuf ``int64`` that is not negative (see :func:`int_in_range`)."""
    return int_in_range(arg_name, value, 0, INT64_MAX)


def txn(value: object) -> WriteTxn | None:
    """An idempotent write's ``(app_id, version)`` pair, or ``None``.

    A tuple (or list) of two items: ``app_id`` a non-empty str, ``version`` an int in
    [0, 2**63 - 1] (Delta's ``txn`` action: ``appId``, ``version`` as a long).

    Raises:
        PySparkTypeError: ``NOT_EXPECTED_TYPE`` when ``txn`` is not a pair, or ``version``
            (arg_name ``txn version``) is not an int (a bool is refused).
        PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for ``app_id`` (arg_name ``txn app_id``);
            ``NEGATIVE_VALUE`` / ``VALUE_OUT_OF_BOUNDS`` for ``version``.
    """
    if value is None:
        return None
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        type_error("txn", "a tuple (app_id: str, version: int)", value)
    app_id, version = value
    return non_empty_str("txn app_id", app_id), int64_at_least_zero("txn version", version)


def not_empty(item: str, value: _SizedT) -> _SizedT:
    """``value`` if it has at least one entry, else ``CANNOT_BE_EMPTY`` naming ``item``."""
    if not value:
        raise PySparkValueError(errorClass=errors.CANNOT_BE_EMPTY, messageParameters={"item": item})
    return value


def not_allowed(arg_name: str, allowed_values: str) -> NoReturn:
    """Raise ``PySparkValueError`` ``VALUE_NOT_ALLOWED`` for ``arg_name``, naming the allowed values."""
    raise PySparkValueError(
        errorClass=errors.VALUE_NOT_ALLOWED,
        messageParameters={"arg_name": arg_name, "allowed_values": allowed_values},
    )
