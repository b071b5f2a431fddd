"""People of an account: created by an operator, signing in with an email address and an argon2-hashed password."""

from __future__ import annotations

import asyncio
import functools
import uuid

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.platform.accounts import get_account
from toolhost.platform.models import User
from toolhost.platform.results import ValidationFailed

MIN_PASSWORD_LENGTH = 12
# argon2 reads the whole password: a bound keeps one request from buying seconds of CPU.
MAX_PASSWORD_LENGTH = 1024
MAX_EMAIL_LENGTH = 320

PASSWORDS = PasswordHasher()


@functools.cache
def _stand_in_hash() -> str:
    """Checked against when no user has the address, so an unknown address costs what a wrong password costs."""
    return PASSWORDS.hash("no user has this address; the hash only spends the same time")


def normalized_email(text: str) -> str:
    """The address as stored and looked up: trimmed and lowercased."""
    return text.strip().lower()


def _checked_email(text: str) -> str:
    email = normalized_email(text)
    local, at, domain = email.partition("@")
    if not at or not local or "." not in domain or len(email) > MAX_EMAIL_LENGTH or any(c.isspace() for c in email):
        raise ValidationFailed(
            f"{text!r} is not an email address", field_errors=[{"path": "email", "message": "not an email address"}]
        )
    return email


def _checked_password(password: str) -> str:
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        raise ValidationFailed(
            f"a password has {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters",
            field_errors=[{"path": "password", "message": "too short or too long"}],
        )
    return password


async def create_user(session: AsyncSession, *, account_id: uuid.UUID, email: str, password: str) -> User:
    """A new person of the account; an address signs in to one account only."""
    await get_account(session, account_id)
    address = _checked_email(email)
    if await session.scalar(select(func.count()).select_from(User).where(User.email == address)):
        raise ValidationFailed(
            f"{address} already has a user", field_errors=[{"path": "email", "message": "already taken"}]
        )
    # argon2 spends tens of milliseconds of CPU on purpose: off the event loop.
    password_hash = await asyncio.to_thread(PASSWORDS.hash, _checked_password(password))
    user = User(account_id=account_id, email=address, password_hash=password_hash)
    session.add(user)
    await session.flush()
    return user


async def user_with_password(session: AsyncSession, *, email: str, password: str) -> User | None:
    """The user whose address and password these are, or None, taking the same time either way."""
    if len(password) > MAX_PASSWORD_LENGTH:
        return None
    user = await session.scalar(select(User).where(User.email == normalized_email(email)))
    stored = user.password_hash if user is not None else _stand_in_hash()
    try:
        await asyncio.to_thread(PASSWORDS.verify, stored, password)
    except (VerificationError, InvalidHashError):
        return None
    return user
