"""Some of an object's attributes as a dict: the plain part of a report's `to_dict`."""

from __future__ import annotations

from typing import Any

__all__ = ["picked"]


def picked(obj: object, *names: str) -> dict[str, Any]:
    """`{name: obj.name}` for each of `names`, in that order."""
    return {name: getattr(obj, name) for name in names}
