"""MedAlign's instruction taxonomy as data (``data/taxonomy.toml``): 6 categories, 20 subcategories, aliases.

Labels arrive spelled several ways (the paper's "Retrieve & Summarize" is "information retrieval" in the public
taxonomy CSV; subcategories there read "retrieve medical history"). :func:`resolve_subcategory` and
:func:`resolve_category` match case- and space-insensitively through the alias table and raise
:class:`TaxonomyError` naming the label and the known names, so an unknown label never becomes a new category.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from bedside.inputs import InputError, loads_toml, read_text

TAXONOMY_FILE = Path(__file__).parent / "data" / "taxonomy.toml"


class TaxonomyError(InputError):
    """A category or subcategory label that the taxonomy does not know."""


@dataclass(frozen=True)
class Category:
    name: str
    aliases: tuple[str, ...]
    gold: int  # of the 303 gold instructions (Table 2)
    all: int  # of the 983 de-duplicated instructions (Table 2)


@dataclass(frozen=True)
class Subcategory:
    name: str
    category: str
    aliases: tuple[str, ...]
    gold: int  # of the 303 gold instructions (Table S2)
    all: int  # of the 1,314 collected instructions (Table S2)


@dataclass(frozen=True)
class Taxonomy:
    categories: tuple[Category, ...]
    subcategories: tuple[Subcategory, ...]

    def category(self, label: str) -> Category:
        found = _index(tuple((c.name, c.aliases) for c in self.categories)).get(_key(label))
        if found is None:
            known = ", ".join(c.name for c in self.categories)
            raise TaxonomyError(f"unknown instruction category {label!r}; known: {known}")
        return next(c for c in self.categories if c.name == found)

    def subcategory(self, label: str) -> Subcategory:
        found = _index(tuple((s.name, s.aliases) for s in self.subcategories)).get(_key(label))
        if found is None:
            known = ", ".join(s.name for s in self.subcategories)
            raise TaxonomyError(f"unknown instruction subcategory {label!r}; known: {known}")
        return next(s for s in self.subcategories if s.name == found)


def _key(label: str) -> str:
    return " ".join(label.lower().replace("_", " ").split())


@lru_cache(maxsize=8)
def _index(entries: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, str]:
    return {_key(alias): name for name, aliases in entries for alias in (name, *aliases)}


def read_taxonomy(path: str | Path = TAXONOMY_FILE) -> Taxonomy:
    path = Path(path)
    data = loads_toml(read_text(path, error=TaxonomyError), path=path, error=TaxonomyError)
    try:
        categories = tuple(
            Category(c["name"], tuple(c.get("aliases", ())), int(c["gold"]), int(c["all"])) for c in data["category"]
        )
        subcategories = tuple(
            Subcategory(s["name"], s["category"], tuple(s.get("aliases", ())), int(s["gold"]), int(s["all"]))
            for s in data["subcategory"]
        )
    except KeyError as exc:
        raise TaxonomyError(f"{path}: an entry lacks the field {exc}") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise TaxonomyError(f"{path}: an entry has a field of the wrong type ({exc})") from None
    names = {c.name for c in categories}
    for sub in subcategories:
        if sub.category not in names:
            raise TaxonomyError(f"{path}: subcategory {sub.name!r} names an unknown category {sub.category!r}")
    return Taxonomy(categories, subcategories)


@lru_cache(maxsize=1)
def taxonomy() -> Taxonomy:
    """The shipped taxonomy."""
    return read_taxonomy()


def resolve_subcategory(label: str) -> Subcategory:
    return taxonomy().subcategory(label)


def resolve_category(label: str) -> Category:
    return taxonomy().category(label)
