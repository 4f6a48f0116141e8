"""Generate (or check) the Python module of the filecommit contract.

The generated file ``client/filecommit/proto/v1/commands_pb2.py`` is checked in. It is produced by
the pinned generator ``grpcio-tools==1.76.0`` (protoc 31.1, runtime protobuf >= 6.31.1) from
``proto/filecommit/v1/commands.proto``; the ``spark/connect/*.proto`` files it imports are read
from the spark-connect jar that the pinned pyspark wheel ships, and the generated import is
rewritten to pyspark's own ``pyspark.sql.connect.proto`` modules (reference
spark-connect-plugins.md, "The Python side").

Usage: ``python proto/gen_python.py`` writes the file; ``--check`` exits 1 if it is stale.
"""

from __future__ import annotations

import glob
import os
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "filecommit/v1/commands.proto"
TARGET = ROOT / "client" / "filecommit" / "proto" / "v1" / "commands_pb2.py"


def _spark_connect_jar() -> str:
    import pyspark

    jars = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "spark-connect_*.jar"))
    if not jars:
        raise SystemExit("spark-connect jar not found in the installed pyspark")
    return jars[0]


def generate() -> str:
    """Run protoc and return the generated module's text (imports rewritten)."""
    from grpc_tools import protoc

    with tempfile.TemporaryDirectory() as tmp:
        includes = Path(tmp) / "include"
        out = Path(tmp) / "out"
        out.mkdir()
        with zipfile.ZipFile(_spark_connect_jar()) as jar:
            for name in jar.namelist():
                if name.startswith("spark/connect/") and name.endswith(".proto"):
                    jar.extract(name, includes)
        well_known = str(Path(protoc.__file__).parent / "_proto")
        rc = protoc.main(
            ["protoc", f"-I{ROOT / 'proto'}", f"-I{includes}", f"-I{well_known}", f"--python_out={out}", SOURCE]
        )
        if rc != 0:
            raise SystemExit(f"protoc failed with exit code {rc}")
        text = (out / "filecommit" / "v1" / "commands_pb2.py").read_text()
    return text.replace("from spark.connect import", "from pyspark.sql.connect.proto import")


def main(argv: list[str]) -> int:
    text = generate()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run `make proto`", file=sys.stderr)
            return 1
        print(f"{TARGET.relative_to(ROOT)} is up to date")
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
