"""Portal reply drafting and EditJudge (seed 000): cases, drafting systems, content- and theme-level Edit-F1.

The names below are imported when first used (PEP 562): ``bedside drafting ...`` and the task's CLI group load
this package, and its cases and systems pull in numpy and the theme classifier.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bedside.lazy import lazy_names

if TYPE_CHECKING:
    from bedside.tasks.drafting.cases import ClinicianReply, PortalMessage, load_portal_messages, with_chart_from
    from bedside.tasks.drafting.systems import draft_reply

_WHERE = {
    "ClinicianReply": "cases",
    "PortalMessage": "cases",
    "load_portal_messages": "cases",
    "with_chart_from": "cases",
    "draft_reply": "systems",
}


__getattr__ = lazy_names(__name__, _WHERE)


__all__ = ["ClinicianReply", "PortalMessage", "draft_reply", "load_portal_messages", "with_chart_from"]
