"""The analytics tests' fixtures (webhook channels, published posts, snapshots) reused by the skills tests."""

from tests.domains.analytics.conftest import settings

__all__ = ["settings"]
