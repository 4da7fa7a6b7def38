"""Patient portal reply drafting (seed 000). This first piece drafts a reply zero-shot; the thematic, RAG and
adaptation systems and EditJudge scoring build on it."""

from bedside.tasks.drafting.zero_shot import PortalMessage, draft_reply, load_portal_messages, with_chart_from

__all__ = ["PortalMessage", "draft_reply", "load_portal_messages", "with_chart_from"]
