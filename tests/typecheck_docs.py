"""``mypy --strict`` on the Python code blocks of README.md and docs/*.md (``make lint``).

The blocks are those tests/test_docs_examples.py runs, found with the same Sybil parsers (```` ```python ````
blocks and hidden ``<!-- invisible-code-block: python -->`` blocks); the blocks of one page are one module,
in page order, as they run in one namespace. Each block's lines keep their line numbers in the page, so a
mypy error names the page's line. The modules are written under ``.build/typecheck-docs/`` and checked
with the project's mypy configuration (pyproject.toml). Exit status: mypy's (0 when every block checks).

Usage: ``python tests/typecheck_docs.py [PAGE.md ...]`` (default: README.md and docs/**/*.md).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".build" / "typecheck-docs"


def _noop(example: object) -> None:
    """Evaluators are not run here; the parsers only find the blocks."""


def page_module(page: Path) -> str | None:
    """The page's Python blocks as one module, each at its line in the page; None without blocks."""
    document = Sybil(parsers=[CodeBlockParser("python", _noop)]).parse(page)
    text = page.read_text()
    lines: list[str] = []
    for example in document:
        source = str(example.parsed)
        # the block's first line: the line after its opening fence (or after the invisible-block marker)
        first = text.count("\n", 0, example.region.start) + 1
        lines.extend([""] * max(0, first - len(lines)))
        lines.extend(source.splitlines())
    return "\n".join(lines) + "\n" if lines else None


def main(argv: list[str]) -> int:
    """Write one module per page and run mypy on them; mypy's exit status."""
    pages = [Path(p).resolve() for p in argv] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    modules = []
    for page in pages:
        module = page_module(page)
        if module is None:
            continue
        name = str(page.relative_to(ROOT)).replace("/", "__").replace(".", "_").replace("-", "_") + ".py"
        (OUT / name).write_text(f"# {page.relative_to(ROOT)}\n" + module[module.index("\n") + 1:]
                                if module.startswith("\n") else module)
        modules.append(str(OUT / name))
    if not modules:
        return 0
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--strict",
               "--no-incremental", *modules]
    return subprocess.call(command, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
