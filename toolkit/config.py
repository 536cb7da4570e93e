"""Settings from the environment and an optional config file.

Order: explicit argument > environment (`EDT_*`) > config file (`EDT_CONFIG`, default
`~/.config/edt/config.toml`) > default. The API key is read here and only handed to the
sync client; it is never logged, printed or written to the mirror.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .plans import normalize_plan

__all__ = [
    "Settings",
    "is_web_address",
    "load_settings",
    "config_file",
    "config_path",
    "configured_plan",
    "user_path",
    "frozen_now",
    "DEFAULT_DB",
    "LOCAL_PLAN",
    "mirror_path",
    "thread_limit",
    "bounded_threads",
    "CONFIG_KEYS",
]

DEFAULT_DB = "data/mirror.db"
DEFAULT_BASE_URL = "https://catchdoms.com"
# Your own mirror answers as the top plan unless you ask it to emulate a lower one
# (`--plan`, `EDT_PLAN`): regfree, pending-delete and export are all yours locally.
LOCAL_PLAN = "enterprise"


@dataclass(frozen=True)
class Settings:
    db: str = DEFAULT_DB
    base_url: str = DEFAULT_BASE_URL
    plan: str = LOCAL_PLAN
    api_key: str | None = field(default=None, repr=False)  # never shown

    def __repr__(self) -> str:  # belt and braces: the key never reaches a log line
        key = "set" if self.api_key else "unset"
        return f"Settings(db={self.db!r}, base_url={self.base_url!r}, plan={self.plan!r}, api_key={key})"


def config_path() -> Path:
    """The config file: `EDT_CONFIG`, else `~/.config/edt/config.toml`."""
    return Path(os.path.expanduser(os.environ.get("EDT_CONFIG", Path.home() / ".config" / "edt" / "config.toml")))


# The config file's top level: its settings, then its tables (docs/getting-started.md and the guides).
CONFIG_KEYS = (
    "db",
    "base_url",
    "plan",
    "api_key",
    "threads",
    "spam_words",
    "ecb_file",
    "schedule",
    "alerts",
    "archive",
    "feeds",
)


def config_file() -> dict:
    """The config file read, its top-level names checked (a misspelt one would be ignored)."""
    path = config_path()
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        try:
            conf = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not valid TOML ({exc}); fix or remove the file") from None
    unknown = [key for key in conf if key not in CONFIG_KEYS]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0].replace("-", "_"), CONFIG_KEYS, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}? " if close else ""
        raise ValueError(f"{path}: unknown setting {unknown[0]!r}: {hint}the file takes {', '.join(CONFIG_KEYS)}")
    for key in ("db", "base_url", "plan", "api_key", "spam_words", "ecb_file"):
        if key in conf and not isinstance(conf[key], str):
            raise ValueError(f'{path}: {key} must be text in quotes ({key} = "..."), not {type(conf[key]).__name__}')
    return conf


ARCHIVE_CLOSED_BEFORE = "180d"  # `edt archive`'s cut when neither --closed-before nor the config says


def archive_setting() -> str | None:
    """The config file's `[archive] closed_before` (e.g. "180d"): when set, `edt schedule`
    archives daily what closed before it; None when unset."""
    value = config_file().get("archive", {}).get("closed_before")
    return None if value is None else str(value)


PACK_AFTER = "30d"  # `edt archive`'s packing age when neither --pack-after nor the config says


def pack_setting() -> str | None:
    """The config file's `[archive] pack_after` (e.g. "30d"; "none" packs nothing): when set,
    `edt schedule` packs daily what closed before it; None when unset."""
    value = config_file().get("archive", {}).get("pack_after")
    return None if value is None else str(value)


def user_path(value: object) -> str | None:
    """A path a user wrote in the config file (or the environment): `~` expanded, as a shell
    would; None for no value."""
    return os.path.expanduser(str(value)) if value else None


def configured_plan(conf: dict | None = None) -> str | None:
    """The config file's `plan` (from `conf`, the file already read, if given), normalised;
    None when unset; a bad one raises ValueError naming the file."""
    value = (config_file() if conf is None else conf).get("plan")
    if not value:
        return None
    try:
        return normalize_plan(value)
    except ValueError as exc:
        raise ValueError(f"{config_path()}: plan: {exc}") from None


def mirror_path(given: str | os.PathLike[str] | None = None, conf: dict | None = None) -> str:
    """The mirror every command, the app and the notebooks open: `given` (`--db`), else
    `EDT_DB`, else the config file's `db`, else `data/mirror.db` in the current folder or in
    the nearest folder above it that holds one (a notebook's kernel starts in `notebooks/`),
    else `data/mirror.db` here (where a first `edt demo` makes it)."""
    chosen = given or os.environ.get("EDT_DB") or user_path((config_file() if conf is None else conf).get("db"))
    if chosen:
        return os.fspath(chosen)
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / DEFAULT_DB).is_file():
            return DEFAULT_DB if folder == here else os.path.relpath(folder / DEFAULT_DB)
    return DEFAULT_DB


def is_web_address(url: str) -> bool:
    """An http:// or https:// address with a host: what the base URL, a webhook and the RDAP
    bootstrap may be (`https:/catchdoms.com` or `https://` alone is not)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def load_settings(
    *, db: str | None = None, base_url: str | None = None, plan: str | None = None, api_key: str | None = None
) -> Settings:
    conf = config_file()
    try:
        chosen_plan = normalize_plan(plan or os.environ.get("EDT_PLAN") or configured_plan(conf) or LOCAL_PLAN)
    except ValueError as exc:  # the setting it came from, by the order above
        raise ValueError(f"{'--plan' if plan else 'EDT_PLAN'}: {exc}") from None
    url, where = next(
        (value, name)
        for value, name in (
            (base_url, "--base-url"),
            (os.environ.get("EDT_BASE_URL"), "EDT_BASE_URL"),
            (conf.get("base_url"), f"{config_path()}: base_url"),
            (DEFAULT_BASE_URL, "the default"),
        )
        if value
    )
    if not is_web_address(str(url)):
        raise ValueError(f"{where}: {url!r} is not an http:// or https:// address (e.g. https://catchdoms.com)")
    return Settings(
        db=mirror_path(db, conf),
        base_url=str(url).rstrip("/"),
        plan=chosen_plan,
        api_key=api_key or os.environ.get("EDT_API_KEY") or conf.get("api_key") or None,
    )


def frozen_now() -> datetime | None:
    """The moment `EDT_NOW` names (ISO 8601; UTC when it has no offset), or None for the real
    clock. Readers then answer as of that moment: what was live then, dates relative to it
    (reproduce what a page showed; tests whose live set must not move while they run)."""
    text = os.environ.get("EDT_NOW")
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"EDT_NOW: {text!r} is not an ISO 8601 moment (e.g. 2026-11-20T12:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def thread_limit() -> int:
    """Threads one toolkit process gives a training or a heavy NumPy step: `EDT_THREADS`, else
    the config file's `threads`, else half the machine's cores (at least one). Two jobs on one
    machine then each take about their time alone, where OpenMP threads spinning against each
    other on every core made two trainings at once 24 times slower."""
    text = os.environ.get("EDT_THREADS")
    where = "EDT_THREADS"
    if not text:
        text, where = config_file().get("threads"), f"{config_path()}: threads"
    if text in (None, ""):
        return max(1, (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1) // 2)
    try:
        value = int(str(text).strip())
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{where}: {text!r} is not a number of threads (a whole number, 1 or more)")
    return value


@contextmanager
def bounded_threads(limit: int | None = None) -> Iterator[int]:
    """Hold OpenMP's and BLAS's thread pools (scikit-learn's training, NumPy) to `limit`
    (default `thread_limit()`) inside the block (threadpoolctl); yields the limit."""
    import sklearn.utils._openmp_helpers  # noqa: F401  # loads OpenMP: threadpoolctl limits only libraries loaded
    from threadpoolctl import threadpool_limits

    chosen = limit or thread_limit()
    with threadpool_limits(limits=chosen):
        yield chosen
