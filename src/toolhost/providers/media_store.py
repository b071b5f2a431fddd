"""The media store: bytes under keys (CATALOG.md §1.13), on the local filesystem or an S3-compatible bucket.

Both stores take the same keys and answer the same questions; toolhost serves either behind its own signed
URLs, so a bucket never needs to be public.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

KEY_PATTERN = re.compile(r"^(projects|accounts)/[0-9a-f-]{36}/[a-z0-9_-]+/\d{4}/\d{2}/[0-9a-f-]{36}\.[a-z0-9]{2,5}$")
# One byte range, the only form S3 answers (first-last, first-, or -suffix).
SINGLE_RANGE = re.compile(r"^bytes=(\d+-\d*|-\d+)$")
CHUNK_BYTES = 256 * 1024
DRAFT_PREFIX = ".upload-"
MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


class MediaStoreUnavailable(Exception):
    """The store could not be reached or refused the request; the same request may work later."""


class RangeNotSatisfiable(Exception):
    """The asked byte range lies outside the object (HTTP 416)."""


def valid_key(key: str) -> bool:
    """Whether a string has the shape of a media key (no traversal, nothing else)."""
    return bool(KEY_PATTERN.match(key))


def _checked(key: str) -> str:
    if not valid_key(key):
        raise KeyError(key)
    return key


@dataclass(slots=True)
class StoredObject:
    """An object opened for reading: its bytes as chunks, and what a Range request got of it."""

    chunks: AsyncGenerator[bytes, None]
    length: int
    content_range: str | None = None


class MediaStore(Protocol):
    """What the rest of toolhost asks of a media store."""

    async def put(self, key: str, data: bytes) -> None:
        """Stores the bytes under the key (replacing what was there)."""

    async def read(self, key: str) -> bytes:
        """The bytes of a key (FileNotFoundError when absent)."""

    async def exists(self, key: str) -> bool:
        """Whether the key holds an object."""

    async def delete(self, key: str) -> None:
        """Removes the key's object; deleting a missing key is not an error."""

    def stale_keys(self, *, older_than: datetime) -> AsyncIterator[list[str]]:
        """Batches of the keys whose object was written before `older_than` (objects of the key shape only)."""


class LocalMediaStore:
    """Keys map to files below `root`; writes are atomic (temp file + rename)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        """The file of a key; refuses anything that is not a media key."""
        return self.root / _checked(key)

    def _write(self, key: str, data: bytes) -> None:
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=DRAFT_PREFIX)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    async def put(self, key: str, data: bytes) -> None:
        await asyncio.to_thread(self._write, key, data)

    async def read(self, key: str) -> bytes:
        return await asyncio.to_thread(self.path(key).read_bytes)

    async def exists(self, key: str) -> bool:
        try:
            return self.path(key).is_file()
        except KeyError:
            return False

    async def delete(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    async def stale_keys(self, *, older_than: datetime) -> AsyncIterator[list[str]]:
        """Batches (a directory each) of the keys whose file was last written before `older_than`.

        The store's own drafts that old, which only a process killed mid-write leaves, are removed on the way.
        """
        walker = os.walk(self.root)
        cutoff = older_than.timestamp()
        while (step := await asyncio.to_thread(next, walker, None)) is not None:
            directory, _, names = step
            batch = await asyncio.to_thread(self._stale_in, Path(directory), names, cutoff)
            if batch:
                yield batch

    def _stale_in(self, directory: Path, names: list[str], cutoff: float) -> list[str]:
        stale: list[str] = []
        for name in names:
            path = directory / name
            try:
                if path.stat().st_mtime >= cutoff:
                    continue
                if name.startswith(DRAFT_PREFIX):
                    path.unlink(missing_ok=True)
                    continue
            except FileNotFoundError:
                continue  # deleted or renamed into place since the directory was listed
            key = path.relative_to(self.root).as_posix()
            if valid_key(key):
                stale.append(key)
        return stale


class S3MediaStore:
    """Keys are object keys in one bucket of an S3-compatible service (AWS S3, R2, MinIO, ...).

    boto3 is synchronous; every request runs in a worker thread so the event loop keeps serving.
    """

    def __init__(
        self,
        *,
        bucket: str,
        endpoint_url: str | None,
        region: str,
        access_key_id: str | None,
        secret_access_key: str | None,
        addressing_style: str,
    ) -> None:
        # Imported on first use: boto3's client machinery holds ~8 MB that a server on the local store does not need.
        import boto3
        from botocore.client import Config

        self.bucket = bucket
        # Credentials left unset come from boto3's own chain (environment, profile, instance role).
        self.client: Any = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region,
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            config=Config(
                s3={"addressing_style": addressing_style},
                retries={"mode": "standard", "max_attempts": 3},
                connect_timeout=10,
                read_timeout=60,
            ),
        )

    async def put(self, key: str, data: bytes) -> None:
        await asyncio.to_thread(self.client.put_object, Bucket=self.bucket, Key=_checked(key), Body=data)

    async def read(self, key: str) -> bytes:
        try:
            response = await asyncio.to_thread(self.client.get_object, Bucket=self.bucket, Key=_checked(key))
            body = response["Body"]
            try:
                return await asyncio.to_thread(body.read)
            finally:
                body.close()
        except ClientError as error:
            if _missing(error):
                raise FileNotFoundError(key) from error
            raise MediaStoreUnavailable(f"the media store refused to read {key}") from error
        except BotoCoreError as error:
            raise MediaStoreUnavailable("the media store could not be reached") from error

    async def exists(self, key: str) -> bool:
        if not valid_key(key):
            return False
        try:
            await asyncio.to_thread(self.client.head_object, Bucket=self.bucket, Key=key)
        except ClientError as error:
            if _missing(error):
                return False
            raise
        return True

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self.client.delete_object, Bucket=self.bucket, Key=_checked(key))

    async def stale_keys(self, *, older_than: datetime) -> AsyncIterator[list[str]]:
        """Batches (a listing page each) of the keys last written before `older_than`; a bucket may hold other
        objects too, and only those of toolhost's key shape are named."""
        paginator = self.client.get_paginator("list_objects_v2")
        for prefix in ("projects/", "accounts/"):
            pages = iter(paginator.paginate(Bucket=self.bucket, Prefix=prefix))
            while (page := await asyncio.to_thread(next, pages, None)) is not None:
                batch = [
                    item["Key"]
                    for item in page.get("Contents", [])
                    if item["LastModified"] < older_than and valid_key(item["Key"])
                ]
                if batch:
                    yield batch

    async def open(self, key: str, byte_range: str | None = None) -> StoredObject | None:
        """The object streamed in chunks (one byte range of it when asked), or None when absent.

        A Range header S3 cannot answer (several ranges, a malformed one) is ignored, as HTTP allows.
        """
        arguments: dict[str, Any] = {"Bucket": self.bucket, "Key": _checked(key)}
        if byte_range and SINGLE_RANGE.match(byte_range.strip()):
            arguments["Range"] = byte_range.strip()
        try:
            response = await asyncio.to_thread(self.client.get_object, **arguments)
        except ClientError as error:
            if _missing(error):
                return None
            if error.response.get("Error", {}).get("Code") == "InvalidRange":
                raise RangeNotSatisfiable(key) from error
            raise
        return StoredObject(
            chunks=_chunks(response["Body"]),
            length=int(response["ContentLength"]),
            content_range=response.get("ContentRange"),
        )


async def _chunks(body: Any) -> AsyncGenerator[bytes, None]:
    try:
        while chunk := await asyncio.to_thread(body.read, CHUNK_BYTES):
            yield chunk
    finally:
        body.close()


def _missing(error: ClientError) -> bool:
    return str(error.response.get("Error", {}).get("Code")) in MISSING_CODES
