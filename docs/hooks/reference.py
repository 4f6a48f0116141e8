"""MkDocs hook: the generated reference pages, built from their one source at every `mkdocs build`.

- ``errors.md``: the marker ``<!-- generated: error-classes -->`` is replaced by a table of every
  constant of ``server-plugin/src/main/java/io/filecommit/errors/ErrorClass.java`` (class name,
  SQLSTATE, the constant's Javadoc as its meaning), grouped by the enum's ``//`` section comments.
- ``settings.md``: the marker ``<!-- generated: settings -->`` is replaced by a table of every
  ``spark.filecommit.*`` setting of ``server-plugin/src/main/java/io/filecommit/conf/FileCommitConf.java``
  (key, default, who may set it, type, the entry's Javadoc as its meaning).
- ``contract.md``: the marker ``<!-- generated: proto-contract -->`` is replaced by the messages,
  enums and fields of ``proto/filecommit/v1/*.proto`` with their leading ``//`` comments.

Nothing generated is checked in, so a new error class or a changed proto comment cannot leave the
site stale; a marker whose source yields nothing fails the build (``RuntimeError``).
Run as a script (``python docs/hooks/reference.py errors|settings|contract``) it prints the generated text.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ERROR_CLASS = ROOT / "server-plugin/src/main/java/io/filecommit/errors/ErrorClass.java"
SETTINGS = ROOT / "server-plugin/src/main/java/io/filecommit/conf/FileCommitConf.java"
PROTO_DIR = ROOT / "proto/filecommit/v1"
ERRORS_MARKER = "<!-- generated: error-classes -->"
CONTRACT_MARKER = "<!-- generated: proto-contract -->"
SETTINGS_MARKER = "<!-- generated: settings -->"

_MARKDOWN_SPECIAL = re.compile(r"([\\\[\]*_<>|])")


def escape(text: str) -> str:
    """Prose from a source comment as literal Markdown: special characters escaped outside `code`."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # even parts are outside backtick spans
        parts[i] = _MARKDOWN_SPECIAL.sub(r"\\\1", parts[i])
    return "`".join(parts) if len(parts) % 2 == 1 else text.replace("|", "\\|")


_CONSTANT = re.compile(r'^\s*([A-Z][A-Z0-9_]*)\s*\(\s*"([0-9A-Z]{5})"(?:,\s*ClientExceptionType\.([A-Z_]+))?')
# The exception type pyspark raises for a class: its own (second argument), else Spark's rule by SQLSTATE.
_TYPES = {"ANALYSIS": "AnalysisException", "ILLEGAL_ARGUMENT": "IllegalArgumentException",
          "UNSUPPORTED_OPERATION": "UnsupportedOperationException", "CONCURRENT_MODIFICATION": "UnknownException *",
          "RUNTIME": "UnknownException"}


def _client_type(state: str, explicit: str | None) -> str:
    if explicit:
        return _TYPES[explicit]
    if state.startswith("2D"):
        return _TYPES["CONCURRENT_MODIFICATION"]
    if state.startswith("42"):
        return _TYPES["ANALYSIS"]
    if state == "22023":
        return _TYPES["ILLEGAL_ARGUMENT"]
    if state.startswith("0A"):
        return _TYPES["UNSUPPORTED_OPERATION"]
    return _TYPES["RUNTIME"]
_SECTION = re.compile(r"^\s*//\s?(.*)$")
_JAVADOC = re.compile(r"/\*\*(.*?)\*/", re.S)


def _inline_tags(text: str) -> str:
    """``{@code x}``, ``{@literal x}``, ``{@link x}`` as `x`; braces inside them balanced, as Javadoc reads them."""
    out = []
    i = 0
    while (m := re.compile(r"\{@(?:code|literal|link|linkplain)\s+").search(text, i)) is not None:
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append("`" + text[m.end() : j - 1] + "`")
        i = j
    out.append(text[i:])
    return "".join(out)


def _javadoc_text(raw: str) -> str:
    """A Javadoc comment's text as Markdown: leading ``*`` dropped, {@code x} as `x`, one line."""
    lines = [re.sub(r"^\s*\*\s?", "", line) for line in raw.splitlines()]
    text = " ".join(line.strip() for line in lines if line.strip())
    text = _inline_tags(text)
    text = re.sub(r"</?[a-z]+>", "", text)
    return escape(text)


def error_classes(source: str) -> list[tuple[str, list[tuple[str, str, str, str]]]]:
    """Sections of the enum: (section comment, [(class, SQLSTATE, pyspark type, meaning)]) in source order."""
    body = source[source.index("enum ErrorClass") :]
    sections: list[tuple[str, list[tuple[str, str, str, str]]]] = []
    doc = ""
    pending_section: list[str] = []
    i = 0
    lines = body.splitlines()
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("/**"):
            chunk = [line]
            while "*/" not in chunk[-1]:
                i += 1
                chunk.append(lines[i])
            m = _JAVADOC.search("\n".join(chunk))
            doc = _javadoc_text(m.group(1)) if m else ""
        elif (s := _SECTION.match(line)) and not _CONSTANT.match(line):
            pending_section.append(s.group(1).strip())
        elif m := _CONSTANT.match(line):
            if pending_section or not sections:
                sections.append((" ".join(pending_section), []))
                pending_section = []
            sections[-1][1].append((m.group(1), m.group(2), _client_type(m.group(2), m.group(3)), doc))
            doc = ""
        elif line.strip().endswith(";") and sections:
            break  # end of the constants
        i += 1
    return sections


def errors_markdown() -> str:
    sections = error_classes(ERROR_CLASS.read_text(encoding="utf-8"))
    count = sum(len(rows) for _, rows in sections)
    if count == 0:
        raise RuntimeError(f"no error classes found in {ERROR_CLASS}")
    out = [f"{count} classes, generated from `ErrorClass.java` when this site was built. The pyspark type is the "
           "one `pyspark.errors.exceptions.connect` raises (`UnknownException *`: a conflict, raised as "
           "`filecommit.conflicts.*` once `filecommit` is imported).", ""]
    for title, rows in sections:
        if title:
            out += [f"### {title.rstrip('.')}", ""]
        out += ["| class | SQLSTATE | pyspark type | meaning |", "|---|---|---|---|"]
        out += [f"| `{name}` | `{state}` | `{kind}` | {meaning} |" for name, state, kind, meaning in rows]
        out.append("")
    return "\n".join(out)


_ENTRY = re.compile(r'/\*\*((?:(?!\*/).)*)\*/\s*public static final Entry (\w+) =\s*(server|session)\(\s*'
                    r'"([^"]+)",\s*"([^"]*)",\s*(null|"[^"]*")\s*\);', re.S)


def settings(source: str) -> list[tuple[str, str, str, str, str]]:
    """The registry's entries in source order: (key, default or "", scope, type, meaning)."""
    return [(m.group(4), "" if m.group(6) == "null" else m.group(6).strip('"'), m.group(3), m.group(5),
             _javadoc_text(m.group(1))) for m in _ENTRY.finditer(source)]


def settings_markdown() -> str:
    rows = settings(SETTINGS.read_text(encoding="utf-8"))
    declared = SETTINGS.read_text(encoding="utf-8").count("public static final Entry ")
    if not rows or len(rows) != declared:
        raise RuntimeError(f"{len(rows)} of {declared} entries of {SETTINGS} parsed")
    out = [f"{len(rows)} settings, generated from `FileCommitConf.java` when this site was built. *server*: the "
           "server's static configuration only; *session*: a client may set it for its own session "
           "(`spark.conf.set`), over the server's value.", "",
           "| setting | default | set by | type | meaning |", "|---|---|---|---|---|"]
    for key, default, scope, kind, meaning in rows:
        shown = f"`{default}`" if default else "unset"
        out.append(f"| `{key}` | {shown} | {scope} | {escape(kind)} | {meaning} |")
    return "\n".join(out) + "\n"


def _comment_block(lines: list[str], i: int) -> str:
    """The ``//`` comment lines directly above line ``i``, joined."""
    block: list[str] = []
    j = i - 1
    while j >= 0 and lines[j].strip().startswith("//"):
        block.insert(0, lines[j].strip()[2:].strip())
        j -= 1
    return escape(" ".join(b for b in block if b))


_DECL = re.compile(r"^\s*(message|enum|oneof)\s+(\w+)\s*\{")
_FIELD = re.compile(r"^\s*((?:optional |repeated )?[\w.<>, ]+?)\s+(\w+)\s*=\s*(\d+)\s*;")
_ENUM_VALUE = re.compile(r"^\s*([A-Z][A-Z0-9_]*)\s*=\s*(\d+)\s*;")


def proto_markdown_file(path: Path) -> str:
    """One .proto file as Markdown: its header comment, then each message / enum with a field table."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = []
    for line in lines:
        if not line.startswith("//"):
            break
        header.append(line[2:].strip())
    intro = " ".join(h if h else "\n\n" for h in header).replace(" \n\n ", "\n\n")
    out = [f"## `{path.name}`", "", "\n\n".join(escape(p) for p in intro.split("\n\n")), ""]
    stack: list[tuple[str, str]] = []  # (kind, qualified name)
    table_open = False
    for i, line in enumerate(lines):
        if m := _DECL.match(line):
            kind, name = m.groups()
            if kind == "oneof":
                stack.append((kind, stack[-1][1] if stack else name))
                continue
            qualified = ".".join([s[1] for s in stack if s[0] != "oneof"] + [name])
            stack.append((kind, qualified))
            out += ["", f"### {kind} `{qualified}`", "", _comment_block(lines, i), ""]
            table_open = False
            continue
        if line.strip() == "}" and stack:
            stack.pop()
            table_open = False
            continue
        if not stack:
            continue
        kind = stack[-1][0]
        if kind == "enum" and (v := _ENUM_VALUE.match(line)):
            if not table_open:
                out += ["| value | number | meaning |", "|---|---|---|"]
                table_open = True
            out.append(f"| `{v.group(1)}` | {v.group(2)} | {_comment_block(lines, i)} |")
        elif kind in ("message", "oneof") and (f := _FIELD.match(line)) and not line.strip().startswith("reserved"):
            if not table_open:
                out += ["| field | type | number | meaning |", "|---|---|---|---|"]
                table_open = True
            ftype = f.group(1).strip()
            if kind == "oneof":
                ftype += " (oneof)"
            out.append(f"| `{f.group(2)}` | `{ftype}` | {f.group(3)} | {_comment_block(lines, i)} |")
    return "\n".join(out) + "\n"


def contract_markdown() -> str:
    files = sorted(PROTO_DIR.glob("*.proto"))
    if not files:
        raise RuntimeError(f"no .proto files in {PROTO_DIR}")
    intro = f"Generated from `proto/filecommit/v1/` ({len(files)} files) when this site was built."
    return "\n\n".join([intro] + [proto_markdown_file(p) for p in files])


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs hook: fill the generated sections of the errors and contract pages."""
    if ERRORS_MARKER in markdown:
        markdown = markdown.replace(ERRORS_MARKER, errors_markdown())
    if CONTRACT_MARKER in markdown:
        markdown = markdown.replace(CONTRACT_MARKER, contract_markdown())
    if SETTINGS_MARKER in markdown:
        markdown = markdown.replace(SETTINGS_MARKER, settings_markdown())
    return markdown


if __name__ == "__main__":
    print({"errors": errors_markdown, "settings": settings_markdown}.get(sys.argv[1] if sys.argv[1:] else "",
                                                                        contract_markdown)())
