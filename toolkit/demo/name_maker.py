"""Pronounceable, unique demo domain names from the embedded vocabularies."""

from __future__ import annotations

import random

from .words import BRAND_ENDINGS, BRAND_SYLLABLES, LANGS, Lang

__all__ = ["NameMaker"]

_DIGITS = ("24", "360", "365", "1", "2", "4u", "7", "99", "123", "01", "88", "247", "3d", "4you", "101", "911", "2go")
_PHRASE_HYPHEN = {"fr": 0.65, "es": 0.5, "it": 0.5, "pt": 0.5, "de": 0.45, "nl": 0.35, "en": 0.25}


class NameMaker:
    """Makes names `label + tld`, never the same one twice (per instance)."""

    def __init__(self, rnd: random.Random):
        self.rnd = rnd
        self.used: set[str] = set()

    def brand(self) -> tuple[str, list[str]]:
        r = self.rnd.random
        syllables = BRAND_SYLLABLES
        label = "".join(syllables[int(r() * len(syllables))] for _ in range(2 if r() < 0.6 else 3))
        if r() < 0.5:
            label += BRAND_ENDINGS[int(r() * len(BRAND_ENDINGS))]
        return label, [label]

    def words(self, lang: Lang, theme: str) -> tuple[str, list[str]]:
        """A label of real words in `lang`, most of them about `theme`."""
        rnd = self.rnd
        r = rnd.random

        def ch(seq: tuple[str, ...]) -> str:  # random.choice without its overhead
            return seq[int(r() * len(seq))]

        topical = lang.themes.get(theme) or lang.nouns
        x = r()
        hyphen = 0.03
        if x < 0.28:
            parts = [ch(topical), ch(lang.nouns)]
        elif x < 0.46:
            parts = [ch(topical), ch(lang.adjectives)] if lang.adj_after else [ch(lang.adjectives), ch(topical)]
        elif x < 0.56 and lang.suffixes:
            pair = [ch(topical), ch(lang.adjectives)] if lang.adj_after else [ch(lang.adjectives), ch(topical)]
            parts = [*pair, ch(lang.suffixes)]
        elif x < 0.64 and lang.suffixes:
            parts = [ch(topical), ch(lang.suffixes)]
        elif x < 0.70 and lang.prefixes:
            parts = [ch(lang.prefixes), ch(topical)]
        elif x < 0.79 and lang.connectors:
            parts = [ch(topical), ch(lang.connectors), ch(lang.nouns)]
            hyphen = _PHRASE_HYPHEN.get(lang.key, 0.3)
        elif x < 0.86 and lang.cities:
            parts = [ch(topical), ch(lang.cities)] if r() < 0.7 else [ch(lang.cities), ch(topical)]
            hyphen = 0.35
        elif x < 0.93:
            parts = [ch(topical), ch(lang.nouns), ch(lang.nouns)]
        elif x < 0.955:
            parts = [ch(topical)] if r() < 0.5 else [ch(lang.adjectives), ch(topical), ch(lang.nouns)]
        else:
            parts = [ch(topical), ch(_DIGITS) if r() < 0.7 else str(1995 + int(r() * 30))]
            hyphen = 0.1
        label = ("-" if r() < hyphen else "").join(parts)
        return label, parts

    def make(self, lang_key: str, theme: str, tld: str, brandable: bool = False) -> tuple[str, list[str]]:
        """A new unique `name` and the words it was made of."""
        lang = LANGS.get(lang_key) or LANGS["en"]
        for attempt in range(40):
            if brandable and attempt < 30:
                label, parts = self.brand()
            else:
                label, parts = self.words(lang, theme)
            if attempt >= 25:  # crowded: add a short number
                label = f"{label}{self.rnd.randint(2, 999)}"
            if not 3 <= len(label) <= 40:
                continue
            name = label + tld
            if name not in self.used:
                self.used.add(name)
                return name, parts
        while True:  # practically unreachable
            label = f"{self.words(lang, theme)[0]}{self.rnd.randint(1000, 999_999)}"
            if label + tld not in self.used:
                self.used.add(label + tld)
                return label + tld, [label]

    def make_idn(self, lang_key: str, theme: str, tld: str) -> tuple[str, list[str]] | None:
        """An internationalised name (punycode `xn--` label), or None if `lang` has no such words."""
        lang = LANGS.get(lang_key)
        if lang is None or not lang.idn:
            return None
        for _ in range(20):
            word = self.rnd.choice(lang.idn)
            other = self.rnd.choice(lang.themes.get(theme) or lang.nouns)
            unicode_label = word + other if self.rnd.random() < 0.6 else other + word
            try:
                label = unicode_label.encode("idna").decode("ascii")
            except UnicodeError:
                continue
            if not label.startswith("xn--"):
                continue
            name = label + tld
            if name not in self.used:
                self.used.add(name)
                return name, [word, other]
        return None
