"""The `edt` command (`python -m toolkit`, and the `edt` script, which calls `run`)."""

import sys

from .errors import said_stopped


def run() -> None:
    try:
        from .cli import main
    except KeyboardInterrupt:  # Ctrl-C while the command's modules load: said as any stop is, not a traceback
        said_stopped()
        sys.stderr.write("edt: interrupted\n")
        raise SystemExit(130) from None
    main()


if __name__ == "__main__":
    run()
