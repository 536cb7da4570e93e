"""Embedded vocabularies for pronounceable demo domain names, one per language.

Each language has nouns grouped by theme (the theme also picks a fitting topical
category), adjectives, affixes, connectors for phrase names (`maison-du-vin`), cities,
and a few words with diacritics for IDN names. Everything is plain ASCII except
`idn`, which is punycode-encoded when used.
"""

from __future__ import annotations

import configparser
from dataclasses import dataclass, field
from importlib import resources

__all__ = ["Lang", "LANGS", "THEMES", "THEME_TOPICS", "BRAND_SYLLABLES", "BRAND_ENDINGS"]

THEMES = ("biz", "tech", "health", "home", "travel", "food", "sport", "arts", "shop", "news", "science", "games")


def _w(text: str) -> tuple[str, ...]:
    return tuple(text.split())


@dataclass(frozen=True)
class Lang:
    key: str
    code: str  # content-language code as the service writes it (upper case)
    world: str  # Majestic-style "World/<language>" topic, "" for English
    themes: dict[str, tuple[str, ...]]
    adjectives: tuple[str, ...]
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    connectors: tuple[str, ...] = ()
    adj_after: bool = False  # romance languages: "maisonbleue"
    cities: tuple[str, ...] = ()
    idn: tuple[str, ...] = ()
    nouns: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        seen: dict[str, None] = {}
        for words in self.themes.values():
            for word in words:
                seen.setdefault(word, None)
        object.__setattr__(self, "nouns", tuple(seen))


def _langs() -> dict[str, Lang]:
    """Every language of words.ini, in its order."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(resources.files(__package__).joinpath("words.ini").read_text(encoding="utf-8"))
    langs = {}
    for key in parser.sections():
        section = parser[key]
        lists = {name: _w(section.get(name, "")) for name in ("prefixes", "suffixes", "connectors", "cities", "idn")}
        langs[key] = Lang(
            key,
            section["code"],
            section["world"],
            themes={theme: _w(section[theme]) for theme in THEMES},
            adjectives=_w(section["adjectives"]),
            adj_after=section.getboolean("adj_after", fallback=False),
            **lists,
        )
    return langs


LANGS: dict[str, Lang] = _langs()

# Brandable names (NamePros, NameShift): pronounceable consonant-vowel syllables.
BRAND_SYLLABLES = _w("""ka lo ri ve zo na mi tu sa ne ra vi lu mo ta be ko li da fi ga ze no pa so le ma ti
    ro ny vo ax el or an is um en ar zen vex tor lum nix sol pix ova ari""")
BRAND_ENDINGS = _w("a o ia io ex ly fy ify era ora ix on ity eo ara")

# Topical categories by theme: "Category/Sub" paths, Category from the seed's 16.
THEME_TOPICS: dict[str, tuple[str, ...]] = {
    "biz": (
        "Business/Financial Services",
        "Business/Marketing and Advertising",
        "Business/Real Estate",
        "Business/Consulting",
        "Business/Construction and Maintenance",
        "Society/Law",
        "Business/Employment",
    ),
    "tech": (
        "Computers/Internet/Web Design and Development",
        "Computers/Software",
        "Computers/Internet",
        "Computers/Hardware",
        "Business/E-Commerce",
        "Computers/Security",
    ),
    "health": (
        "Health/Fitness",
        "Health/Medicine",
        "Health/Dentistry",
        "Health/Alternative",
        "Health/Nutrition",
        "Shopping/Health",
        "Health/Beauty",
    ),
    "home": (
        "Home/Gardening",
        "Home/Home Improvement",
        "Home/Family",
        "Home/Cooking",
        "Shopping/Home and Garden",
        "Recreation/Pets",
    ),
    "travel": (
        "Recreation/Travel",
        "Recreation/Outdoors",
        "Recreation/Travel/Lodging",
        "Recreation/Boating",
        "Sports/Cycling",
    ),
    "food": ("Home/Cooking", "Recreation/Food", "Shopping/Food", "Business/Hospitality", "Recreation/Food/Drink/Wine"),
    "sport": (
        "Sports/Soccer",
        "Sports/Golf",
        "Sports/Tennis",
        "Sports/Running",
        "Sports/Cycling",
        "Sports/Winter Sports",
    ),
    "arts": ("Arts/Music", "Arts/Photography", "Arts/Movies", "Arts/Literature", "Arts/Design", "Arts/Performing Arts"),
    "shop": (
        "Shopping/Clothing",
        "Shopping/Gifts",
        "Shopping/Jewelry",
        "Shopping/Toys and Games",
        "Business/E-Commerce",
    ),
    "news": (
        "News/Newspapers",
        "News/Magazines and E-zines",
        "Society/Issues",
        "Reference/Education",
        "Society/Religion and Spirituality",
        "Society/Organizations",
        "News/Weblogs",
    ),
    "science": (
        "Science/Environment",
        "Science/Biology",
        "Science/Physics",
        "Science/Earth Sciences",
        "Science/Technology",
        "Reference/Libraries",
    ),
    "games": ("Games/Video Games", "Games/Board Games", "Games/Puzzles", "Games/Card Games", "Games/Gambling"),
}
