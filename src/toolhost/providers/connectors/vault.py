"""Token material encrypted at rest: Fernet under the current key generation (toolhost.keyring).

A value sealed under a retired generation still opens while that generation is held; `reseal` moves it to the
current one (`toolhost secrets rotate` does it for every stored value).
"""

from __future__ import annotations

import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from toolhost.keyring import Keyring


class TokenVault:
    """Encrypts and decrypts the JSON of an account's token material."""

    def __init__(self, keyring: Keyring) -> None:
        self._keyring = keyring

    def seal(self, material: dict[str, Any]) -> str:
        """The encrypted form stored in the database, under the current generation."""
        current = Fernet(self._keyring.current().fernet_key)
        return current.encrypt(json.dumps(material, separators=(",", ":")).encode()).decode("ascii")

    def open(self, sealed: str) -> dict[str, Any]:
        """The material back; ValueError when no generation held can decrypt it."""
        try:
            value = json.loads(self._every_generation().decrypt(sealed.encode("ascii")))
        except InvalidToken as error:
            raise ValueError("token material cannot be decrypted with any secret key this install holds") from error
        return dict(value)

    def sealed_under_current(self, sealed: str) -> bool:
        """Whether the value is already encrypted under the current generation."""
        try:
            Fernet(self._keyring.current().fernet_key).decrypt(sealed.encode("ascii"))
        except InvalidToken:
            return False
        return True

    def reseal(self, sealed: str) -> str:
        """The same material encrypted under the current generation; ValueError when it cannot be decrypted."""
        try:
            return self._every_generation().rotate(sealed.encode("ascii")).decode("ascii")
        except InvalidToken as error:
            raise ValueError("token material cannot be decrypted with any secret key this install holds") from error

    def _every_generation(self) -> MultiFernet:
        # The current generation first: MultiFernet encrypts (and rotates) with the first key it is given.
        return MultiFernet([Fernet(generation.fernet_key) for generation in self._keyring.generations()])
