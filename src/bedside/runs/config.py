"""A run's configuration: one YAML or TOML file, validated, with overrides from the environment and the CLI.

Example (``configs/drafting-demo.yaml``)::

    name: drafting-demo
    task: drafting                      # a registered task, or package.module:attribute
    datasets:
      demo: {limit: 6}                  # task-specific: path, limit, options
    systems:
      zero_shot: {type: zero_shot}      # the task's system, with its options
    models:
      system: [embedded/smollm2-135m]   # a list makes a grid: one cell per model
      judge: embedded/smollm2-135m      # other roles: one model each
    settings:
      system: {max_tokens: 256, temperature: 0.0}
    model_options:                      # endpoint options by role (timeout_s, max_retries, max_concurrency, price)
      system: {timeout_s: 60}
    scorers: [bleu, rougeL, "cosine"]   # omitted: the task's defaults
    repeats: 1
    seed: 0
    concurrency: 16
    store: runs/bedside.sqlite          # a path, or any SQLAlchemy URL (postgresql://...)

Cells are dataset × system × system model. Overrides, later ones winning: the file, then ``BEDSIDE_*``
variables naming a top-level key (``BEDSIDE_CONCURRENCY=8``; nested keys with double underscores,
``BEDSIDE_SYSTEMS__RAG__OPTIONS__K=3``), then ``--set systems.rag.options.k=3``. Values are read as YAML, so
``3`` is a number and ``[a, b]`` a list. Variables that name no config key (``BEDSIDE_PROMPTS``, ...) are not
config overrides, and neither is ``BEDSIDE_CACHE``: it is the default cache of every command, used when neither
``--cache`` nor the config's ``cache:`` names one, so a config that names its cache keeps it.

The run's identity is a hash of everything that can change a result (not ``concurrency``, ``store`` or
``cache``): re-running an unchanged config resumes the same run.

A config is data and may come from someone else, so it is read with bounds: YAML is loaded through
:mod:`bedside.safe_yaml` (aliases may not expand it beyond 100,000 values or about 1 MB), the file itself may be
at most 1 MB, and so may the whole config after overrides, measured as JSON. A small file that would expand to
gigabytes once validated, hashed and stored is refused before any of that happens. For the same reason
``repeats`` is bounded (:data:`MAX_REPEATS`; a few characters would otherwise plan 10^12 samples and spin at
full CPU): the user running the command, not the config, may raise the bound with ``BEDSIDE_MAX_REPEATS``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bedside.config_errors import problems
from bedside.inputs import InputError, loads_toml, read_text
from bedside.llm.types import ROLES
from bedside.safe_yaml import MAX_NODES, YamlLimitError, safe_load

EXECUTION_ONLY = ("concurrency", "store", "cache", "runtime_env")
MAX_CONFIG_BYTES = 1_000_000
"""The most a config file, and the whole config after overrides (as JSON), may weigh."""
MAX_REPEATS = 1000
"""The most repeats a config may ask for unless ``BEDSIDE_MAX_REPEATS`` (set by the user) allows more."""
MAX_REPEATS_ENV = "BEDSIDE_MAX_REPEATS"
NOT_OVERRIDES = ("BEDSIDE_CACHE",)
"""``BEDSIDE_*`` variables that match a config key but are the commands' defaults, not config overrides."""


class ConfigError(InputError):
    """A config file cannot be read or does not validate; the message names the file and the key."""


class DatasetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = None
    limit: int | None = Field(default=None, ge=1)
    options: dict[str, Any] = Field(default_factory=dict)


class SystemConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    options: dict[str, Any] = Field(default_factory=dict)


class RuntimeEnvConfig(BaseModel):
    """What ``--executor ray`` ships to every worker (Ray's ``runtime_env``), as the CLI's ``--py-module`` and
    ``--working-dir`` do: folders and environment variables only. Packages are never installed at run time
    (Ray's ``pip``/``conda`` would fetch them): a cluster's image holds them."""

    model_config = ConfigDict(extra="forbid")

    py_modules: list[str] = Field(default_factory=list)
    """Package folders shipped to every worker (your task's package)."""
    working_dir: str | None = None
    """A folder shipped to every worker as its working directory (at most 100 MiB)."""
    env_vars: dict[str, str] = Field(default_factory=dict)


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    task: str
    datasets: dict[str, DatasetConfig] = Field(min_length=1)
    systems: dict[str, SystemConfig] = Field(min_length=1)
    aliases: dict[str, str | dict[str, Any]] = Field(default_factory=dict)
    """Models by a name of the user's choosing: a model string or a model block (``provider``, ``model``,
    ``base_url``, ``api_key_env``, ...). ``models`` may name an alias wherever it takes a model string; the
    alias is then the model's name in cells, tables and the store."""
    models: dict[str, list[str]]
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    model_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    scorers: list[str] | None = None
    repeats: int = Field(default=1, ge=1)
    seed: int = 0
    concurrency: int = Field(default=16, ge=1)
    store: str = "runs/bedside.sqlite"
    cache: str | None = None
    runtime_env: RuntimeEnvConfig | None = None
    """For ``--executor ray``: folders and variables shipped to the workers (the CLI's flags add to it)."""

    @field_validator("repeats")
    @classmethod
    def _bounded_repeats(cls, value: int) -> int:
        limit = max_repeats()
        if value > limit:
            raise ValueError(
                f"at most {limit:,} repeats are allowed (got {value:,}); "
                f"if you mean it, raise the bound: {MAX_REPEATS_ENV}={value}"
            )
        return value

    @field_validator("models", mode="before")
    @classmethod
    def _models_as_lists(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {role: [spec] if isinstance(spec, str) else spec for role, spec in value.items()}
        return value

    @field_validator("models")
    @classmethod
    def _known_roles(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for role, specs in value.items():
            if role not in ROLES:
                raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
            if not specs:
                raise ValueError(f"role {role!r} has no model")
            if role != "system" and len(specs) > 1:
                raise ValueError(f"only the system role may list several models (a grid); {role!r} has {len(specs)}")
        if "system" not in value:
            raise ValueError("a model for the 'system' role is required")
        return value

    @field_validator("aliases")
    @classmethod
    def _valid_aliases(cls, value: dict[str, str | dict[str, Any]]) -> dict[str, str | dict[str, Any]]:
        from bedside.llm.config import parse_model_spec
        from bedside.llm.errors import ModelConfigError

        for name, spec in value.items():
            if not ALIAS_NAME.match(name):
                raise ValueError(
                    f"alias {name!r}: a name is letters, digits, '_', '.' or '-' (no '/', which model strings use)"
                )
            try:
                parse_model_spec(spec)
            except ModelConfigError as exc:
                raise ValueError(f"alias {name!r}: {exc}") from None
        return value

    @model_validator(mode="after")
    def _distinct_system_models(self) -> RunConfig:
        seen: dict[str, str] = {}
        for ref in self.models["system"]:
            label = self.model_label(ref)
            if label in seen:
                raise ValueError(
                    f"models.system: {seen[label]!r} and {ref!r} are both the model {label!r} (a model is named by "
                    "provider and model name, not by where it is served); if they are different weights, give "
                    "them different model names, or aliases"
                )
            seen[label] = ref
        return self

    def model_spec(self, ref: str) -> str | dict[str, Any]:
        """What to build for a model named in ``models``: its alias's definition, or the model string itself."""
        return self.aliases.get(ref, ref)

    def model_label(self, ref: str) -> str:
        """The model's name in cells, tables and the store: the alias, or ``PROVIDER/MODEL`` without the URL
        (a URL made cell names hundreds of characters wide, and moving a server to another port renamed them)."""
        if ref in self.aliases:
            return ref
        return without_url(ref)

    def model_identity(self, ref: str) -> str | dict[str, Any]:
        """What identifies a model's answers, in the run's identity and each sample's key: provider and model name
        (and, for a model block, the options that change answers), never the URL, key or transport settings.
        Serving the same model from another host or port is the same model; a different model name is not."""
        spec = self.model_spec(ref)
        if isinstance(spec, str):
            return without_url(spec)
        from bedside.llm.config import parse_model_spec

        config = parse_model_spec(spec)
        kept = config.model_dump(include=ANSWER_FIELDS, exclude_defaults=True)
        return {"provider": config.provider, "model": config.model, **kept}

    @field_validator("model_options")
    @classmethod
    def _options_roles(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        from bedside.llm.config import ModelConfig

        allowed = set(ModelConfig.model_fields) - {"provider", "model", "base_url"}
        for role, options in value.items():
            if role not in ROLES:
                raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
            unknown = sorted(set(options) - allowed)
            if unknown:
                raise ValueError(
                    f"{role}: unknown model option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
                )
        return value

    @field_validator("settings")
    @classmethod
    def _settings_roles(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        from bedside.llm.types import GenerationSettings

        for role, settings in value.items():
            if role not in ROLES:
                raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
            try:
                GenerationSettings.model_validate(settings)
            except ValidationError as exc:  # said with the role, which pydantic's path would lose
                said = problems(exc, root=GenerationSettings, with_input=True)
                raise ValueError(
                    "; ".join(f"{role}.{p}" if p.split(":")[0].isidentifier() else f"{role}: {p}" for p in said)
                ) from None
        return value

    def identity(self) -> str:
        """Hash of everything that can change a result: models by :meth:`model_identity`, so a server moved to
        another port is the same run, and aliases by what they name (renaming one keeps the run only if it names
        the same models)."""
        data = self.model_dump(exclude={*EXECUTION_ONLY, "aliases"})
        data["models"] = {role: [self.model_identity(ref) for ref in refs] for role, refs in self.models.items()}
        if self.aliases:
            data["labels"] = {role: [self.model_label(ref) for ref in refs] for role, refs in self.models.items()}
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()

    @property
    def run_id(self) -> str:
        return f"{self.name}-{self.identity()[:10]}"


ALIAS_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
ANSWER_FIELDS = {"structured_mode", "empty_retry_max_tokens", "options"}
"""Model block fields besides provider and model that change answers (the rest say where and how to ask)."""
_URL_SUFFIX = re.compile(r"@https?://\S*$")


def without_url(spec: str) -> str:
    """A model string without its ``@URL`` part (and so without any ``user:password@`` in it)."""
    return _URL_SUFFIX.sub("", spec.strip())


def max_repeats() -> int:
    """:data:`MAX_REPEATS`, or the user's ``BEDSIDE_MAX_REPEATS``."""
    text = os.environ.get(MAX_REPEATS_ENV, "").strip()
    if not text:
        return MAX_REPEATS
    try:
        return max(1, int(text))
    except ValueError:
        raise ConfigError(f"{MAX_REPEATS_ENV}={text!r}: expected a whole number") from None


def _read(path: Path) -> dict[str, Any]:
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: the config file is {size:,} bytes; a config may be at most 1 MB")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    text = read_text(path, error=ConfigError)
    try:
        data = loads_toml(text, path=path, error=ConfigError) if path.suffix == ".toml" else _safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'YAML'}: {exc}") from None
    except YamlLimitError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping of keys to values")
    return data


def _set(data: dict[str, Any], dotted: str, value: Any, *, source: str) -> None:
    parts = [p for p in dotted.split(".") if p]
    if not parts:
        raise ConfigError(f"{source}: empty key")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"{source}: cannot set {dotted!r}: {part!r} is not a mapping")
        node = child
    node[parts[-1]] = value


def _safe_load(text: str) -> Any:
    return safe_load(text, max_nodes=MAX_NODES, max_chars=MAX_CONFIG_BYTES)


def _parse_value(text: str, *, source: str) -> Any:
    try:
        return _safe_load(text)
    except yaml.YAMLError:
        return text
    except YamlLimitError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _check_size(data: dict[str, Any], source: Path) -> None:
    # Each part was bounded when read; this bounds what they add up to, before validation copies it.
    size = len(json.dumps(data, default=str, skipkeys=True, ensure_ascii=False).encode("utf-8"))
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{source}: with its overrides the config is {size:,} bytes as JSON; a config may be at most 1 MB"
        )


def environment_overrides(environ: Mapping[str, str] | None = None) -> list[tuple[str, Any, str]]:
    """``BEDSIDE_*`` variables whose first segment names a config key, as (dotted key, value, variable)."""
    fields = set(RunConfig.model_fields)
    found = []
    for variable, text in sorted((environ if environ is not None else os.environ).items()):
        if not variable.startswith("BEDSIDE_") or variable in NOT_OVERRIDES:
            continue
        parts = [p.lower() for p in variable[len("BEDSIDE_") :].split("__")]
        if parts[0] in fields:
            found.append((".".join(parts), _parse_value(text, source=variable), variable))
    return found


def load_config(
    path: str | Path, overrides: Sequence[str] = (), *, environ: Mapping[str, str] | None = None
) -> RunConfig:
    """Read, override and validate a run config; every problem names the file (or variable/option) and key."""
    source = Path(path)
    data = _read(source)
    for dotted, value, variable in environment_overrides(environ):
        _set(data, dotted, value, source=variable)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. systems.rag.options.k=3")
        _set(data, key.strip(), _parse_value(text, source=f"--set {key.strip()}"), source=f"--set {item}")
    _check_size(data, source)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {'; '.join(problems(exc, root=RunConfig, with_input=True))}") from None
