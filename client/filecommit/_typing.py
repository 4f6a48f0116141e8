"""Type aliases of the public signatures, in one place (no runtime dependency on pyspark)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal, Union

if TYPE_CHECKING:
    from pyspark.sql.column import Column
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession
    from pyspark.sql.session import SparkSession as ClassicSparkSession

SaveMode = Literal["append", "overwrite", "error", "errorifexists", "ignore"]
"""Spark's save modes (``DataFrameWriter.mode``; case-insensitive at run time): what a write does
when the table exists."""

WriteTxn = tuple[str, int]
"""An idempotent write's transaction identifier ``(app_id, version)``: Delta's ``txn`` action
(PROTOCOL.md "Transaction Identifiers"), ``version`` in [0, 2**63 - 1]."""

ColumnOrSql = Union[str, "Column"]
"""A SQL expression string (``"id > 5"``) or a Spark Connect column (``F.col("id") > 5``)."""

PartitionBy = str | Iterable[str] | None
"""Partition column names in directory order; one str is one column, None is none."""

StrMap = Mapping[str, object]
"""Options or properties sent as str -> str: values str, int, float or bool (bools as
"true" / "false", numbers with ``str``)."""

AnySparkSession = Union["ConnectSparkSession", "ClassicSparkSession"]
"""A Spark Connect session as user code sees it: ``SparkSession.builder.remote(...).getOrCreate()`` is
typed as pyspark's classic ``pyspark.sql.SparkSession``, :func:`filecommit.local_session` as the
Connect one; both are accepted (at run time it must be a Connect session)."""
