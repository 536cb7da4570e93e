"""Domain names: public suffix, the label left of it, and its shape.

tldextract decides the public suffix from its bundled Public Suffix List snapshot, never
from the network (`suffix_list_urls=()`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["split_domain", "label_stats", "normalize_tld", "ascii_name", "shown_name", "registrable_name"]


@lru_cache(maxsize=1)
def _extractor() -> Any:
    import tldextract  # imported when first needed: it brings requests, which a command may never use

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=False)


def _extract(name: str) -> Any:
    return _extractor()(name)


_PLACEHOLDER = "edt-placeholder-label"  # a label no suffix rule names


@lru_cache(maxsize=65536)
def _suffix_of(rest: str) -> str | None:
    """The public suffix of `<label>.rest` for any ordinary label, or None when the rules
    depend on the label itself (wildcards), which the caller then extracts in full."""
    suffix = _extract(f"{_PLACEHOLDER}.{rest}").suffix
    return suffix if suffix == rest or rest.endswith("." + suffix) or not suffix else None


def split_domain(name: str) -> tuple[str, str]:
    """`example.co.uk` -> (`example`, `.co.uk`). Unknown suffixes fall back to the last label."""
    name = name.strip().lower().rstrip(".")
    first, _, rest = name.partition(".")
    if not rest:
        return name, ""
    suffix = _suffix_of(rest)
    if suffix is None:
        parts = _extract(name)
        return parts.domain or first, f".{parts.suffix}" if parts.suffix else ""
    if suffix == rest:
        return first, f".{suffix}"
    if not suffix:  # not on the list: treat the last label as the suffix
        head, _, last = name.rpartition(".")
        return head.rpartition(".")[2], f".{last}"
    head = name[: -len(suffix) - 1]
    return head.rpartition(".")[2], f".{suffix}"


def label_stats(label: str) -> tuple[int, int, int]:
    """(length, hyphens, digits) of a label."""
    return len(label), label.count("-"), sum(map(str.isdigit, label))


def normalize_tld(value: str, *, dot: bool = True) -> str:
    """`.CO.UK`, `co.uk` -> `.co.uk` (or `co.uk` with dot=False)."""
    bare = value.strip().lower().lstrip(".")
    return f".{bare}" if dot else bare


_LDH = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def ascii_name(text: str) -> str:
    """A name as the mirror holds it: lower case, an IDN written in letters as its xn-- form
    (`Müller.de` -> `xn--mller-kva.de`); ValueError when it cannot be one."""
    name = str(text).strip().lower().rstrip(".")
    if name.isascii():
        return name
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError(f"{text!r} is not a valid internationalised domain name") from None


def shown_name(name: str) -> str:
    """A name as a person reads it: its xn-- labels in letters (`xn--bcher-kva.com` ->
    `bücher.com`); any other name, or a label that does not decode, as it is."""
    if "xn--" not in name:
        return name
    try:
        return name.encode("ascii").decode("idna")
    except UnicodeError:
        return name


def registrable_name(text: str) -> str:
    """`Example.COM.` -> `example.com`: a name one registers (one label under a public suffix
    the bundled list knows), lower case, an IDN in its xn-- form as the mirror holds names
    (`Bücher.com` -> `xn--bcher-kva.com`); ValueError saying what is wrong otherwise (a bare
    word, a URL, a subdomain, an unknown suffix, a label that is not letters, digits and
    inner hyphens)."""
    name = str(text).strip().lower().rstrip(".")
    if not name or "/" in name or ":" in name or " " in name:
        raise ValueError(f"{text!r} is not a domain name (write it as example.com)")
    try:
        written = name.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError(f"{text!r} is not a domain name: a label is empty, too long or not allowed") from None
    labels = written.split(".")
    if len(labels) < 2 or not all(_LDH.fullmatch(label) for label in labels):
        raise ValueError(f"{text!r} is not a domain name (letters, digits and inner hyphens, as example.com)")
    suffix = _extract(written).suffix
    if not suffix:
        raise ValueError(f"{text!r}: .{labels[-1]} is not a public suffix the toolkit knows")
    if written.count(".") != suffix.count(".") + 1:
        shown = (
            "a public suffix itself"
            if written == suffix
            else f"a subdomain; watch {'.'.join(labels[-suffix.count('.') - 2 :])}"
        )
        raise ValueError(f"{text!r} is {shown}")
    return written
