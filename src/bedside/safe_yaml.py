"""YAML written by users, read with bounds, so that a small file cannot become a huge object.

Anchors and aliases (``&a`` / ``*a``) let a document reuse a node. PyYAML shares the node, so loading one is
cheap, but whatever walks the result (validating a config, hashing it, storing it, rendering a rubric into a
prompt) visits every use: nine levels of ten aliases are a billion values from about 700 bytes. Merge keys
(``<<: *a``) are worse: PyYAML expands them itself while building the result.

So the node graph is measured before anything is built: values and characters are counted with multiplicity,
memoised per shared node, which keeps measuring linear in the size of the file. A document whose expansion is
over the bound, one that contains itself through an alias, or one nested too deeply for the parser, is refused.
Ordinary reuse (a block of settings shared by a few systems) is far below the bounds.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_NODES = 100_000
"""Values (scalars, lists, mappings, keys included) a document may expand to, counting every alias use."""
MAX_CHARS = 10_000_000
"""Characters a document may expand to (scalars' text plus a little per value, about its size as JSON)."""


class YamlLimitError(ValueError):
    """The document expands beyond the bounds, contains itself, nests too deeply, or gives a key twice in one
    mapping; nothing was built."""


def safe_load(text: str, *, max_nodes: int = MAX_NODES, max_chars: int = MAX_CHARS) -> Any:
    """``yaml.safe_load`` within the bounds; :class:`YamlLimitError` (or ``yaml.YAMLError``) otherwise."""
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YamlLimitError("refused: the YAML is nested too deeply") from None
        if node is None:
            return None
        nodes, chars = expanded_size(node)
        if nodes > max_nodes:
            raise YamlLimitError(
                f"refused: with its aliases expanded the YAML holds {nodes:,} values, more than the "
                f"{max_nodes:,} allowed (nested aliases, as in a 'billion laughs' document?)"
            )
        if chars > max_chars:
            raise YamlLimitError(
                f"refused: with its aliases expanded the YAML is about {chars:,} characters, more than the "
                f"{max_chars:,} allowed"
            )
        repeated_key(node)  # after the bounds: a bomb is refused without walking its aliases twice
        try:
            return loader.construct_document(node)
        except RecursionError:
            raise YamlLimitError("refused: the YAML is nested too deeply") from None
        except yaml.YAMLError:
            raise
        except (ValueError, OverflowError) as exc:  # a 5,000-digit int, a date like 2020-13-45 or year 0
            raise YamlLimitError(f"refused: a value cannot be read: {exc}") from None
    finally:
        loader.dispose()


def repeated_key(root: yaml.Node) -> None:
    """Refuse a mapping that gives a key twice: PyYAML keeps the last without a word, so a config's second
    ``plain:`` system would silently replace the first. Merge keys (``<<``) are YAML's own and may repeat."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                    line = key.start_mark.line + 1
                    if key.value in first:
                        raise YamlLimitError(
                            f"refused: key {key.value!r} is given twice in one mapping (lines {first[key.value]} "
                            f"and {line}): the second would silently replace the first"
                        )
                    first[key.value] = line
        stack.extend(_children(node))


def expanded_size(root: yaml.Node) -> tuple[int, int]:
    """(values, characters) of ``root`` with every alias expanded, without expanding anything.

    Iterative, so a deep document cannot exhaust the stack here; a node met again while one of its own
    descendants is being measured means the document contains itself.
    """
    done: dict[int, tuple[int, int]] = {}
    entered: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        key = id(node)
        if leaving:
            nodes, chars = 1, 2
            for child in _children(node):
                child_nodes, child_chars = done[id(child)]
                nodes += child_nodes
                chars += child_chars + 1
            done[key] = (nodes, chars)
            entered.discard(key)
            continue
        if key in done:
            continue
        if key in entered:  # entered and not left: an ancestor of the node that led here
            raise YamlLimitError("refused: an alias in the YAML refers to a node that contains it")
        if isinstance(node, yaml.ScalarNode):
            done[key] = (1, len(node.value) + 2)
            continue
        entered.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    return done[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
