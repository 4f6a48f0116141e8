"""Extract the Spark Connect ``.proto`` files that the pinned pyspark wheel's spark-connect jar ships.

The contract imports ``spark/connect/*.proto``; buf (``buf.yaml``) reads them as a second module of
its workspace from ``.build/spark-connect-proto``. Taking them from the jar of the Spark the server
runs keeps the Go stubs (``client/go``) and the Python ones (``proto/gen_python.py``) on the same
Spark Connect protocol as the server.

Usage: ``python proto/spark_protos.py DEST`` replaces ``DEST/spark/connect/*.proto`` and prints how
many files it wrote. Exits non-zero when pyspark or its spark-connect jar is missing.
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_python import _spark_connect_jar  # noqa: E402


def extract(dest: Path) -> int:
    """Write every ``spark/connect/*.proto`` of the jar under ``dest``; return the number of files."""
    target = dest / "spark" / "connect"
    if target.exists():
        shutil.rmtree(target)
    count = 0
    with zipfile.ZipFile(_spark_connect_jar()) as jar:
        for name in jar.namelist():
            if name.startswith("spark/connect/") and name.endswith(".proto"):
                jar.extract(name, dest)
                count += 1
    if count == 0:
        raise SystemExit("no spark/connect/*.proto in the spark-connect jar")
    return count


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: spark_protos.py DEST")
    n = extract(Path(sys.argv[1]))
    print(f"{n} Spark Connect proto file(s) in {sys.argv[1]}")
