"""Input and output models of the media tools (CATALOG.md §3)."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from toolhost.platform.fields import TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

# 10 MB decoded is ~13.4 M base64 characters; a data: prefix and line breaks add a little.
FILE_DATA_MAX_CHARACTERS = 14 * 1024 * 1024


class UploadMediaIn(ToolInput):
    source: Annotated[str, StringConstraints(max_length=2_048)] | None = None
    file_data: Annotated[str, StringConstraints(max_length=FILE_DATA_MAX_CHARACTERS)] | None = None
    file_name: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None
    content_type: Annotated[str, StringConstraints(max_length=100)] | None = None
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class UploadMediaOut(ToolOutput):
    r2_key: str
    signed_url: str
    size: int
    content_type: str
    expires_in: int

    def summary(self) -> str:
        short = "…/" + "/".join(self.r2_key.split("/")[-2:])
        return f"Uploaded {self.content_type} ({self.size} bytes) as {short}; URL valid {self.expires_in} s."


class GetMediaUrlIn(ToolInput):
    r2_key: Annotated[str, StringConstraints(min_length=1, max_length=1_024)] | None = None
    job_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class GetMediaUrlOut(ToolOutput):
    signed_url: str
    r2_key: str
    job_id: str | None = None
    expires_in: int

    def summary(self) -> str:
        return f"Signed URL (valid {self.expires_in} s): {self.signed_url}"
