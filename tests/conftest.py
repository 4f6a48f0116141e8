"""Shared fixtures: one embedded Spark Connect server (with the filecommit plugin) per session."""

from __future__ import annotations

import os
import uuid

import pytest


@pytest.fixture(scope="session")
def spark():
    """The pytest session's Spark Connect session (embedded local server with the plugin)."""
    import filecommit

    session = filecommit.local_session(master=os.environ.get("FILECOMMIT_TEST_MASTER", "local[2]"))
    yield session
    session.stop()


@pytest.fixture
def table_path(tmp_path):
    """A fresh, not yet existing table path under pytest's tmp dir."""
    return str(tmp_path / f"t_{uuid.uuid4().hex[:8]}")
