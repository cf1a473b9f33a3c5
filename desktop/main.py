"""`cairn`: with no arguments the tray application; with any, the command line (`core.cli`).

Qt is imported only on the tray's path, so every CLI command starts as fast as before.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        from core import cli

        return cli.main(args)
    from desktop import app

    return app.run()


if __name__ == "__main__":
    sys.exit(main())
