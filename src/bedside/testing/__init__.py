"""Helpers for testing code built on bedside: a scripted OpenAI-compatible server and pytest fixtures."""

from bedside.llm.scripted_server import FaultSpec, ScriptedServer

__all__ = ["FaultSpec", "ScriptedServer"]
