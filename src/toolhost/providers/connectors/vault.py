"""Token material encrypted at rest: Fernet with a key derived from the server's secret key."""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_PURPOSE = b"toolhost connected-account tokens v1"


class TokenVault:
    """Encrypts and decrypts the JSON of an account's token material."""

    def __init__(self, secret_key: str) -> None:
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KEY_PURPOSE).derive(secret_key.encode())
        self._fernet = Fernet(base64.urlsafe_b64encode(derived))

    def seal(self, material: dict[str, Any]) -> str:
        """The encrypted form stored in the database."""
        return self._fernet.encrypt(json.dumps(material, separators=(",", ":")).encode()).decode("ascii")

    def open(self, sealed: str) -> dict[str, Any]:
        """The material back; a secret key change makes old tokens unreadable (ValueError)."""
        try:
            value = json.loads(self._fernet.decrypt(sealed.encode("ascii")))
        except InvalidToken as error:
            raise ValueError("token material cannot be decrypted with this secret key") from error
        return dict(value)
