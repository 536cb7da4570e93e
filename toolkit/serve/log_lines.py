"""What `edt serve` writes to its log: uvicorn's own lines and the libraries' (the MCP
transport's warnings), each one line of text whatever a client sent (a control character
in a query or a session id is escaped, so no client writes a line of its own), with the
value of a key sent as a query parameter left out (`log_config`)."""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import unquote

from .web import KEY_QUERY_PARAMETERS

__all__ = ["OneSafeLine", "log_config"]

_KEY_VALUE = re.compile(r"(?i)(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, KEY_QUERY_PARAMETERS)) + r")=[^&\s\"]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _escaped(char: re.Match[str]) -> str:
    return f"\\x{ord(char.group()):02x}"


def safe_line(text: str) -> str:
    """`text` as one line: control characters escaped, key values left out."""
    return _CONTROL.sub(_escaped, _KEY_VALUE.sub(r"\1=(left out)", text))


class OneSafeLine(logging.Filter):
    """A log record's message and arguments made safe (`safe_line`) before it is formatted.
    uvicorn's access line keeps its arguments (its formatter reads them by place); a key in
    a query is found percent-encoded too."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = safe_line(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_safe_arg(a) for a in record.args)
        return True


def _safe_arg(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    line = safe_line(value)
    decoded = unquote(value)
    if decoded != value and _KEY_VALUE.search(decoded):  # api%5Fkey=...: left out as well
        line = safe_line(decoded)
    return line


def log_config() -> dict[str, Any]:
    """uvicorn's logging configuration with `OneSafeLine` on each handler, and the other
    libraries' records (the root logger's) written by the same handler as uvicorn's."""
    import uvicorn.config

    config: dict[str, Any] = {**uvicorn.config.LOGGING_CONFIG, "filters": {"one_safe_line": {"()": OneSafeLine}}}
    config["handlers"] = {
        name: {**handler, "filters": ["one_safe_line"]} for name, handler in config["handlers"].items()
    }
    config["root"] = {"handlers": ["default"], "level": "WARNING"}
    return config
