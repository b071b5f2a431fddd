"""The autopilot tests reuse the distribution fixtures: local settings, routes, a webhook receiver."""

from tests.domains.distribution.conftest import mounted_routes, receiver, settings

__all__ = ["mounted_routes", "receiver", "settings"]
