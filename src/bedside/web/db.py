"""The web app's own tables, in the same store as the runs (SQLite by default, PostgreSQL by URL).

- ``web_users``: name, argon2 hash, role (``admin`` | ``annotator``), disabled flag.
- ``web_sessions``: the sha256 of each session token (the token itself is only in the browser's cookie), its
  user, CSRF token, and the times it was made and last used (idle expiry).
- ``web_audit``: who did what and when (log in, label saved, review created, export, ...); targets are ids,
  never item text.
- ``reviews`` (``config``: the creation settings, the annotators as added since, and ``closed`` while an admin
  has closed labelling), ``review_items`` (what annotators see in ``payload``; the unblinding ``key`` never leaves admin
  pages and exports), ``review_assignments`` (annotator, item, the annotator's own seeded position) and
  ``review_labels`` (one per annotator and item, editable until that annotator submits the review, and again
  after they reopen it).
- ``review_adjudications``: per disputed item, the label an adjudicator chose (which annotator's, and why); the
  annotators' own labels are never changed by it.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.exc import SQLAlchemyError

web_metadata = MetaData()

users_table = Table(
    "web_users",
    web_metadata,
    Column("name", String, primary_key=True),
    Column("password_hash", String, nullable=False),
    Column("role", String, nullable=False),
    Column("disabled", Boolean, nullable=False, default=False),
    Column("created_at", Float, nullable=False),
)

sessions_table = Table(
    "web_sessions",
    web_metadata,
    Column("token_hash", String, primary_key=True),
    Column("user", String, ForeignKey("web_users.name"), nullable=False),
    Column("csrf", String, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("last_seen", Float, nullable=False),
)

audit_table = Table(
    "web_audit",
    web_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Float, nullable=False),
    Column("user", String),
    Column("action", String, nullable=False),
    Column("target", String),
    Column("detail", JSON),
)

reviews_table = Table(
    "reviews",
    web_metadata,
    Column("id", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("task_type", String, nullable=False),
    Column("instructions", Text, nullable=False, default=""),
    Column("config", JSON, nullable=False),
    Column("source", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", Float, nullable=False),
)

items_table = Table(
    "review_items",
    web_metadata,
    Column("review_id", String, ForeignKey("reviews.id"), primary_key=True),
    Column("item_id", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("payload", JSON, nullable=False),
    Column("key", JSON, nullable=False),
)

assignments_table = Table(
    "review_assignments",
    web_metadata,
    Column("review_id", String, primary_key=True),
    Column("annotator", String, primary_key=True),
    Column("item_id", String, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("submitted", Boolean, nullable=False, default=False),
    Index("ix_assignments_annotator_position", "review_id", "annotator", "position"),
)

labels_table = Table(
    "review_labels",
    web_metadata,
    Column("review_id", String, primary_key=True),
    Column("item_id", String, primary_key=True),
    Column("annotator", String, primary_key=True),
    Column("value", JSON, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("source", String, nullable=False, default="web"),
)


adjudications_table = Table(
    "review_adjudications",
    web_metadata,
    Column("review_id", String, primary_key=True),
    Column("item_id", String, primary_key=True),
    Column("value", JSON, nullable=False),
    Column("chosen", String, nullable=False),
    Column("adjudicator", String, nullable=False),
    Column("note", Text, nullable=False, default=""),
    Column("at", Float, nullable=False),
)


def create_web_tables(engine: Engine) -> None:
    """Create the web tables if missing; a second process racing on CREATE TABLE retries."""
    for attempt in range(3):
        try:
            web_metadata.create_all(engine)
            return
        except SQLAlchemyError:
            if attempt == 2:
                raise
            time.sleep(0.05 * (attempt + 1))


def audit(engine: Engine, user: str | None, action: str, target: str | None = None, **detail: Any) -> None:
    """One audit entry. ``detail`` carries ids and counts only, never item text or label contents."""
    from sqlalchemy import insert

    with engine.begin() as db:
        db.execute(
            insert(audit_table).values(at=time.time(), user=user, action=action, target=target, detail=detail or None)
        )
