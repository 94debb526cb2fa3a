"""Private katas: an interviewer's own kata folders, kept only in the server's database.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "private_katas",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("files", sa.JSON, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("added_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("private_katas")
