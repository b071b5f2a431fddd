"""The API server process that `toolhost serve` becomes once the database is migrated and bootstrapped.

`serve` prepares the database with Alembic and prints through Rich, then replaces itself with this module
(os.execv: same process id, same terminal, same signals), so the process that serves holds only what serving
needs; the migration and command-line machinery it no longer uses stays behind (about 12 MB of idle RSS).
Settings come from the environment, as `create_app` reads them.
"""

from __future__ import annotations

import uvicorn

from toolhost.config import load_settings
from toolhost.platform.observability import logging_config


def main() -> None:
    """Serves the app factory on the configured address until stopped."""
    settings = load_settings()
    uvicorn.run(
        "toolhost.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        log_config=logging_config(settings.log_level),
    )


if __name__ == "__main__":
    main()
