"""Commit conflicts as Python exception types, as Delta's Python package raises them.

The server reports a lost commit race (error classes in :data:`filecommit.errors.CONCURRENCY`) as
a Java ``ConcurrentModificationException`` of Delta's class name for it
(``io.delta.exceptions.ConcurrentAppendException``, ...), as Delta does; pyspark alone has no type
for it and raises ``UnknownException``, while delta-spark's Python package (``delta.connect``) maps
those names to its ``delta.exceptions`` types, so that ``DeltaTable`` calls over Spark Connect raise
Delta's types. Importing ``filecommit`` registers these types in pyspark's Spark
Connect error conversion (``pyspark.errors.exceptions.connect.EXCEPTION_CLASS_MAPPING``, as
delta-spark's ``delta.connect.exceptions`` registers Delta's), so a conflict arrives as the class
named after Delta's (``ConcurrentAppendException``, ...), a ``SparkConnectGrpcException`` with the
error class, SQLSTATE and message parameters. With delta-spark's Python package installed, each
also is Delta's type of the same name (``delta.connect.exceptions.ConcurrentAppendException``, a
``delta.exceptions.ConcurrentAppendException``, ...), so ``except`` clauses written for Delta catch
them, and so do ones written for filecommit whether or not ``delta`` was imported first.

Example::

    try:
        df.write.format("delta").mode("overwrite").save(path)
    except filecommit.conflicts.CommitConflict as e:
        print(e.getCondition())  # e.g. DELTA_CONCURRENT_APPEND: read the table again and retry
"""

from __future__ import annotations

import importlib
from typing import Any

import pyspark.errors.exceptions.connect as _pyspark_connect
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

from filecommit import errors

SERVER_CLASS = "io.filecommit.errors.ClientExceptions$ConcurrentModification"
"""The server's base class for commit conflicts (a ``java.util.ConcurrentModificationException``)."""

DELTA_SERVER_CLASSES = tuple(f"io.delta.exceptions.{name}" for name in (
    "DeltaConcurrentModificationException", "ConcurrentAppendException", "ConcurrentDeleteReadException",
    "ConcurrentDeleteDeleteException", "MetadataChangedException", "ProtocolChangedException",
    "ConcurrentTransactionException"))
"""The server's conflict classes named as Delta's JVM classes (most derived first in the hierarchy
Spark Connect sends), which delta-spark's ``delta.connect.exceptions`` maps to its own types."""


def _delta_base(name: str) -> tuple[type, ...]:
    """Delta's Python exception type of that name, when delta-spark's package is installed: its
    Spark Connect type (``delta.connect.exceptions``, itself a ``delta.exceptions.base`` type), else
    the base type."""
    for module in ("delta.connect.exceptions", "delta.exceptions.base"):
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if isinstance(found, type):
            return (found,)
    return ()


class CommitConflict(SparkConnectGrpcException):
    """A lost commit race: nothing was committed; the same call may succeed on a fresh snapshot."""


ConcurrentAppendException: Any = type(
    "ConcurrentAppendException", (CommitConflict, *_delta_base("ConcurrentAppendException")),
    {"__doc__": "``DELTA_CONCURRENT_APPEND``: files were added to what this write read."})
ConcurrentDeleteReadException: Any = type(
    "ConcurrentDeleteReadException", (CommitConflict, *_delta_base("ConcurrentDeleteReadException")),
    {"__doc__": "``DELTA_CONCURRENT_DELETE_READ``: a file this write read was removed."})
ConcurrentDeleteDeleteException: Any = type(
    "ConcurrentDeleteDeleteException", (CommitConflict, *_delta_base("ConcurrentDeleteDeleteException")),
    {"__doc__": "``DELTA_CONCURRENT_DELETE_DELETE``: a file this write removes was removed."})
MetadataChangedException: Any = type(
    "MetadataChangedException", (CommitConflict, *_delta_base("MetadataChangedException")),
    {"__doc__": "``DELTA_METADATA_CHANGED``: a concurrent commit changed the metadata."})
ProtocolChangedException: Any = type(
    "ProtocolChangedException", (CommitConflict, *_delta_base("ProtocolChangedException")),
    {"__doc__": "``DELTA_PROTOCOL_CHANGED``: a concurrent commit changed the protocol or created the table."})
ConcurrentTransactionException: Any = type(
    "ConcurrentTransactionException", (CommitConflict, *_delta_base("ConcurrentTransactionException")),
    {"__doc__": "``DELTA_CONCURRENT_TRANSACTION``: a concurrent commit of the same application transaction."})

BY_ERROR_CLASS: dict[str, Any] = {
    errors.DELTA_CONCURRENT_APPEND: ConcurrentAppendException,
    errors.DELTA_CONCURRENT_DELETE_READ: ConcurrentDeleteReadException,
    errors.DELTA_CONCURRENT_DELETE_DELETE: ConcurrentDeleteDeleteException,
    errors.DELTA_METADATA_CHANGED: MetadataChangedException,
    errors.DELTA_PROTOCOL_CHANGED: ProtocolChangedException,
    errors.DELTA_CONCURRENT_TRANSACTION: ConcurrentTransactionException,
}
"""Error class -> the Python type a conflict of that class is raised as."""


def _convert(message: str | None = None, errorClass: str | None = None, **kwargs: Any) -> SparkConnectGrpcException:
    """pyspark's converter calls this with its exception arguments; picks the type by error class."""
    cls = BY_ERROR_CLASS.get(errorClass or "", CommitConflict)
    return cls(message, errorClass=errorClass, **kwargs)  # type: ignore[no-any-return]


def register() -> None:
    """Registers :data:`SERVER_CLASS` and :data:`DELTA_SERVER_CLASSES` in pyspark's Spark Connect
    error conversion (idempotent). delta-spark's ``delta.connect.exceptions`` registers Delta's names
    once, when first imported; :func:`_delta_base` imported it already, so these entries, whose types
    are Delta's too, stay."""
    for name in (SERVER_CLASS, *DELTA_SERVER_CLASSES):
        _pyspark_connect.EXCEPTION_CLASS_MAPPING[name] = _convert  # type: ignore[assignment]


register()
