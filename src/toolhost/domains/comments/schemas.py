"""Input and output models of the comments tools (CATALOG.md §12)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from toolhost.platform.fields import NOT_BLANK_PATTERN, SocialPlatform, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

# A platform's id of a post or comment: YouTube video and comment ids, Mastodon status ids, Bluesky AT-URIs.
PlatformId = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=1_000),
    Field(json_schema_extra={"pattern": NOT_BLANK_PATTERN}),
]
PageToken = Annotated[str, StringConstraints(min_length=1, max_length=1_000)]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


CommentText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=10_000),
    AfterValidator(_not_blank),
    Field(json_schema_extra={"pattern": NOT_BLANK_PATTERN}),
]


class AccountArguments(ToolInput):
    """The arguments every comments tool shares: which account, which platform, which project."""

    connected_account_id: UUIDStr | None = None
    platform: SocialPlatform | None = Field(
        default=None, description="(ext) route to the project's account on this platform"
    )
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class CommentView(BaseModel):
    """One comment as the catalogue shapes it; counts a connector does not report are null."""

    id: str
    videoId: str | None
    videoTitle: str | None = None
    authorDisplayName: str
    authorProfileImageUrl: str | None = None
    authorChannelId: str | None = None
    textDisplay: str
    textOriginal: str
    likeCount: int | None = None
    publishedAt: str | None
    updatedAt: str | None = None
    replyCount: int | None = None
    canReply: bool | None = None
    moderationStatus: str | None = None
    parentId: str | None = Field(default=None, description="(ext) the comment or post this one answers")


class ListCommentsIn(AccountArguments):
    video_id: PlatformId | None = Field(
        default=None, description="the platform's post id; omitted = recent comments across the account's posts"
    )
    max_results: Annotated[int, Field(ge=1, le=100)] = 50
    page_token: PageToken | None = None


class ListCommentsOut(ToolOutput):
    comments: list[CommentView]
    nextPageToken: str | None

    def summary(self) -> str:
        if not self.comments:
            return "No comments."
        lines = [
            f"{comment.authorDisplayName or '-'}: {comment.textDisplay[:200]} [{comment.id}]"
            for comment in self.comments
        ]
        if self.nextPageToken:
            lines.append(f"More: page_token={self.nextPageToken}")
        return "\n".join(lines)


class CreatedComment(BaseModel):
    id: str
    textDisplay: str


class ReplyToCommentIn(AccountArguments):
    parent_id: PlatformId
    text: CommentText
    video_id: PlatformId | None = Field(
        default=None,
        description="(ext) the post the comment is on; Bluesky needs it to keep the reply in the post's "
        "thread unless the comment is on one of the account's recent posts",
    )


class ReplyToCommentOut(ToolOutput):
    comment: CreatedComment

    def summary(self) -> str:
        return f"Replied: {self.comment.textDisplay[:200]} [{self.comment.id}]"


class PostCommentIn(AccountArguments):
    video_id: PlatformId
    text: CommentText


class PostCommentOut(ToolOutput):
    comment: CreatedComment

    def summary(self) -> str:
        return f"Commented: {self.comment.textDisplay[:200]} [{self.comment.id}]"


class ModerateCommentIn(AccountArguments):
    comment_id: PlatformId
    moderation_status: Literal["published", "rejected"]


class ModerateCommentOut(ToolOutput):
    success: bool
    commentId: str
    moderationStatus: str

    def summary(self) -> str:
        return f"Comment {self.commentId} is now {self.moderationStatus}."


class DeleteCommentIn(AccountArguments):
    comment_id: PlatformId


class DeleteCommentOut(ToolOutput):
    success: bool
    commentId: str

    def summary(self) -> str:
        return f"Deleted comment {self.commentId}."
