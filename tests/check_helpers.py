"""Lint of the test suite (``make lint``): no helper function is defined at module level in more
than two of ``tests/*.py``; a helper shared wider lives once, in ``tests/helpers.py`` or a support
module. Test functions (``test_*``) and script entry points (``main``) are not helpers.

Exits 1, listing each name and its modules, when one is; 0 otherwise."""

from __future__ import annotations

import ast
import collections
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def repeated() -> dict[str, list[str]]:
    """Helper name -> the modules defining it, for names defined in more than two modules."""
    defined: dict[str, list[str]] = collections.defaultdict(list)
    for f in sorted(TESTS.glob("*.py")):
        for node in ast.parse(f.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("test_") \
                    and node.name != "main":
                defined[node.name].append(f.name)
    return {name: files for name, files in defined.items() if len(files) > 2}


if __name__ == "__main__":
    found = repeated()
    for name, files in sorted(found.items()):
        print(f"lint: helper {name}() is defined in {len(files)} test modules: {', '.join(files)}; "
              "define it once (tests/helpers.py) and import it")
    sys.exit(1 if found else 0)
