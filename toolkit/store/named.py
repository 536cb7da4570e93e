"""A declared table of named things (feeds, jobs, adapters, parameters) as a dict by name."""

from __future__ import annotations

from typing import Protocol, TypeVar

__all__ = ["Named", "by_name"]


class Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=Named)


def by_name(*items: N) -> dict[str, N]:
    """`{item.name: item}`, in the order given (a later item of the same name wins)."""
    return {item.name: item for item in items}
