"""Commands that serve the mirror: `edt serve` (the REST replica), `edt mcp` (MCP on standard
input and output) and `edt app` (the Streamlit app)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .shell import BadInput, RunFailed, check_plan, check_port, db_option, plan_option, cli


def _address_options(verb: str, port: int) -> Callable[[Any], Any]:
    """--host, this machine only by default, and --port."""

    def add(func: Any) -> Any:
        func = click.option("--port", type=click.IntRange(1, 65535), default=port, show_default=True)(func)
        return click.option(
            "--host",
            default="127.0.0.1",
            show_default=True,
            help=f"Address to {verb}; the default lets only this machine connect (0.0.0.0: the network).",
        )(func)

    return add


@cli.command(name="app")
@db_option
@_address_options("listen on", 8501)
def app_command(db: str, host: str, port: int) -> None:
    """Open the investors' app (Streamlit) on the mirror: explore, charts, drop calendar, watchlist, sync."""
    import subprocess

    from ..serve.server import is_loopback

    check_port(host, port)
    script = Path(__file__).resolve().parents[1] / "ui" / "launch.py"
    env = {**os.environ, "EDT_DB": db}
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"edt app: {db} at http://{shown}:{port}/", err=True)
    if is_loopback(host):
        click.echo(
            f"Bound to {host}: only this machine can connect (use --host 0.0.0.0 to share on the network).", err=True
        )
    else:
        click.echo(
            f"WARNING: bound to {host}: other machines can connect, with no key or password, to the app "
            "and its sync button; plain HTTP. Use it on a trusted network only.",
            err=True,
        )
    from ..ui import streamlit_flags  # the users' options (no developer toolbar), as in .streamlit/config.toml

    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.address",
        host,
        "--server.port",
        str(port),
        *streamlit_flags(),
    ]
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        # Streamlit takes this process's place: stopping `edt app` by its process id (a
        # supervisor, systemd, a container stop, kill) stops the server, never orphans it.
        os.execve(sys.executable, command, env)
    raise SystemExit(subprocess.call(command, env=env))


@cli.command()
@db_option
@_address_options("bind", 8000)
@click.option(
    "--key",
    "keys",
    multiple=True,
    metavar="KEY=PLAN",
    help="An API key and its plan (repeatable), e.g. --key team-key=pro. Visible in `ps`: prefer --keys-file.",
)
@click.option(
    "--keys-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="KEY=PLAN lines or JSON {KEY: PLAN}; a key may be written sha256:<hex digest> so the file never holds it.",
)
@click.option(
    "--rate",
    "rates",
    multiple=True,
    metavar="PLAN=N",
    help="Override a plan's requests per minute (repeatable), e.g. --rate pro=600 for tests.",
)
def serve(db: str, host: str, port: int, keys: tuple[str, ...], keys_file: str | None, rates: tuple[str, ...]) -> None:
    """Serve the mirror as the REST API (/api/domains, ...) and /openapi.json on localhost."""
    from ..query import Mirror
    from ..serve.ratelimit import KeyStore, parse_rates
    from ..serve.server import serve as run_server

    if not Path(db).is_file():
        raise BadInput(f"{db}: no mirror there; run `edt demo` (demo data) or `edt sync` first, or pass --db")
    try:
        store = KeyStore.from_pairs(keys)
        if keys_file:
            if not Path(keys_file).is_file():
                raise ValueError(f"--keys-file: {keys_file} does not exist")
            store.load_file(keys_file)
        limits = parse_rates(rates)
    except (ValueError, OSError) as exc:
        raise BadInput(str(exc)) from None
    try:
        Mirror(db, readonly=True).close()
    except Exception as exc:  # not a mirror, or an older schema
        raise BadInput(f"{db}: cannot serve ({exc})") from None
    check_port(host, port)
    run_server(db, host=host, port=port, keys=store, rates=limits, echo=lambda line: click.echo(line, err=True))


@cli.command(name="mcp")
@db_option
@plan_option
def mcp_command(db: str, plan: str | None) -> None:
    """Serve the mirror to AI assistants as an MCP server on standard input and output."""
    import importlib.util
    import logging

    from ..query import Mirror

    plan = check_plan(plan)
    if not Path(db).is_file():
        raise BadInput(f"{db}: no mirror there; run `edt demo` (demo data) or `edt sync` first, or pass --db")
    if importlib.util.find_spec("mcp") is None:
        raise RunFailed("the MCP server needs the mcp package: pip install 'expired-domains-toolkit[mcp]'")
    try:
        from ..serve.mcp_server import run_stdio
    except ImportError as exc:  # an mcp this toolkit cannot use (1.x)
        raise RunFailed(f"the MCP server needs mcp>=2.3 ({exc}): pip install 'expired-domains-toolkit[mcp]'") from None
    try:
        mirror = Mirror(db, readonly=True, engine=os.environ.get("EDT_ENGINE") or "background")
    except Exception as exc:  # not a mirror, or an older schema
        raise BadInput(f"{db}: cannot serve ({exc})") from None
    # Standard output carries the protocol only: every log line goes to standard error.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="edt mcp: %(levelname)s %(name)s: %(message)s")
    run_stdio(mirror, plan)
