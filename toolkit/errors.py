"""ApiError and the error bodies the REST API answers (docs/reference/errors.md), and
MirrorMissing, what a reader meets where no mirror is."""

from __future__ import annotations

from typing import Any

__all__ = ["ApiError", "MirrorMissing", "invalid", "not_found", "unauthenticated", "cursor_not_available"]


class MirrorMissing(FileNotFoundError):
    """No mirror at the path a reader opens (a reader never makes one): one line naming the
    path and what makes one."""

    def __init__(self, path: str):
        self.path = path
        super().__init__(
            f"{path}: no mirror there; `edt demo` makes one with demo data (`edt sync`, or `edt sync "
            "--feeds` without a key, with real data)"
        )


class ApiError(Exception):
    """An error with the HTTP status and JSON body the REST API would answer."""

    def __init__(self, status: int, body: dict[str, Any]):
        self.status = status
        self.body = body
        super().__init__(f"{status}: {body.get('message', body)}")

    @property
    def field(self) -> str | None:
        """The first parameter named by a 422, if any."""
        errors = self.body.get("errors") or {}
        return next(iter(errors), None)


def invalid(field: str, message: str) -> ApiError:
    """422 naming the field, as Laravel's validator answers."""
    return ApiError(422, {"message": message, "errors": {field: [message]}})


def not_found() -> ApiError:
    return ApiError(404, {"message": "Not found."})


def unauthenticated(hint: str = "") -> ApiError:
    """401 with the reference's body, `{"message": "Unauthenticated."}`; `hint`, a sentence
    after it, says where the key goes (the replica's own words: never the key itself)."""
    return ApiError(401, {"message": f"Unauthenticated. {hint}".strip()})


def cursor_not_available() -> ApiError:
    return ApiError(
        403,
        {
            "error": "cursor_not_available",
            "message": "The after_id cursor never returns source=regfree rows: page through regfree with page/per_page.",
        },
    )
