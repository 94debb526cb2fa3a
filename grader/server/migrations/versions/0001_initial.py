"""The first schema: assignments, candidates, submissions (the queue), audit events, server keys.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "assignments",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("katas", sa.JSON, nullable=False),
        sa.Column("level", sa.String(32)),
        sa.Column("minutes", sa.Float, nullable=False),
        sa.Column("due_at", sa.Float),
        sa.Column("languages", sa.JSON, nullable=False),
        sa.Column("backend", sa.String(16), nullable=False),
        sa.Column("show", sa.String(16), nullable=False),
        sa.Column("secret_seed", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "candidates",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("assignment_id", sa.String(16), sa.ForeignKey("assignments.id"), nullable=False, index=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("joined_at", sa.Float),
        sa.Column("deadline", sa.Float),
        sa.Column("language", sa.String(16)),
        sa.Column("next_seq", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("candidate_id", sa.String(16), sa.ForeignKey("candidates.id"), nullable=False, index=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("kata", sa.String(64), nullable=False),
        sa.Column("files", sa.JSON, nullable=False),
        sa.Column("sources_hash", sa.String(64), nullable=False),
        sa.Column("received_at", sa.Float, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("tries", sa.Integer, nullable=False, server_default="0"),
        sa.Column("worker", sa.String(120)),
        sa.Column("pid", sa.Integer),
        sa.Column("lease_until", sa.Float),
        sa.Column("outcome", sa.JSON),
        sa.Column("finished_at", sa.Float),
        sa.UniqueConstraint("candidate_id", "seq"),
    )
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("time", sa.Float, nullable=False, index=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("candidate_id", sa.String(16), index=True),
        sa.Column("submission_id", sa.Integer),
        sa.Column("remote", sa.String(64)),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
    )
    op.create_table(
        "server_keys",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.String(128), nullable=False),
    )


def downgrade() -> None:
    for table in ("server_keys", "audit_events", "submissions", "candidates", "assignments"):
        op.drop_table(table)
