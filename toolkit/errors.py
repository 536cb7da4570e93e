"""The errors the toolkit raises on purpose, in one hierarchy:

    ToolkitError            one line: what went wrong and the fix; the exit status `edt` gives it
    ├── RunFailed           a run that could not finish (exit 1)
    ├── BadInput            an argument, a file or a setting that cannot be used (exit 2)
    │   └── MirrorMissing   no mirror where a reader looks (a reader never makes one)
    ├── MirrorDamaged       the mirror's file is damaged: `edt doctor` (exit 2)
    ├── MirrorBusy          another program holds the mirror (exit 1)
    ├── Unreachable         a host that stays unreachable past the time allowed (exit 1)
    └── ApiError            an answer of the service's API: its HTTP status and JSON body
                            (docs/reference/errors.md); a 4xx is bad input (exit 2)

Each room raises its own subclasses (`store.lock.MirrorBusy`, `ingest.common.IngestError`,
...); the command line maps them by type, in one place (`cli/shell.py`), never by their words.
A stop by Ctrl-C is no error: said in one line, exit 130, after `said_stopped()`.
"""

from __future__ import annotations

import signal
from typing import Any

__all__ = [
    "ToolkitError",
    "RunFailed",
    "BadInput",
    "MirrorMissing",
    "MirrorDamaged",
    "MirrorBusy",
    "Unreachable",
    "ApiError",
    "invalid",
    "not_found",
    "unauthenticated",
    "cursor_not_available",
    "said_stopped",
]


class ToolkitError(Exception):
    """An error raised on purpose: its message is one line saying what and the fix."""

    exit_status = 1

    def said(self) -> str:
        """The one line a command prints for it (after `edt: `)."""
        return str(self)


class RunFailed(ToolkitError):
    """A run that could not finish: what stopped it and what to do (exit 1)."""


class BadInput(ToolkitError, ValueError):
    """An argument, a file or a setting that cannot be used: the field or file, and the fix."""

    exit_status = 2


class MirrorDamaged(ToolkitError):
    """The mirror's file is damaged: the file, SQLite's words and `edt doctor`."""

    exit_status = 2


class MirrorBusy(ToolkitError, RuntimeError):
    """Another program holds the mirror: who, and what to do."""


class Unreachable(ToolkitError):
    """A host that stayed unreachable (refused, no DNS, timeouts) past the time allowed."""


class MirrorMissing(BadInput, FileNotFoundError):
    """No mirror at the path a reader opens (a reader never makes one): one line naming the
    path and what makes one."""

    def __init__(self, path: str):
        self.path = path
        super().__init__(
            f"{path}: no mirror there; `edt demo` makes one with demo data (`edt sync`, or `edt sync "
            "--feeds` without a key, with real data)"
        )


class ApiError(ToolkitError):
    """An error with the HTTP status and JSON body the REST API would answer."""

    def __init__(self, status: int, body: dict[str, Any]):
        self.status = status
        self.body = body
        super().__init__(f"{status}: {body.get('message', body)}")

    @property
    def exit_status(self) -> int:  # type: ignore[override]  # the status decides: a 4xx is the caller's input
        return 2 if 400 <= self.status < 500 else 1

    def said(self) -> str:
        """The message, led by the parameter a 422 names when the message does not say it."""
        field, message = self.field, self.body.get("message", str(self))
        return f"{field}: {message}" if field and field not in message else message

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


def said_stopped() -> None:
    """A stop that has been said ends the process with the status the command gives.

    - A second Ctrl-C (pressed twice; one pending while Python shuts down, when its handler is
      back to the default) is ignored: it would end the process by the signal after the line.
    - CPython remembers a KeyboardInterrupt that left code run by `exec` of a string (the
      methods dataclasses and namedtuple build at import) and at exit ends the process by
      SIGINT whatever its status (exit -2 for a parent). Any `exec` that completes forgets it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exec("")  # noqa: S102  (see above: clears CPython's "unhandled KeyboardInterrupt" mark)
