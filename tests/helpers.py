"""Test helpers: independent readers (delta-rs, raw log JSON, pyarrow) and canonical row order."""

from __future__ import annotations

import glob
import json
import os
from typing import Dict, List

import pandas as pd


def second_session(spark):
    """An independent Spark Connect client session on the same server as ``spark``.

    ``$FILECOMMIT_REMOTE`` when the suite runs against an existing server (it may carry a token),
    else the URL of the server ``spark`` is connected to (the embedded one). The caller stops it.
    """
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    from filecommit import _connect

    url = os.environ.get("FILECOMMIT_REMOTE") or _connect.server_url(spark)
    return RemoteSparkSession.builder.remote(url).create()


def delta_rows(path: str, columns=None, version=None) -> pd.DataFrame:
    """The table's rows as read by delta-rs, in canonical order."""
    from deltalake import DeltaTable

    dt = DeltaTable(path, version=version) if version is not None else DeltaTable(path)
    return canonical(dt.to_pandas(), columns)


def canonical(df: pd.DataFrame, columns=None) -> pd.DataFrame:
    """Rows sorted by all columns with nulls as None and numbers as float, for exact comparison."""
    cols = list(columns) if columns is not None else sorted(df.columns)
    out = df[cols].copy()
    for c in cols:
        if pd.api.types.is_numeric_dtype(out[c]) and not pd.api.types.is_bool_dtype(out[c]):
            out[c] = out[c].astype("float64")
        else:
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    key = [out[c].map(lambda v: (v is None, "" if v is None else v)) for c in cols]
    order = pd.DataFrame({i: k for i, k in enumerate(key)}).sort_values(list(range(len(cols)))).index
    return out.loc[order].reset_index(drop=True)


def log_actions(path: str) -> Dict[int, List[dict]]:
    """Raw ``_delta_log`` commits: version -> list of action dicts, parsed with the json module."""
    out = {}
    for f in sorted(glob.glob(os.path.join(path, "_delta_log", "*.json"))):
        name = os.path.basename(f)
        if name.startswith("."):
            continue
        with open(f) as fh:
            out[int(name.split(".")[0])] = [json.loads(line) for line in fh if line.strip()]
    return out


def adds_in_log(path: str, version: int) -> List[dict]:
    """The ``add`` actions of one commit."""
    return [a["add"] for a in log_actions(path)[version] if "add" in a]
