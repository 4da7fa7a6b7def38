"""MedAlign's terms of use, where bedside can help keep them: a warning before record text leaves the machine.

The release's data use agreement forbids sending its data to services that are not HIPAA-compliant (and any
training on it). bedside cannot know an endpoint's compliance, so it warns whenever a MedAlign-sourced case is
sent to an endpoint that is not on this machine (a base URL whose host is not loopback), once per endpoint and
process, and stores the warning with every result it applies to, so a run's store shows that it was given.
"""

from __future__ import annotations

import ipaddress
import warnings
from urllib.parse import urlparse

from bedside.llm.config import ModelConfig

LOCAL_PROVIDERS = frozenset({"embedded", "scripted", "transformers"})
_warned: set[str] = set()


class MedAlignTermsWarning(UserWarning):
    """MedAlign data is about to go to an endpoint that is not on this machine."""


def is_local(config: ModelConfig) -> bool:
    if config.provider in LOCAL_PROVIDERS:
        return True
    if not config.base_url:
        return False  # a provider's default endpoint is a remote service
    host = urlparse(config.base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def terms_warning(config: ModelConfig, *, medalign_sourced: bool) -> str | None:
    """The warning text when MedAlign data would go to a non-local endpoint (warned once per endpoint), else None."""
    if not medalign_sourced or is_local(config):
        return None
    where = config.base_url or f"the {config.provider} provider's default endpoint"
    message = (
        f"MedAlign data is being sent to {where}, which is not on this machine: the MedAlign data use agreement "
        "forbids sending its data to services that are not HIPAA-compliant. Make sure this endpoint is covered."
    )
    if where not in _warned:
        _warned.add(where)
        warnings.warn(MedAlignTermsWarning(message), stacklevel=2)
    return message
