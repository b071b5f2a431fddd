"""The server's secret keys, in generations named by a key id (kid).

Each generation holds three random keys: `signing` (OAuth access tokens, HS256), `media` (signed media URLs)
and `encryption` (connector tokens at rest, Fernet). What is signed names the kid it was signed with, so after
`toolhost secrets rotate` tokens and URLs of a retired generation still verify until they expire; the newest
generation signs and encrypts, and stored secrets are re-encrypted under it.

The generations live in a key file (JSON, readable by its owner only) that the first start writes: beside an
SQLite database, or where `TOOLHOST_SECRET_FILE` says. An operator may instead set `TOOLHOST_SECRET_KEY`: one
secret from which a generation is derived (as toolhost derived its keys before key files existed, so what
that secret signed or encrypted stays readable). A key file, once there, is authoritative.

Every process rereads the file when it changes (a stat per use), so a rotation reaches running servers and
workers at once.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

FILE_VERSION = 1
KEY_BYTES = 32
MINIMUM_SECRET_LENGTH = 32
PLACEHOLDER_SECRET = "change-me"  # the value older docs showed; refused everywhere
# How long a retired generation is kept: longer than anything it signed lives (access tokens 1 h, the media URLs
# handed to webhook receivers 24 h); `rotate` keeps it longer when media URLs are set to live longer.
RETIRED_KEY_LIFETIME = timedelta(days=2)
# How a single secret became keys before key files: kept, so that secret's tokens and stored secrets stay valid.
LEGACY_MEDIA_PURPOSE = b"toolhost media urls v1"
LEGACY_ENCRYPTION_PURPOSE = b"toolhost connected-account tokens v1"


class KeyringError(ValueError):
    """The keys cannot be used as configured; the message says what to set or fix."""


def refuse_weak_secret(secret: str) -> None:
    """A secret an operator set must not be the published placeholder or short enough to guess."""
    if secret == PLACEHOLDER_SECRET:
        raise KeyringError("TOOLHOST_SECRET_KEY is the published placeholder 'change-me'; set a secret of your own")
    if len(secret) < MINIMUM_SECRET_LENGTH:
        raise KeyringError(
            f"TOOLHOST_SECRET_KEY has {len(secret)} characters; use at least {MINIMUM_SECRET_LENGTH} random ones "
            "(python -c 'import secrets; print(secrets.token_urlsafe(32))'), or unset it to keep generated keys "
            "in a key file"
        )


@dataclass(frozen=True, slots=True)
class KeyGeneration:
    """One generation of keys and its key id."""

    kid: str
    signing: bytes
    media: bytes
    encryption: bytes
    created_at: datetime
    retired_at: datetime | None = None

    @classmethod
    def random(cls, *, taken: frozenset[str] = frozenset()) -> KeyGeneration:
        """A fresh generation: three independent random keys under a kid not in `taken`."""
        kid = "k" + secrets.token_hex(4)
        while kid in taken:
            kid = "k" + secrets.token_hex(4)
        return cls(
            kid=kid,
            signing=secrets.token_bytes(KEY_BYTES),
            media=secrets.token_bytes(KEY_BYTES),
            encryption=secrets.token_bytes(KEY_BYTES),
            created_at=datetime.now(UTC),
        )

    @classmethod
    def from_secret(cls, secret: str) -> KeyGeneration:
        """The generation one operator-set secret stands for, derived as toolhost always derived it."""
        material = secret.encode()
        return cls(
            kid="s" + hashlib.sha256(b"toolhost key id\x00" + material).hexdigest()[:8],
            signing=material,
            media=hmac.new(material, LEGACY_MEDIA_PURPOSE, hashlib.sha256).digest(),
            encryption=HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=LEGACY_ENCRYPTION_PURPOSE).derive(
                material
            ),
            created_at=datetime.fromtimestamp(0, UTC),
        )

    @property
    def fernet_key(self) -> bytes:
        """The encryption key in the form Fernet takes."""
        return base64.urlsafe_b64encode(self.encryption)

    def as_json(self) -> dict[str, Any]:
        """The generation as the key file stores it."""
        return {
            "kid": self.kid,
            "created_at": self.created_at.isoformat(),
            "retired_at": self.retired_at.isoformat() if self.retired_at else None,
            "signing": base64.urlsafe_b64encode(self.signing).decode(),
            "media": base64.urlsafe_b64encode(self.media).decode(),
            "encryption": base64.urlsafe_b64encode(self.encryption).decode(),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> KeyGeneration:
        """A generation read from the key file."""
        return cls(
            kid=str(value["kid"]),
            signing=base64.urlsafe_b64decode(value["signing"]),
            media=base64.urlsafe_b64decode(value["media"]),
            encryption=base64.urlsafe_b64decode(value["encryption"]),
            created_at=datetime.fromisoformat(value["created_at"]),
            retired_at=datetime.fromisoformat(value["retired_at"]) if value.get("retired_at") else None,
        )


class Keyring:
    """The generations of one process, newest last; reread from the key file whenever it changes."""

    def __init__(self, generations: list[KeyGeneration], path: Path | None) -> None:
        self._generations = generations
        self.path = path
        self._seen = _identity(path) if path is not None else None

    @classmethod
    def load(cls, *, secret: str, path: Path | None, create: bool) -> Keyring:
        """The keys of this install: the key file at `path` when there is one (made first when `create`), else
        the generation `secret` stands for; KeyringError when neither is available."""
        if secret:
            refuse_weak_secret(secret)
        if path is not None and path.exists():
            return cls(_read(path), path)
        if secret:
            return cls([KeyGeneration.from_secret(secret)], None)
        if path is None or not create:
            raise KeyringError(
                "no secret keys: set TOOLHOST_SECRET_FILE to a path every toolhost process of this install shares "
                "(the first start writes random keys there), or TOOLHOST_SECRET_KEY to a long random secret"
            )
        _write(path, [KeyGeneration.random()], replace_existing=False)
        return cls(_read(path), path)

    @property
    def source(self) -> str:
        """Where the keys come from, for the operator."""
        return str(self.path.resolve()) if self.path is not None else "TOOLHOST_SECRET_KEY"

    def current(self) -> KeyGeneration:
        """The generation that signs and encrypts now."""
        self._refresh()
        return self._generations[-1]

    def find(self, kid: str) -> KeyGeneration | None:
        """The generation of a key id, or None for one this install does not (or no longer) hold."""
        self._refresh()
        return next((generation for generation in self._generations if generation.kid == kid), None)

    def generations(self) -> list[KeyGeneration]:
        """Every generation held, the current one first, then the retired ones newest first."""
        self._refresh()
        return list(reversed(self._generations))

    def rotate(self, *, path: Path) -> KeyGeneration:
        """Adds a new current generation and retires the others; the key file at `path` holds them all after.

        Keys that came from TOOLHOST_SECRET_KEY move into the file as a retired generation.
        """
        self._refresh()
        now = datetime.now(UTC)
        retired = [replace(generation, retired_at=generation.retired_at or now) for generation in self._generations]
        fresh = KeyGeneration.random(taken=frozenset(generation.kid for generation in retired))
        _write(path, [*retired, fresh], replace_existing=True)
        self.path = path
        self._generations = _read(path)
        self._seen = _identity(path)
        return fresh

    def prune(self, *, retired_before: datetime) -> list[KeyGeneration]:
        """Drops the generations retired before that moment from the key file; returns them.

        Call it only once the stored secrets they encrypted are re-encrypted under the current generation.
        """
        self._refresh()
        if self.path is None:
            return []
        dropped = [g for g in self._generations if g.retired_at is not None and g.retired_at < retired_before]
        if dropped:
            kept = [generation for generation in self._generations if generation not in dropped]
            _write(self.path, kept, replace_existing=True)
            self._generations = _read(self.path)
            self._seen = _identity(self.path)
        return dropped

    def _refresh(self) -> None:
        # A stat per use: cheap next to what the keys are used for, and a rotation reaches every process at once.
        if self.path is None:
            return
        identity = _identity(self.path)
        # A file removed under a running process leaves it its keys: signing on is better than failing every call.
        if identity is not None and identity != self._seen:
            self._generations = _read(self.path)
            self._seen = identity


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return (status.st_ino, status.st_mtime_ns, status.st_size)


def _read(path: Path) -> list[KeyGeneration]:
    status = path.stat()
    if status.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyringError(
            f"the key file {path} may be read by others (mode {stat.S_IMODE(status.st_mode):o}); "
            f"make it its owner's only: chmod 600 {path}"
        )
    text = path.read_text().strip()
    if not text:
        raise KeyringError(f"the key file {path} is empty; delete it to generate new keys")
    if not text.startswith("{"):
        # A key file of the first releases: one secret, from which the keys were derived.
        return [KeyGeneration.from_secret(text)]
    try:
        document = json.loads(text)
        generations = [KeyGeneration.from_json(value) for value in document["keys"]]
    except (ValueError, KeyError, TypeError) as error:
        raise KeyringError(f"the key file {path} cannot be read: {error}") from None
    if not generations:
        raise KeyringError(f"the key file {path} holds no keys; delete it to generate new keys")
    return sorted(generations, key=lambda generation: (generation.retired_at is None, generation.created_at))


def _write(path: Path, generations: list[KeyGeneration], *, replace_existing: bool) -> None:
    """Writes the file whole under another name, owner-only, then moves or links it into place.

    A first start links (a second process starting at the same moment either wins the link or reads the complete
    file of the one that did); a rotation replaces.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
    try:
        with os.fdopen(descriptor, "w") as file:
            json.dump({"version": FILE_VERSION, "keys": [g.as_json() for g in generations]}, file, indent=2)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        if replace_existing:
            os.replace(draft, path)
            return
        with contextlib.suppress(FileExistsError):
            os.link(draft, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(draft)
