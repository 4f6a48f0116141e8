"""Generate (or check) the Python modules of the filecommit contract.

The generated files ``client/filecommit/proto/v1/<name>_pb2.py`` are checked in. They are produced
by the pinned generator ``grpcio-tools==1.76.0`` (protoc 31.1, runtime protobuf >= 6.31.1) from
``proto/filecommit/v1/<name>.proto``; the ``spark/connect/*.proto`` files it imports are read
from the spark-connect jar that the pinned pyspark wheel ships, and the generated import is
rewritten to pyspark's own ``pyspark.sql.connect.proto`` modules (the generated Spark Connect
messages the pyspark client itself uses).

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
SOURCES = sorted(p.relative_to(ROOT / "proto").as_posix() for p in (ROOT / "proto" / "filecommit" / "v1").glob("*.proto"))
TARGET_DIR = ROOT / "client" / "filecommit" / "proto" / "v1"


def _spark_connect_jar() -> str:
    import pyspark

    jars = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "spark-connect_*.jar"))
    if not jars:
        raise SystemExit("spark-connect jar not found in the installed pyspark")
    return jars[0]


def generate() -> dict:
    """Run protoc and return {target path: generated text} (imports rewritten)."""
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
            ["protoc", f"-I{ROOT / 'proto'}", f"-I{includes}", f"-I{well_known}", f"--python_out={out}", *SOURCES]
        )
        if rc != 0:
            raise SystemExit(f"protoc failed with exit code {rc}")
        result = {}
        for source in SOURCES:
            name = Path(source).stem + "_pb2.py"
            text = (out / "filecommit" / "v1" / name).read_text()
            text = text.replace("from spark.connect import", "from pyspark.sql.connect.proto import")
            text = text.replace("from filecommit.v1 import", "from filecommit.proto.v1 import")
            result[TARGET_DIR / name] = text
    return result


def main(argv: list[str]) -> int:
    generated = generate()
    if "--check" in argv:
        stale = [t for t, text in generated.items() if not t.exists() or t.read_text() != text]
        extra = set(TARGET_DIR.glob("*_pb2.py")) - set(generated)
        for t in stale + sorted(extra):
            print(f"{t.relative_to(ROOT)} is stale or has no .proto: run `make proto`", file=sys.stderr)
        if stale or extra:
            return 1
        print(f"{len(generated)} generated module(s) up to date")
        return 0
    TARGET_DIR.mkdir(parents=True, exist_ok=True)
    for target, text in generated.items():
        target.write_text(text)
        print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
