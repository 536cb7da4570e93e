"""The language of a domain's archived home page, detected offline (optional extra).

    pip install "expired-domains-toolkit[language]"     # py3langid: bundled model, no network

Steps, each usable on its own:
- `latest_home_page(captures)`: the capture to read, from the CDX rows the Wayback step
  already fetches: the latest valid-dated capture of the home page answered `200` with
  `text/html` (redirects, errors, revisits and images say nothing about the language).
  `wayback_summary_with_page` is `wayback.wayback_walk`'s summary with that capture.
- `fetch_page(client, page)`: the archived page as captured (`/web/{timestamp}id_/{original}`:
  the `id_` form serves the original bytes, without the Wayback banner or rewritten links).
- `page_text(body, content_type)`: the visible text (stdlib `html.parser`; script, style,
  noscript and template skipped, entities decoded), decoded by BOM, then the HTTP charset,
  then a `<meta>` charset, else UTF-8 with replacement.
- `detect_language(text)`: py3langid over all its languages, normalised probabilities. An
  answer is kept only when the text has at least `MIN_LETTERS` letters (navigation crumbs and
  "under construction" pages are not a language sample) and the top language's probability
  is at least `MIN_PROBABILITY` (0.9). py3langid 0.4 scales its probabilities by the text's
  length, so a page in one language scores above 0.99 while navigation words repeated or two
  languages mixed score 0.1-0.75. (0.3 is not accepted: its plain softmax gives any text
  near 1.0, e.g. "Home About Contact" repeated is Breton at 0.97, so no threshold could
  tell.) The result is an ISO 639-1 code in upper case (the mirror's `language` column);
  the detector's 3-letter labels map to their macrolanguage's code where ISO 639-3 names
  one (`yue` -> `ZH`), otherwise the page is undetermined.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

import httpx

from .wayback import Capture, WaybackSummary, wayback_walk
from .. import errors

__all__ = [
    "ARCHIVE_URL",
    "INSTALL_HINT",
    "MIN_LETTERS",
    "MIN_PROBABILITY",
    "PAGE_KEY",
    "ArchivedPage",
    "Detection",
    "LanguageUnavailable",
    "ArchiveFetchError",
    "latest_home_page",
    "wayback_summary_with_page",
    "fetch_page",
    "check_page_body",
    "decode_html",
    "page_text",
    "load_detector",
    "detect_language",
    "page_language",
]

ARCHIVE_URL = "https://web.archive.org/web"
INSTALL_HINT = 'pip install "expired-domains-toolkit[language]"'
MIN_LETTERS = 200
MIN_PROBABILITY = 0.9
MAX_TEXT = 20_000  # characters given to the detector: more adds time, not accuracy
MAX_BYTES = 2_000_000  # of a page decoded
PAGE_KEY = "home_page"  # the capture's key in a cached Wayback summary

# Reasons a page gives no language (counted in the enrichment report).
NO_CAPTURE = "no archived home page"
TOO_SHORT = "too short"
LOW_CONFIDENCE = "low confidence"
NO_ISO_CODE = "no ISO 639-1 code"
NOT_HTML = "not HTML"

# py3langid labels without an ISO 639-1 code whose macrolanguage has one.
_MACRO = {
    "yue": "zh",
    "wuu": "zh",
    "arz": "ar",
    "ary": "ar",
    "uzs": "uz",
    "gug": "gn",
    "ltg": "lv",
    "fuv": "ff",
    "sdh": "ku",
}


class LanguageUnavailable(errors.ToolkitError, ImportError):
    """py3langid is not installed; the message names the extra that brings it."""


class ArchiveFetchError(errors.Unreachable):
    """The archive did not serve the page (throttled or down after every retry)."""


# -- which capture ----------------------------------------------------------------------


@dataclass(frozen=True)
class ArchivedPage:
    timestamp: str  # CDX form, YYYYMMDDhhmmss
    original: str  # the URL as captured

    @property
    def url(self) -> str:
        return f"{ARCHIVE_URL}/{self.timestamp}id_/{self.original}"

    def to_json(self) -> dict[str, str]:
        return {"timestamp": self.timestamp, "original": self.original}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> "ArchivedPage | None":
        return cls(str(data["timestamp"]), str(data["original"])) if data else None


def _is_home(capture: Capture) -> bool:
    # `url=<domain>` is an exact match on the home page; the check keeps other rows out
    # should a caller pass a prefix query's captures.
    return not capture.urlkey or capture.urlkey.endswith(")/")


def latest_home_page(captures: Iterable[Capture]) -> ArchivedPage | None:
    """The latest capture of the home page answered 200 with text/html, or None."""
    best: Capture | None = None
    for c in captures:
        if c.when is None or c.statuscode != "200" or not _is_home(c):
            continue
        if c.mimetype.split(";")[0].strip().lower() != "text/html":
            continue
        if best is None or c.when > best.when:  # type: ignore[operator]
            best = c
    return ArchivedPage(best.timestamp, best.original) if best else None


def wayback_summary_with_page(
    client: httpx.Client, domain: str, **options: Any
) -> tuple[WaybackSummary, ArchivedPage | None]:
    """`wayback.wayback_walk`'s summary, and `latest_home_page` of the captures it read
    (options as there)."""
    summary, captures = wayback_walk(client, domain, **options)
    return summary, latest_home_page(captures)


# -- fetching and text ------------------------------------------------------------------


def check_page_body(response: httpx.Response) -> None:
    """Raise ValueError when a 200 page is shorter than its Content-Length (cut off in
    transit; the retry layer then asks again). Encoded bodies are decoded by httpx, so only
    identity bodies can be measured."""
    declared = response.headers.get("Content-Length", "").strip()
    if response.status_code != 200 or not declared.isdigit():
        return
    if response.headers.get("Content-Encoding", "identity").strip().lower() not in ("", "identity"):
        return
    if len(response.content) < int(declared):
        raise ValueError(f"archived page cut off: {len(response.content)} of {declared} bytes")


def fetch_page(client: httpx.Client, page: ArchivedPage) -> httpx.Response:
    """The archived page's response. 4xx answers are returned (an answer: the archive has no
    such page); a 429 or 5xx left after the client's retries raises ArchiveFetchError."""
    response = client.get(page.url)
    if response.status_code == 429 or response.status_code >= 500:
        raise ArchiveFetchError(f"archived page: HTTP {response.status_code}")
    return response


_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)""", re.IGNORECASE)
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
# As browsers do (WHATWG Encoding): these labels mean their supersets.
_SUPERSETS = {"iso8859-1": "cp1252", "ascii": "cp1252", "gb2312": "gb18030", "gbk": "gb18030"}  # codecs.lookup names


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip().strip("\"'")).name
    except LookupError:
        return None
    return _SUPERSETS.get(name, name)


def _content_type_charset(content_type: str | None) -> str | None:
    match = re.search(r"charset\s*=\s*[\"']?([^\s;\"']+)", content_type or "", re.IGNORECASE)
    return match.group(1) if match else None


def decode_html(body: bytes, content_type: str | None = None) -> str:
    """BOM, then the HTTP charset, then the first `<meta>` charset, else UTF-8; bytes that do
    not decode are replaced."""
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body.decode(encoding, errors="replace")
    meta = _META_CHARSET.search(body[:4096])
    for label in (_content_type_charset(content_type), meta.group(1).decode("ascii") if meta else None):
        name = _codec(label)
        if name and not name.startswith("utf-16"):  # a page that declares UTF-16 but has no BOM lies
            return body.decode(name, errors="replace")
    return body.decode("utf-8", errors="replace")


_SKIP = frozenset({"script", "style", "noscript", "template"})
# Inline elements join the text around them; every other tag separates words.
_INLINE = frozenset(
    {
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "cite",
        "code",
        "data",
        "dfn",
        "em",
        "font",
        "i",
        "kbd",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "time",
        "u",
        "var",
    }
)


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skipping += 1
        elif tag not in _INLINE:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag not in _INLINE:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def page_text(body: bytes | str, content_type: str | None = None) -> str:
    """The visible text of an HTML page, whitespace collapsed."""
    html = body if isinstance(body, str) else decode_html(body[:MAX_BYTES], content_type)
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.parts).split())


# -- detection --------------------------------------------------------------------------


@dataclass(frozen=True)
class Detection:
    language: str | None  # ISO 639-1, upper case; None: undetermined
    reason: str | None = None  # why undetermined
    label: str | None = None  # the detector's own label
    probability: float | None = None
    letters: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Detection":
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


_IDENTIFIER: Any = None


def load_detector() -> Any:
    """The py3langid identifier with normalised probabilities (loaded once). Raises
    LanguageUnavailable, naming the extra to install, when py3langid is missing."""
    global _IDENTIFIER
    if _IDENTIFIER is None:
        try:
            from py3langid import langid
        except ImportError as exc:
            raise LanguageUnavailable(f"language detection needs py3langid: {INSTALL_HINT}") from exc
        if not hasattr(langid.LanguageIdentifier, "from_model_file"):  # 0.3: uncalibrated probabilities
            raise LanguageUnavailable(f"language detection needs py3langid 0.4 or later: {INSTALL_HINT}")
        _IDENTIFIER = langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=True)
    return _IDENTIFIER


def detect_language(
    text: str, *, min_letters: int = MIN_LETTERS, min_probability: float = MIN_PROBABILITY
) -> Detection:
    """The language of `text` (see the module's docstring for when it is None)."""
    letters = sum(ch.isalpha() for ch in text)
    if letters < min_letters:
        return Detection(None, TOO_SHORT, letters=letters)
    label, probability = load_detector().classify(text[:MAX_TEXT])
    probability = round(float(probability), 4)
    label = str(label)
    code = label if len(label) == 2 else _MACRO.get(label)
    if probability < min_probability:
        return Detection(None, LOW_CONFIDENCE, label, probability, letters)
    if code is None:  # includes `zxx`, "no linguistic content"
        return Detection(None, NO_ISO_CODE, label, probability, letters)
    return Detection(code.upper(), None, label, probability, letters)


def page_language(client: httpx.Client, page: ArchivedPage | None) -> Detection:
    """Fetch the archived page and detect its language. No capture, a 4xx, a body that is
    not HTML: undetermined. Raises ArchiveFetchError or httpx.HTTPError when the archive
    failed, LanguageUnavailable without py3langid."""
    if page is None:
        return Detection(None, NO_CAPTURE)
    response = fetch_page(client, page)
    if response.status_code != 200:
        return Detection(None, f"HTTP {response.status_code}")
    content_type = response.headers.get("Content-Type")
    if content_type and "html" not in content_type.lower() and not content_type.lower().startswith("text/"):
        return Detection(None, NOT_HTML)
    return detect_language(page_text(response.content, content_type))
