"""Type aliases of the public signatures, in one place (no runtime dependency on pyspark)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal, Union

if TYPE_CHECKING:
    from pyspark.sql.column import Column

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
