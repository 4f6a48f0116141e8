"""``filecommit.errors`` against the server's catalogue, the README and pyspark's registry.

Pure Python, no server: the Java enum ``ErrorClass`` is read as text (found by name under
server-plugin/src/main, wherever its package lives), so a class added, renamed or dropped on one
side without the other fails here.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from filecommit import errors

ROOT = Path(__file__).resolve().parent.parent
ERRORS_PY = ROOT / "client" / "filecommit" / "errors.py"

GROUPS = ("CONCURRENCY", "TABLE_RULES", "TABLE_SCHEMA_OPTIONS", "ROW_LEVEL", "FILECOMMIT", "CLIENT")

_ENUM_CONSTANT = re.compile(r'^\s*([A-Z][A-Z0-9_]*)\s*\(\s*"([0-9A-Z]{5})"', re.MULTILINE)


def _java_catalogue() -> dict[str, str]:
    """Enum constant -> SQLSTATE of every ``errors/ErrorClass.java`` under server-plugin/src/main."""
    files = sorted((ROOT / "server-plugin" / "src" / "main").glob("**/errors/ErrorClass.java"))
    assert files, "no errors/ErrorClass.java under server-plugin/src/main"
    out: dict[str, str] = {}
    for f in files:
        text = f.read_text()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)  # Javadoc and block comments
        text = re.sub(r"//[^\n]*", "", text)
        out.update(_ENUM_CONSTANT.findall(text))
    assert out, f"no enum constants found in {files}"
    return out


def _constants() -> dict[str, str]:
    """errors.py's class constants (upper-case module-level str whose value is its name) -> docstring."""
    tree = ast.parse(ERRORS_PY.read_text())
    out: dict[str, str] = {}
    body = tree.body
    for stmt, nxt in zip(body, [*body[1:], None], strict=True):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        value = stmt.value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        name = stmt.targets[0].id
        doc = ""
        if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str):
            doc = nxt.value.value
        out[name] = doc
    return out


def _sqlstate(doc: str) -> str | None:
    m = re.match(r"SQLSTATE (\w+)[.;]", doc)
    assert m, f"docstring does not start with its SQLSTATE: {doc!r}"
    return None if m.group(1) == "none" else m.group(1)


def test_constants_are_their_names_and_each_is_in_one_group():
    constants = _constants()
    assert constants, "no constants parsed from errors.py"
    for name in constants:
        assert getattr(errors, name) == name, name
    groups = {g: getattr(errors, g) for g in GROUPS}
    for name in constants:
        owners = [g for g, members in groups.items() if name in members]
        assert len(owners) == 1, (name, owners)
    for g, members in groups.items():
        assert members <= set(constants), (g, members - set(constants))
    assert errors.SERVER == frozenset().union(*(groups[g] for g in GROUPS if g != "CLIENT"))
    assert not errors.SERVER & errors.CLIENT


def test_every_constant_is_documented_with_its_sqlstate():
    for name, doc in _constants().items():
        assert doc, f"{name} has no docstring"
        _sqlstate(doc)
        assert len(doc.split(".", 1)[1].strip()) > 10, f"{name}: say when it is raised"


def test_server_classes_match_the_java_catalogue():
    java = _java_catalogue()
    missing = set(java) - errors.SERVER
    assert not missing, f"server classes missing from filecommit/errors.py: {sorted(missing)}"
    unknown = errors.SERVER - set(java)
    assert not unknown, f"errors.py names server classes the Java catalogue lacks: {sorted(unknown)}"
    assert not errors.CLIENT & set(java), "a client-side class is in the server catalogue"
    docs = _constants()
    for name, state in java.items():
        assert _sqlstate(docs[name]) == state, f"{name}: SQLSTATE {state} in Java"


def test_errors_page_is_generated_from_the_java_catalogue():
    """The errors page's table is generated from ErrorClass.java at every docs build
    (docs/hooks/reference.py, run by `make docs`): every class with its SQLSTATE, none kept by hand."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "docs" / "hooks" / "reference.py")
    assert spec and spec.loader
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    assert reference.ERRORS_MARKER in (ROOT / "docs" / "errors.md").read_text()
    page = reference.errors_markdown()
    rows = re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \| `([0-9A-Z]{5})` \| (.+) \|$", page, flags=re.MULTILINE)
    assert dict((name, state) for name, state, _ in rows) == _java_catalogue()
    assert all(meaning.strip() for _, _, meaning in rows), "an error class without its meaning"


def test_client_classes_are_the_ones_the_client_raises():
    raised = set()
    package = ERRORS_PY.parent
    for f in package.rglob("*.py"):
        if "proto" in f.relative_to(package).parts:
            continue
        raised.update(re.findall(r'errorClass=(?:errors\.)?"?([A-Z][A-Z0-9_]*)', f.read_text()))
    assert raised, "no errorClass= found in the client"
    assert raised == set(errors.CLIENT), (sorted(raised), sorted(errors.CLIENT))


def test_client_classes_exist_in_pyspark_with_their_sqlstate():
    import pyspark.errors

    registry = json.loads((Path(pyspark.errors.__file__).parent / "error-conditions.json").read_text())
    docs = _constants()
    for name in errors.CLIENT:
        assert name in registry, f"{name} is not a pyspark error class"
        assert _sqlstate(docs[name]) == registry[name].get("sqlState"), name


def test_delta_classes_are_deltas_with_its_sqlstate():
    """Every ``DELTA_*`` class of the Java catalogue is a class of Delta Lake 4.4
    (``error/delta-error-classes.json`` in the delta-spark jar of the Spark + Delta reader, ``make
    delta-reader``) with Delta's SQLSTATE: no name or state of ours passes as Delta's."""
    import zipfile

    jars = sorted((ROOT / ".venv-delta" / "jars").glob("delta-spark_*.jar"))
    assert jars, "no delta-spark jar under .venv-delta/jars: run `make delta-reader`"
    with zipfile.ZipFile(jars[-1]) as jar:
        delta = json.loads(jar.read("error/delta-error-classes.json"))
    ours = {name: state for name, state in _java_catalogue().items() if name.startswith("DELTA_")}
    assert len(ours) > 50
    unknown = sorted(set(ours) - set(delta))
    assert not unknown, f"DELTA_* classes Delta 4.4 does not have: {unknown}"
    wrong = {name: (state, delta[name].get("sqlState")) for name, state in ours.items()
             if delta[name].get("sqlState") != state}
    assert not wrong, f"SQLSTATEs that differ from Delta's (ours, Delta's): {wrong}"
