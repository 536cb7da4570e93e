"""The end of a command stopped by Ctrl-C: said in one line, exit status 130, nothing after.

    except KeyboardInterrupt:
        said_stopped()                      # before the line is written
        sys.stderr.write("edt: interrupted\\n")
        raise SystemExit(130)

Imports nothing heavy: `python -m toolkit` uses it when a stop lands while the command's
modules are still loading.
"""

from __future__ import annotations

import signal

__all__ = ["said_stopped"]


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
