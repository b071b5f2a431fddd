"""Plain HTTP servers the tests run on a thread of their own: stand-ins for sites, feeds and providers."""

from __future__ import annotations

import contextlib
import socketserver
import threading
from collections.abc import Iterator

# How often a serving thread looks for its shutdown: socketserver's default of half a second was what most of these
# fixtures spent tearing down.
SHUTDOWN_POLL_SECONDS = 0.02


@contextlib.contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[None]:
    """Serves `server` until the block ends, then stops it and closes its socket."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_SECONDS}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
