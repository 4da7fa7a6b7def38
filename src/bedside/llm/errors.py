"""Typed errors of the model layer.

Every error carries enough to explain itself in a report (endpoint, status, cause) and nothing secret: API keys
are scrubbed from messages before an error is built (see :func:`bedside.llm.secrets.redact`).
"""

from __future__ import annotations


class ModelError(Exception):
    """Base class for every failure of the model layer."""


class ModelConfigError(ModelError):
    """A model name or configuration block cannot be used (unknown provider, missing URL, missing weights)."""


class ModelRequestError(ModelError):
    """One request to an endpoint failed.

    ``retryable`` tells the wrapper whether trying again could help (rate limits, server errors, timeouts,
    dropped connections, unreadable bodies); ``retry_after`` is the wait the server asked for, in seconds.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class EndpointUnreachableError(ModelRequestError):
    """No connection could be made to the endpoint at all: the connection was refused (nothing listens on that
    host and port) or the host name does not resolve.

    Raised as retryable, but :class:`~bedside.llm.model.Model` retries it only for an endpoint that has answered
    before in this process (a server restarting under a run refuses for a moment); an endpoint that never
    answered fails at once, naming its URL, instead of backing off for half a minute per sample. A run stops at
    the first such error (see :func:`unreachable_cause`)."""


def unreachable_cause(exc: BaseException) -> EndpointUnreachableError | None:
    """The :class:`EndpointUnreachableError` behind ``exc`` (itself, or its cause or context, however a task
    wrapped it), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, EndpointUnreachableError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class EmptyAnswerError(ModelError):
    """The endpoint answered, but with no text: ``content`` was null or empty.

    Never retried as is (the same request gives the same nothing) and never cached; scoring it would turn a
    failure into a zero. ``finish_reason`` says why when the endpoint told (``length``: the tokens ran out).
    """

    def __init__(self, message: str, *, finish_reason: str | None) -> None:
        super().__init__(message)
        self.finish_reason = finish_reason


class ContentFilterError(ModelError):
    """The endpoint's content filter stopped the answer (``finish_reason: content_filter``).

    Whatever text came with it is not the model's answer to score: stored as an error naming the cause, never
    cached, never retried (the same request meets the same filter).
    """


class CacheMissError(ModelError):
    """A call made where only the cache may answer (a dry run) that the cache cannot answer."""


class RetriesExhaustedError(ModelError):
    """The wrapper gave up on a call after its bounded number of attempts; ``cause`` is the last failure."""

    def __init__(self, message: str, *, attempts: int, cause: ModelRequestError) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.cause = cause
        self.__cause__ = cause


class StructuredOutputError(ModelError):
    """The model's answer never validated against the requested schema, even after re-asking."""

    def __init__(
        self, message: str, *, attempts: int, last_text: str, last_error: str, rejected: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_text = last_text
        self.last_error = last_error
        self.rejected = rejected
        """Cache keys of the rejected answers, which a retry must ask again instead of replaying."""
