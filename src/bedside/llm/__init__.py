"""bedside's model layer: one async interface over OpenAI-compatible endpoints, the embedded offline model
and scripted answers, with caching, retries, limits, accounting and structured output shared by all."""

from bedside.llm.cache import ResponseCache, default_cache_path
from bedside.llm.config import ModelConfig, Price, parse_model_spec
from bedside.llm.errors import (
    ContentFilterError,
    EmptyAnswerError,
    ModelConfigError,
    ModelError,
    ModelRequestError,
    RetriesExhaustedError,
    StructuredOutputError,
)
from bedside.llm.model import Model, Structured, get_model
from bedside.llm.retry import RetryPolicy
from bedside.llm.types import ROLES, ChatMessage, Completion, GenerationSettings, Role, TokenUsage
from bedside.llm.usage import RoleUsage, UsageLedger

__all__ = [
    "ROLES",
    "ChatMessage",
    "Completion",
    "ContentFilterError",
    "EmptyAnswerError",
    "GenerationSettings",
    "Model",
    "ModelConfig",
    "ModelConfigError",
    "ModelError",
    "ModelRequestError",
    "Price",
    "ResponseCache",
    "RetriesExhaustedError",
    "RetryPolicy",
    "Role",
    "RoleUsage",
    "Structured",
    "StructuredOutputError",
    "TokenUsage",
    "UsageLedger",
    "default_cache_path",
    "get_model",
    "parse_model_spec",
]
