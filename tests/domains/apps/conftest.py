"""Fixtures of the apps tests: settings whose webhook accounts may point at 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import settings_for_test
from toolhost.config import Settings


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Test settings whose fetcher may reach webhook targets on 127.0.0.1."""
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
    )
