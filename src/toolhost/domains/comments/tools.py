"""The comments tools (CATALOG.md §12): thin handlers over the comments service."""

from __future__ import annotations

from toolhost.domains.comments import service
from toolhost.domains.comments.schemas import (
    AccountArguments,
    CommentView,
    CreatedComment,
    DeleteCommentIn,
    DeleteCommentOut,
    ListCommentsIn,
    ListCommentsOut,
    ModerateCommentIn,
    ModerateCommentOut,
    PostCommentIn,
    PostCommentOut,
    ReplyToCommentIn,
    ReplyToCommentOut,
)
from toolhost.platform import scopes
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import tool
from toolhost.providers.connectors.base import Comment


def _choice(ctx: ToolContext, args: AccountArguments) -> service.AccountChoice:
    return service.AccountChoice(
        project_id=ctx.project_id, connected_account_id=args.connected_account_id, platform=args.platform
    )


def _comment_view(listed: service.ListedComment) -> CommentView:
    comment = listed.comment
    return CommentView(
        id=comment.id,
        videoId=listed.post_id,
        videoTitle=listed.post_title,
        authorDisplayName=comment.author or "",
        textDisplay=comment.text,
        textOriginal=comment.text,
        publishedAt=comment.created_at or None,
        canReply=listed.can_reply,
        parentId=comment.parent_id,
    )


def _created(comment: Comment) -> CreatedComment:
    return CreatedComment(id=comment.id, textDisplay=comment.text)


@tool(
    module="comments",
    scope=scopes.COMMENTS,
    credits=0,
    read_only=True,
    idempotent=True,
    open_world=True,
    project="strict",
)
async def list_comments(ctx: ToolContext, args: ListCommentsIn) -> ListCommentsOut:
    """Lists comments on one of your posts (video_id = the platform's post id), or, without video_id, the
    recent comments across the connected account's published posts.

    The account: connected_account_id, else the project's account on `platform`, else its single YouTube
    account, else its single account with comments. Pass nextPageToken back as page_token for more. Next:
    reply_to_comment with a comment's id as parent_id, moderate_comment (YouTube) or delete_comment.
    """
    page = await service.list_comments(
        session=ctx.session,
        settings=ctx.settings,
        choice=_choice(ctx, args),
        video_id=args.video_id,
        max_results=args.max_results,
        page_token=args.page_token,
    )
    return ListCommentsOut(
        comments=[_comment_view(listed) for listed in page.comments], nextPageToken=page.next_page_token
    )


@tool(module="comments", scope=scopes.COMMENTS, credits=0, open_world=True, project="strict")
async def reply_to_comment(ctx: ToolContext, args: ReplyToCommentIn) -> ReplyToCommentOut:
    """Replies to a comment (parent_id, from list_comments) as the connected account.

    The reply is public on the platform at once. On Bluesky pass video_id (the post's AT-URI) when the
    comment is not on one of the account's recent posts. Webhook accounts cannot reply.
    """
    reply = await service.reply_to_comment(
        session=ctx.session,
        settings=ctx.settings,
        choice=_choice(ctx, args),
        parent_id=args.parent_id,
        text=args.text,
        video_id=args.video_id,
    )
    return ReplyToCommentOut(comment=_created(reply))


@tool(module="comments", scope=scopes.COMMENTS, credits=0, open_world=True, project="strict")
async def post_comment(ctx: ToolContext, args: PostCommentIn) -> PostCommentOut:
    """Posts a top-level comment on a post (video_id = the platform's post id) as the connected account.

    On Mastodon and Bluesky it is a reply to the post itself. To answer someone, use reply_to_comment.
    """
    comment = await service.post_comment(
        session=ctx.session, settings=ctx.settings, choice=_choice(ctx, args), video_id=args.video_id, text=args.text
    )
    return PostCommentOut(comment=_created(comment))


@tool(module="comments", scope=scopes.COMMENTS, credits=0, destructive=True, open_world=True, project="strict")
async def moderate_comment(ctx: ToolContext, args: ModerateCommentIn) -> ModerateCommentOut:
    """Approves (published) or hides (rejected, kept in the moderation queue) a comment on your post.

    Only connectors with moderation (YouTube) can do it; others answer validation_error naming the
    connector. To remove your own comment, use delete_comment.
    """
    await service.moderate_comment(
        session=ctx.session,
        settings=ctx.settings,
        choice=_choice(ctx, args),
        comment_id=args.comment_id,
        moderation_status=args.moderation_status,
    )
    return ModerateCommentOut(success=True, commentId=args.comment_id, moderationStatus=args.moderation_status)


@tool(module="comments", scope=scopes.COMMENTS, credits=0, destructive=True, open_world=True, project="strict")
async def delete_comment(ctx: ToolContext, args: DeleteCommentIn) -> DeleteCommentOut:
    """Deletes, permanently, a comment the connected account wrote (a reply or comment it posted).

    Comments by other people cannot be deleted; hide them with moderate_comment (YouTube) instead.
    """
    await service.delete_comment(
        session=ctx.session, settings=ctx.settings, choice=_choice(ctx, args), comment_id=args.comment_id
    )
    return DeleteCommentOut(success=True, commentId=args.comment_id)
