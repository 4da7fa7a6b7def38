"""Portal reply drafting and EditJudge (seed 000): cases, drafting systems, content- and theme-level Edit-F1."""

from bedside.tasks.drafting.cases import ClinicianReply, PortalMessage, load_portal_messages, with_chart_from
from bedside.tasks.drafting.systems import draft_reply

__all__ = ["ClinicianReply", "PortalMessage", "draft_reply", "load_portal_messages", "with_chart_from"]
