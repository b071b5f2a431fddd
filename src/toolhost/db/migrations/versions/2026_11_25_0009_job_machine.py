"""one job machine: jobs carry their due time, retries and reserving tool; posts lease through their publish job

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from toolhost.db.base import UTCDateTime

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# The tool whose call reserved each existing job's credits, named on its refund from now on.
TOOL_OF_JOB_TYPE = {
    "image": "generate_image",
    "video": "generate_video",
    "voiceover": "generate_voiceover",
    "demo_render": "render_demo_video",
    "template_render": "render_template_video",
    "hyperframes_render": "render_hyperframes",
    "recipe_run": "execute_recipe",
    "analytics_refresh": "refresh_platform_analytics",
    "publish": "schedule_post",
}

jobs = sa.table(
    "jobs",
    sa.column("id", sa.Uuid()),
    sa.column("job_type", sa.String()),
    sa.column("tool_name", sa.String()),
    sa.column("retries", sa.Integer()),
    sa.column("run_after", UTCDateTime(timezone=True)),
    sa.column("created_at", UTCDateTime(timezone=True)),
)
posts = sa.table(
    "posts",
    sa.column("job_id", sa.Uuid()),
    sa.column("due_at", UTCDateTime(timezone=True)),
    sa.column("failures", sa.Integer()),
)


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tool_name", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("retries", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("run_after", UTCDateTime(timezone=True), nullable=True))
    op.execute(
        jobs.update().values(
            tool_name=sa.case(TOOL_OF_JOB_TYPE, value=jobs.c.job_type, else_=None),
            retries=0,
            run_after=jobs.c.created_at,
        )
    )
    # A post was due (and retried) on its own row; its publish job now carries both.
    post_of_job = posts.c.job_id == jobs.c.id
    op.execute(
        jobs.update()
        .where(jobs.c.job_type == "publish")
        .values(
            run_after=sa.func.coalesce(
                sa.select(posts.c.due_at).where(post_of_job).scalar_subquery(), jobs.c.created_at
            ),
            retries=sa.func.coalesce(sa.select(posts.c.failures).where(post_of_job).scalar_subquery(), 0),
        )
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.alter_column("retries", existing_type=sa.Integer(), nullable=False)
        batch_op.alter_column("run_after", existing_type=UTCDateTime(timezone=True), nullable=False)
        batch_op.drop_index("ix_jobs_claim")
        batch_op.create_index("ix_jobs_claim", ["status", "job_type", "run_after"], unique=False)

    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_column("lease_owner")
        batch_op.drop_column("lease_expires_at")

    with op.batch_alter_table("usage_records", schema=None) as batch_op:
        batch_op.create_index("ix_usage_records_request", ["request_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("usage_records", schema=None) as batch_op:
        batch_op.drop_index("ix_usage_records_request")

    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lease_owner", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("lease_expires_at", UTCDateTime(timezone=True), nullable=True))

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_jobs_claim")
        batch_op.create_index("ix_jobs_claim", ["status", "job_type", "created_at"], unique=False)
        batch_op.drop_column("run_after")
        batch_op.drop_column("retries")
        batch_op.drop_column("tool_name")
