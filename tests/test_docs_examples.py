"""Every Python code block of README.md and docs/*.md runs, against the session's Connect server.

Blocks of one page run in order in one namespace (Sybil), as a reader who pastes them one after
another would run them. ``filecommit.local_session()`` in a block returns the suite's session (the
``spark`` fixture), so a page that starts "its own" server runs on the shared one; ``tempfile``'s
directory is this test's tmp dir (under the server's allowed root), or a directory under
``$FILECOMMIT_TEST_DIR`` when that is set (a remote server's shared volume).

Conventions for writers of pages:

- A ```` ```python ```` block is run; a hidden ``<!-- invisible-code-block: python ... -->`` runs too
  (set-up a reader does not need to see).
- A ```` ```text title="Output" ```` block right after a Python block is that block's printed
  output, compared with doctest's rules (``...`` matches anything, whitespace normalized).
- ``<!-- skip: next "reason" -->`` before a block marks it as not runnable here (an operator's
  session, an endless loop); keep these few: the test counts them. ``<!-- skip: start
  if(SHARED_MODE, reason="...") -->`` ... ``<!-- skip: end -->`` skip blocks (and their Output) only
  against a server in shared mode.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import tempfile
import unittest
import uuid
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.evaluators.python import PythonEvaluator
from sybil.example import NotEvaluated
from sybil.parsers.markdown import CodeBlockParser, SkipParser

import filecommit

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
OUTPUT = 'text title="Output"'
_PRINTED = "__printed__"

pytestmark = pytest.mark.slow


class _CapturingEvaluator(PythonEvaluator):
    """Runs a block and keeps what it printed for the Output block that may follow."""

    def __call__(self, example) -> None:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            super().__call__(example)
        example.namespace[_PRINTED] = buffer.getvalue()


def _check_output(example) -> str | None:
    printed = example.namespace.pop(_PRINTED, None)
    if printed is None:
        return "an Output block must follow a Python block"
    expected = str(example.parsed)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    if doctest.OutputChecker().check_output(expected, printed, flags):
        return None
    return f"printed output differs\n--- expected ---\n{expected}--- printed ---\n{printed}"


SYBIL = Sybil(
    parsers=[
        CodeBlockParser("python", _CapturingEvaluator()),
        CodeBlockParser(OUTPUT, _check_output),
        SkipParser(),
    ]
)


def run_page(page: Path) -> tuple[int, int]:
    """Evaluate the page's examples in order; (blocks run, blocks skipped)."""
    from helpers import shared_mode

    document = SYBIL.parse(page)
    document.namespace["SHARED_MODE"] = shared_mode()  # for <!-- skip: start if(SHARED_MODE, reason=...) -->
    ran = skipped = 0
    for example in document:
        evaluator = example.region.evaluator
        try:
            example.evaluate()
        except (unittest.SkipTest, NotEvaluated):
            skipped += 1
            continue
        if isinstance(evaluator, _CapturingEvaluator):
            ran += 1
    return ran, skipped


COUNTS: dict[str, tuple[int, int]] = {}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_code_blocks_run(page, spark, monkeypatch, tmp_path):
    """Each page's blocks run without error and print what their Output blocks show."""
    monkeypatch.setattr(filecommit, "local_session", lambda *args, **kwargs: spark)
    base = os.environ.get("FILECOMMIT_TEST_DIR")  # a remote server's shared volume (conftest.table_path)
    workdir = os.path.join(base, f"docs_{uuid.uuid4().hex[:8]}") if base else str(tmp_path)
    os.makedirs(workdir, exist_ok=True)
    monkeypatch.setattr(tempfile, "tempdir", workdir)
    COUNTS[str(page.relative_to(ROOT))] = run_page(page)


def test_block_counts_reported():
    """Runs last in this module: prints how many blocks ran and how many are marked not runnable."""
    ran = sum(r for r, _ in COUNTS.values())
    skipped = sum(s for _, s in COUNTS.values())
    print(f"\ncode blocks run: {ran}; marked not runnable: {skipped}; pages: {len(COUNTS)}")
    if len(COUNTS) == len(PAGES):
        assert skipped <= max(3, ran // 10), "too many blocks marked as not runnable"
