"""Expired Domains Toolkit: a local, queryable mirror of expired-domain listings.

    from toolkit import Mirror, ApiError
    m = Mirror("data/mirror.db")
    page = m.search_domains({"tld": ".fr", "tf_min": "20"}, plan="authority")

The names below are imported when first used (`import toolkit` loads nothing else), so a
command that needs none of them starts at once.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "ApiError",
    "DOMAIN_PARAMS",
    "FREE_PARAMS",
    "Mirror",
    "PENDING_PARAMS",
    "PLANS",
    "Param",
    "normalize_plan",
]

__version__ = "0.1.0"

# Each public name and the module it comes from.
_LAZY = {
    "ApiError": ".errors",
    "DOMAIN_PARAMS": ".query.params",
    "FREE_PARAMS": ".query.params",
    "Mirror": ".query",
    "PENDING_PARAMS": ".query.params",
    "PLANS": ".plans",
    "Param": ".query.params",
    "normalize_plan": ".plans",
}


def lazy_exports(package: str, origins: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module `__getattr__` and `__dir__` (PEP 562): each name of `origins` is
    imported from its module (relative to `package`) when first used, then kept. The root
    and the rooms whose names cost an import (query, sync, analysis) share this one."""

    def __getattr__(name: str) -> Any:
        module = origins.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *origins})

    return __getattr__, __dir__


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
