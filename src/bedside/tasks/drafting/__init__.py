"""Portal reply drafting and EditJudge (seed 000): cases, drafting systems, content- and theme-level Edit-F1.

The names below are imported when first used (PEP 562): ``bedside drafting ...`` and the task's CLI group load
this package, and its cases and systems pull in numpy and the theme classifier.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'bedside.tasks.drafting' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"bedside.tasks.drafting.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = ["ClinicianReply", "PortalMessage", "draft_reply", "load_portal_messages", "with_chart_from"]
