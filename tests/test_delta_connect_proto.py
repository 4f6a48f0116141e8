"""Delta Connect's messages as ``proto/delta/connect/*.proto`` state them are the messages of the
delta-spark wheel (the descriptors its ``delta.connect.proto`` modules ship): the same files, package,
imports, messages, fields (name, number, type, label, message or enum type, oneof, ``optional``),
nested types, map entries and enums (declaration order aside, which the wire does not see). Our Java classes are generated from these files, so what the
server parses cannot drift from what delta-spark's ``DeltaTable`` sends. Only the Java package
differs (ours is filecommit's). No server: protoc and the installed wheel only.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parent.parent
FILES = ["delta/connect/base.proto", "delta/connect/relations.proto", "delta/connect/commands.proto"]


def _ours(tmp_path) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Our files compiled by protoc (grpcio-tools), Spark Connect's imports from pyspark's jar."""
    import glob
    import os

    import pyspark
    from grpc_tools import protoc

    includes = tmp_path / "include"
    jar = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "spark-connect_*.jar"))[0]
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.startswith("spark/connect/") and name.endswith(".proto"):
                z.extract(name, includes)
    out = tmp_path / "set.binpb"
    well_known = Path(protoc.__file__).parent / "_proto"
    rc = protoc.main(["protoc", f"-I{ROOT / 'proto'}", f"-I{includes}", f"-I{well_known}",
                      f"--descriptor_set_out={out}", *FILES])
    assert rc == 0, "protoc could not compile proto/delta/connect"
    fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return {f.name: f for f in fds.file}


def _theirs() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """The delta-spark wheel's descriptors (``pip install --no-deps delta-spark``, the Makefile's setup)."""
    from delta.connect.proto import base_pb2, commands_pb2, relations_pb2

    out = {}
    for module in (base_pb2, relations_pb2, commands_pb2):
        fd = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(fd)
        out[fd.name] = fd
    return out


def _field(f: descriptor_pb2.FieldDescriptorProto, oneofs: list[str]) -> tuple:
    return (f.name, f.number, descriptor_pb2.FieldDescriptorProto.Type.Name(f.type),
            descriptor_pb2.FieldDescriptorProto.Label.Name(f.label), f.type_name,
            oneofs[f.oneof_index] if f.HasField("oneof_index") else None, f.proto3_optional)


def _message(m: descriptor_pb2.DescriptorProto, prefix: str, out: dict) -> None:
    """Every message (nested ones by full name) -> its comparable parts."""
    name = f"{prefix}.{m.name}"
    oneofs = [o.name for o in m.oneof_decl]
    out[name] = {
        "fields": sorted((_field(f, oneofs) for f in m.field), key=lambda f: f[1]),
        "oneofs": oneofs,
        "map_entry": m.options.map_entry,
        "nested": sorted(n.name for n in m.nested_type),
        "enums": {e.name: [(v.name, v.number) for v in e.value] for e in m.enum_type},
        "reserved": [(r.start, r.end) for r in m.reserved_range] + list(m.reserved_name),
    }
    for n in m.nested_type:
        _message(n, name, out)


def _flat(fd: descriptor_pb2.FileDescriptorProto) -> dict:
    out: dict = {}
    for m in fd.message_type:
        _message(m, "." + fd.package, out)
    return out


def test_the_files_are_the_wheels(tmp_path):
    ours, theirs = _ours(tmp_path), _theirs()
    assert sorted(ours) == sorted(theirs) == sorted(FILES)
    for name in FILES:
        o, t = ours[name], theirs[name]
        assert (o.package, o.syntax, list(o.dependency)) == (t.package, t.syntax, list(t.dependency)), name
        assert [e.name for e in o.enum_type] == [e.name for e in t.enum_type], name
        assert not o.service and not t.service


def test_every_message_and_field_is_the_wheels(tmp_path):
    ours, theirs = _ours(tmp_path), _theirs()
    for name in FILES:
        o, t = _flat(ours[name]), _flat(theirs[name])
        assert sorted(o) == sorted(t), f"{name}: messages differ"
        for message in t:
            for part in ("oneofs", "map_entry", "nested", "enums", "reserved"):
                assert o[message][part] == t[message][part], f"{message}: {part} differ"
            assert len(o[message]["fields"]) == len(t[message]["fields"]), f"{message}: field count differs"
            for ours_field, their_field in zip(o[message]["fields"], t[message]["fields"], strict=True):
                assert ours_field == their_field, f"{message}: field differs"


def test_the_comparison_sees_a_difference(tmp_path):
    """The field comparison is not vacuous: a changed number, type or name is a difference."""
    theirs = _flat(_theirs()["delta/connect/relations.proto"])
    field = descriptor_pb2.FieldDescriptorProto(name="path", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                                                label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    assert _field(field, []) not in theirs[".delta.connect.IsDeltaTable"]["fields"]
    field.number = 1
    assert _field(field, []) in theirs[".delta.connect.IsDeltaTable"]["fields"]


def test_only_the_java_package_is_ours(tmp_path):
    ours, theirs = _ours(tmp_path), _theirs()
    for name in FILES:
        assert ours[name].options.java_package == "io.filecommit.proto.delta.connect"
        assert theirs[name].options.java_package == "io.delta.connect.proto"
        assert ours[name].options.java_multiple_files == theirs[name].options.java_multiple_files
