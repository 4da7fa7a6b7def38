"""User YAML is read with bounds: nested aliases cannot turn a small file into gigabytes (issue 19)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bedside import safe_yaml
from bedside.cli import app
from bedside.judges import RubricError, rubric_from_file
from bedside.llm.scripted import ScriptedRules
from bedside.runs import ConfigError, load_config
from bedside.safe_yaml import YamlLimitError, expanded_size, safe_load

runner = CliRunner()

RUN = (
    "name: laughs\ntask: drafting\ndatasets: {demo: {limit: 1}}\nmodels: {system: scripted/echo}\n"
    "store: STORE\nsystems:\n  z: {type: zero_shot, options: {x: *i}}\n"
)


def laughs() -> str:
    """Nine levels of ten aliases: about 10^9 values once expanded, from a few hundred bytes."""
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for previous, current in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{current}: &{current} [" + ", ".join([f"*{previous}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def merges() -> str:
    """Merge keys that PyYAML itself would expand, doubling at every level, while loading."""
    lines = ["m0: &m0 {x: 1, y: 2}"]
    lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: 1}}" for i in range(1, 40)]
    return "\n".join(lines) + "\n"


class Work:
    """What refusing cost, counted rather than timed: collections the measure walked into, documents built."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.walked = 0
        self.built = 0
        children, construct = safe_yaml._children, yaml.SafeLoader.construct_document

        def counted_children(node: yaml.Node) -> list[yaml.Node]:
            self.walked += 1
            return children(node)

        def counted_construct(loader: yaml.SafeLoader, node: yaml.Node) -> object:
            self.built += 1
            return construct(loader, node)

        monkeypatch.setattr(safe_yaml, "_children", counted_children)
        monkeypatch.setattr(yaml.SafeLoader, "construct_document", counted_construct)


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Work:
    return Work(monkeypatch)


def test_alias_bombs_are_refused_before_anything_is_built(work: Work) -> None:
    for text in (laughs(), merges()):
        work.walked = 0
        with pytest.raises(YamlLimitError, match="more than the 100,000 allowed"):
            safe_load(text)
        assert work.built == 0
        # each shared node measured once (entered and left): linear in the file, not in its 10^9 expansion
        assert 0 < work.walked <= 2 * (text.count("[") + text.count("{") + 1)  # +1: the root mapping
    with pytest.raises(YamlLimitError, match="refers to a node that contains it"):
        safe_load("a: &a [1, *a]")
    with pytest.raises(YamlLimitError, match="characters"):
        safe_load("s: &s " + "x" * 1000 + "\nl: [" + ", ".join(["*s"] * 200) + "]", max_chars=100_000)


def test_ordinary_yaml_and_small_reuse_load_as_before() -> None:
    text = "base: &base {max_tokens: 64, temperature: 0.0}\nsystem: *base\njudge: {<<: *base, max_tokens: 8}\n"
    assert safe_load(text) == yaml.safe_load(text)
    assert safe_load("") is None
    assert safe_load("3") == 3
    # values: the root, its 3 keys, the base mapping (5) twice, judge (1, the merge key, base's 5, one pair)
    node = yaml.compose(text)
    assert node is not None
    assert expanded_size(node)[0] == 1 + 3 + 5 + 5 + 9


def test_a_billion_laughs_config_is_refused_by_load_config(tmp_path: Path, work: Work) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(laughs() + RUN.replace("STORE", str(tmp_path / "store.sqlite")), encoding="utf-8")
    assert path.stat().st_size < 800
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert work.built == 0
    assert work.walked <= 2 * path.read_text(encoding="utf-8").count("[") + 2 * 20
    message = str(caught.value)
    assert message.startswith(f"{path}: refused: with its aliases expanded")
    assert "100,000" in message


def test_bedside_run_refuses_it_at_once_and_writes_no_store(tmp_path: Path, work: Work) -> None:
    store = tmp_path / "store.sqlite"
    path = tmp_path / "laughs.yaml"
    path.write_text(laughs() + RUN.replace("STORE", str(store)), encoding="utf-8")
    result = runner.invoke(app, ["run", str(path), "--no-cache"])
    assert work.built == 0  # refused while measuring: nothing was expanded
    assert result.exit_code == 1
    assert "refused: with its aliases expanded" in result.output
    assert "Traceback" not in result.output
    assert not store.exists()
    assert list(tmp_path.iterdir()) == [path]


def test_a_config_sharing_settings_through_an_anchor_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    path.write_text(
        "name: shared\ntask: drafting\ndatasets: {demo: {limit: 2}}\nmodels: {system: scripted/echo}\n"
        "systems:\n"
        "  a: {type: zero_shot, options: &common {evaluate: false, matcher: embedding}}\n"
        "  b: {type: thematic, options: {<<: *common, k: 3}}\n"
        "settings:\n  system: &generation {max_tokens: 64, temperature: 0.0}\n  judge: *generation\n",
        encoding="utf-8",
    )
    config = load_config(path)
    assert config.systems["a"].options == {"evaluate": False, "matcher": "embedding"}
    assert config.systems["b"].options == {"evaluate": False, "matcher": "embedding", "k": 3}
    assert config.settings["judge"] == config.settings["system"] == {"max_tokens": 64, "temperature": 0.0}


def test_overrides_are_bounded_too(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(RUN.replace("{x: *i}", "{}").replace("STORE", str(tmp_path / "s.sqlite")), encoding="utf-8")
    flow = "{" + laughs().strip().replace("\n", ", ") + "}"
    with pytest.raises(ConfigError, match=r"^--set systems\.z\.options\.x: refused"):
        load_config(path, [f"systems.z.options.x={flow}"])
    with pytest.raises(ConfigError, match=r"^BEDSIDE_SEED: refused"):
        load_config(path, environ={"BEDSIDE_SEED": flow})
    # Each part within bounds, the whole over 1 MB as JSON.
    parts = [f"systems.z.options.note{i}={'x' * 400_000}" for i in range(3)]
    with pytest.raises(ConfigError, match=r"with its overrides the config is .* bytes as JSON; .* at most 1 MB"):
        load_config(path, parts)


def test_a_config_file_over_1_mb_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("name: big\n# " + "x" * 1_000_001 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bytes; a config may be at most 1 MB"):
        load_config(path)


def test_rubric_and_scripted_rules_files_use_the_bounded_loader(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(laughs() + "id: laughs\ncriteria: *i\n", encoding="utf-8")
    with pytest.raises(RubricError, match=f"^{re.escape(str(rubric))}: refused"):
        rubric_from_file(rubric)
    rules = tmp_path / "rules.yaml"
    rules.write_text(laughs() + "rules: []\ndefault: *i\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"^{re.escape(str(rules))}: refused"):
        ScriptedRules.from_file(rules)


def test_a_key_given_twice_in_one_mapping_is_refused_with_its_lines() -> None:
    text = "name: x\nsystems:\n  plain: {type: plain}\n  plain: {type: brief}\n"
    with pytest.raises(YamlLimitError, match=r"key 'plain' is given twice in one mapping \(lines 3 and 4\)"):
        safe_load(text)
    assert safe_load("base: &b {a: 1}\none:\n  <<: *b\n  b: 2\n") == {"base": {"a": 1}, "one": {"a": 1, "b": 2}}
    assert safe_load("a: {x: 1}\nb: {x: 1}\n") == {"a": {"x": 1}, "b": {"x": 1}}  # the same key in two mappings


def test_config_check_refuses_a_repeated_key(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app

    path = tmp_path / "run.yaml"
    path.write_text("name: x\ntask: drafting\nrepeats: 1\nrepeats: 3\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert "run.yaml: refused: key 'repeats' is given twice in one mapping (lines 3 and 4)" in result.output
