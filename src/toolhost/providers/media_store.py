"""The media store: files under keys (CATALOG.md §1.13) on the local filesystem."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

KEY_PATTERN = re.compile(
    r"^(projects|accounts)/[0-9a-f-]{36}/[a-z0-9_-]+/\d{4}/\d{2}/[0-9a-f-]{36}\.[a-z0-9]{2,5}$"
)


def valid_key(key: str) -> bool:
    """Whether a string has the shape of a media key (no traversal, nothing else)."""
    return bool(KEY_PATTERN.match(key))


class LocalMediaStore:
    """Keys map to files below `root`; writes are atomic (temp file + rename)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        """The file of a key; refuses anything that is not a media key."""
        if not valid_key(key):
            raise KeyError(key)
        return self.root / key

    def put(self, key: str, data: bytes) -> None:
        """Stores the bytes under the key."""
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".upload-")
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def read(self, key: str) -> bytes:
        """The bytes of a key (FileNotFoundError when absent)."""
        return self.path(key).read_bytes()

    def exists(self, key: str) -> bool:
        """Whether the key holds a file."""
        try:
            return self.path(key).is_file()
        except KeyError:
            return False
