"""The command line's shell: the `edt` group, the options and checks every command shares,
and how a failure becomes one line and an exit status."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import BadInput, MirrorDamaged, RunFailed, ToolkitError, said_stopped
from ..plans import PLANS, normalize_plan

if TYPE_CHECKING:  # the query layer is imported by the commands that open a mirror
    from ..query import Mirror

__all__ = [
    "main",
    "cli",
    "BadInput",
    "RunFailed",
    "db_option",
    "plan_option",
    "timeout_option",
    "choice_option",
    "open_mirror",
    "note_opened",
    "key_value_pairs",
    "check_plan",
    "check_writable",
    "check_port",
    "refresh_index",
    "timeout_bound",
    "say_retry",
]

# What a run noted on click's context (shared by every command's context): the mirror its
# --db names, and the one it opened, for the one line main() says about a lock or a damaged file.
_DB, _OPENED, _MIRROR = "edt.db", "edt.opened", "edt.mirror"


class _Said(click.ClickException):
    """A ToolkitError as click shows it: its one line after `edt: `, its exit status."""

    def __init__(self, error: ToolkitError):
        super().__init__(error.said())
        self.error = error
        self.exit_code = error.exit_status  # type: ignore[misc]  # click reads it from the instance too

    def show(self, file: Any = None) -> None:
        click.echo(f"edt: {self.format_message()}", err=True)


class _Group(click.Group):
    """`edt`: every command's ToolkitError becomes its one line and exit status, by type (an
    ApiError refusing a request, a malformed filter, a plan's 403: its message, exit 2)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ToolkitError as exc:
            raise _Said(exc) from None


def db_option(func):
    from ..config import mirror_path

    def chosen(ctx: click.Context, param: Any, value: str | None) -> str:
        ctx.meta[_DB] = path = mirror_path(value)
        return path

    return click.option(
        "--db",
        "db",
        envvar="EDT_DB",
        default=None,
        callback=chosen,
        show_default="data/mirror.db here, or in the nearest folder above holding one",
        help="The mirror's SQLite file (env EDT_DB, else the config file's db).",
    )(func)


def plan_option(func):
    return click.option(
        "--plan",
        default=None,
        help=f"Answer as this plan ({', '.join(PLANS)}); default EDT_PLAN, else enterprise (your own mirror).",
    )(func)


def check_plan(plan: str | None, where: str = "--plan") -> str | None:
    """`plan` normalised; a bad one is bad input naming `where` (the option, or EDT_PLAN)."""
    if plan is None:
        return None
    try:
        return normalize_plan(plan)
    except ValueError as exc:
        raise BadInput(f"{where}: {exc}") from None


def key_value_pairs(items: Iterable[str]) -> dict[str, Any]:
    """KEY=VALUE arguments; a repeated KEY becomes a list, which the query layer merges into a
    list filter's comma list (tld=.fr tld=.de is tld=.fr,.de) or refuses (exit 2) for a
    one-value parameter, as the HTTP API and the MCP tools do."""
    from ..query.params import gather

    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadInput(f"expected KEY=VALUE (e.g. tld=.fr), got {item!r}")
        pairs.append((key.strip(), value))
    return gather(pairs)


def note_opened(db: str) -> None:
    """Note on click's context the mirror this run opened (main() names it in a lock's line)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_OPENED] = db


def open_mirror(db: str, *, must_exist: bool = True, writes: str | None = None) -> Mirror:
    """The mirror at `db`. `writes`: the command, when it writes to the mirror, which is then
    refused with one line (exit 2) if the file is in a read-only place (a reading command
    opens it read-only instead, saying so). A damaged file is one line naming it and `edt
    doctor` (exit 2); `edt demo` (writes="demo") first checks an existing mirror is sound."""
    if must_exist and not Path(db).is_file():
        raise BadInput(f"{db}: no mirror there; run `edt demo` (demo data) or `edt sync` first, or pass --db")
    if writes:
        check_writable(db, writes)
        _check_signal_inputs()
    note_opened(db)
    _check_now()
    if writes == "demo":
        _check_sound(db)
    from ..config import load_settings
    from ..query import Mirror

    try:  # a bad setting (EDT_BASE_URL, the config's plan) is said as itself, not as the mirror's fault
        load_settings(db=db)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    try:
        mirror = Mirror(db, create=True)  # a load makes it; a reader was refused above
    except Exception as exc:  # noqa: BLE001 - a file that is not a mirror, or a damaged one
        if _sqlite_code(exc) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            raise  # held past the busy timeout: main() names the holder and the fix (exit 1)
        if _sqlite_code(exc) in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR):
            raise  # no room to write (a new mirror's tables, an upgrade): main() says so (exit 1)
        damage = _damage_of(exc)
        if damage is not None:
            raise _damaged(db, damage) from None
        raise BadInput(f"{db}: cannot open as a mirror ({exc})") from None
    ctx = click.get_current_context(silent=True)
    if ctx is not None:  # held on the command's context, closed when the command is done
        ctx.meta[_MIRROR] = mirror
        ctx.call_on_close(mirror.close)
    return mirror


def _check_now() -> None:
    """A bad `EDT_NOW` or thread setting is one line (exit 2), before the mirror is opened."""
    from ..config import frozen_now, thread_limit

    try:
        frozen_now()
        thread_limit()
    except ValueError as exc:
        raise BadInput(str(exc)) from None


def _check_sound(db: str) -> None:
    """Before a bulk load (`edt demo`, `edt demo --clear`) writes to an existing mirror:
    SQLite's quick_check (0.05 s on a small mirror; at full scale 1.1 s cached, 22 s from a
    cold disk here), and a damaged file refused in one line with nothing written (a load
    would rewrite it around the damage)."""
    from ..store.doctor import check_sound

    path = Path(db)
    if not path.is_file() or path.stat().st_size == 0:
        return
    words = check_sound(db)
    if words:
        raise _damaged(db, words)


def _damage_of(exc: BaseException) -> sqlite3.DatabaseError | None:
    """SQLite's "the file is damaged" in `exc` or what caused it, else None."""
    from ..store.doctor import damage_in

    return damage_in(exc)


def _damaged(db: str, damage: BaseException | str) -> MirrorDamaged:
    """The one line for a damaged mirror at `db` (`damage`: the error, or SQLite's words)."""
    from ..store.doctor import damage_words, damaged_line

    return MirrorDamaged(damaged_line(db, damage if isinstance(damage, str) else damage_words(damage)))


def _mirror_path(meta: dict[str, Any]) -> str:
    """The mirror a run used: the one it opened, else its --db (or EDT_DB, or the default)."""
    from ..config import mirror_path

    return meta.get(_OPENED) or meta.get(_DB) or mirror_path()


def _sqlite_code(exc: BaseException) -> int | None:
    """SQLite's primary result code of a sqlite3 error (SQLITE_BUSY, SQLITE_FULL, ...), else None."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(exc, sqlite3.Error) and code is not None else None


def refresh_index(db: str | Mirror) -> None:
    """After a write: rebuild the mirror's columnar index, so the next reader need not (a
    failure only costs speed: queries are then answered by SQLite)."""
    from ..query import Mirror

    mirror = db if isinstance(db, Mirror) else Mirror(db, create=True)
    try:
        mirror.refresh_indexes()
    except Exception as exc:  # noqa: BLE001
        damage = _damage_of(exc)
        if damage is not None:  # not a matter of speed: the file is damaged
            raise _damaged(mirror.path, damage) from None
        click.echo(f"edt: the columnar index was not rebuilt ({exc}); queries use SQLite until it is", err=True)


def _check_signal_inputs() -> None:
    """Bad input for a command that writes listings: a spam word list or an ECB file that
    cannot be read is one line and exit 2, before anything is written."""
    from ..signals.fx import fx_table
    from ..signals.spam import current_dictionary

    current_dictionary()  # an unreadable word list: SpamDictionaryError, bad input said by the group
    try:
        fx_table()
    except ValueError as exc:
        raise BadInput(str(exc)) from None


def check_writable(db: str, command: str) -> None:
    from ..store.access import read_only_place

    why = read_only_place(db)
    if why:
        raise BadInput(
            f"{db} is {why}: `edt {command}` writes to the mirror; copy it to a writable place and pass "
            "--db PATH (reading commands work on it as it is)"
        )


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="expired-domains-toolkit")
def cli() -> None:
    """Expired Domains Toolkit: a local mirror of expired, deleted and pending-delete domains."""


def choice_option(flag: str, choices: list[str], default: str, help: str) -> Callable[[Any], Any]:
    """An option taking one of `choices`, its default shown in --help."""
    return click.option(flag, type=click.Choice(choices), default=default, show_default=True, help=help)


def timeout_option(func):
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        help="Give up on a host that stays unreachable (refused, no DNS, timeouts) this long, with one line "
        "(env EDT_TIMEOUT; default 60). Retries are printed as they happen.",
    )(func)


def timeout_bound(timeout: float | None) -> float:
    from ..sync.remote import network_bound

    try:
        return network_bound(timeout)
    except ValueError as exc:
        raise BadInput(str(exc)) from None


def say_retry(line: str) -> None:
    click.echo(f"edt: {line}", err=True)


def check_port(host: str, port: int, option: str = "--port") -> None:
    """One line and exit status 2 when the address cannot be bound (in use, or not this machine's)."""
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise BadInput(f"--host {host}: not an address of this machine ({exc.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn and Streamlit bind
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise BadInput(
                    f"{option} {port}: already in use on {host} (another `edt serve` or `edt app`?); "
                    f"stop it or choose another port with {option}"
                ) from None
            raise BadInput(f"--host {host} {option} {port}: cannot listen there ({exc.strerror})") from None


def main(args: list[str] | None = None) -> None:
    """`edt`: click's own handling of the command line, plus one line for any failure: a
    ToolkitError's own (its exit status), a damaged mirror however a command met it (exit 2),
    a stop by Ctrl-C, even while a failure is being said (exit 130), and anything unexpected
    (exit 1; EDT_DEBUG=1 shows the traceback)."""
    try:
        _run(args)
    except KeyboardInterrupt:  # Ctrl-C in a command that says nothing of its own (the loads say what they kept)
        if os.environ.get("EDT_DEBUG"):
            raise
        said_stopped()
        click.echo("edt: interrupted", err=True)
        raise SystemExit(130) from None


def _run(args: list[str] | None) -> None:
    meta: dict[str, Any] = {}
    try:
        with cli.make_context("edt", list(sys.argv[1:] if args is None else args)) as ctx:
            meta = ctx.meta
            cli.invoke(ctx)
    except click.exceptions.Exit as exc:  # --help, --version
        raise SystemExit(exc.exit_code) from None
    except click.ClickException as exc:  # a command's own line, unless it was about a damaged file
        if exc.exit_code == 130:  # a load stopped by Ctrl-C
            said_stopped()
        damage = _damage_of(exc)
        said_damage = isinstance(getattr(exc, "error", None), MirrorDamaged)
        shown = exc if damage is None or said_damage else _Said(_damaged(_mirror_path(meta), damage))
        shown.show()
        raise SystemExit(shown.exit_code) from None
    except click.Abort:  # Ctrl-C, as click says it
        click.echo("Aborted!", err=True)
        raise SystemExit(1) from None
    except SystemExit:
        raise
    except Exception as exc:  # the one place that turns a failure into one line and an exit status
        if os.environ.get("EDT_DEBUG"):
            raise
        if isinstance(exc, BrokenPipeError):  # the reader went away (`edt export ... | head`), as click does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(1) from None
        click.echo(f"edt: {_failure_line(exc, meta)}", err=True)
        raise SystemExit(2 if _damage_of(exc) is not None else 1) from None
    raise SystemExit(0)


def _failure_line(exc: Exception, meta: dict[str, Any]) -> str:
    """One line for an unexpected failure; a damaged file names itself and `edt doctor`; a
    lock that outlasted the busy timeout names who holds the mirror and the fix."""
    from ..store.access import locked_message, read_only_place

    damage = _damage_of(exc)
    if damage is not None:
        return _damaged(_mirror_path(meta), damage).said()
    disk = _disk_trouble(exc, meta)
    if disk is not None:
        return disk
    code = _sqlite_code(exc)
    if code is not None and meta.get(_OPENED):
        db = meta[_OPENED]
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return locked_message(db)
        if code == sqlite3.SQLITE_READONLY:
            why = read_only_place(db) or "read-only"
            return f"{db} is {why}: this command writes to the mirror; copy it to a writable place (--db PATH)"
    return str(exc)


def _disk_trouble(exc: BaseException, meta: dict[str, Any]) -> str | None:
    """The line for SQLite failing to write the mirror for want of room (SQLITE_FULL), or with
    a write error (SQLITE_IOERR: a full disk, a file-size or quota limit, a failing device):
    the file, the space left beside it and the fix. SQLite rolled the write under way back,
    so nothing of it was kept (a sync keeps the pages it committed before). None otherwise."""
    import shutil

    code = _sqlite_code(exc)
    if code not in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR):
        return None
    db = _mirror_path(meta)
    try:
        free = f"{shutil.disk_usage(Path(os.path.abspath(db)).parent).free / 1e6:,.0f} MB free there"
    except OSError:
        free = "free space unknown"
    if code == sqlite3.SQLITE_FULL:
        what = f"the disk is full ({free})"
    else:
        what = (
            f"SQLite could not write to it ({exc}; {free}): a full disk, a file-size or quota limit, or a "
            "failing device"
        )
    return f"{db}: {what}; the write under way was not kept. Free some space and run the command again"
