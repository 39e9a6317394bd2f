"""``python -m dpcore``.

Ctrl-C while the CLI is still starting (importing numpy, building its parser) prints one line
and exits 130: an interrupt inside a C extension's import surfaces as an ``ImportError`` with a
traceback, so during start-up SIGINT ends the process directly. The handler is installed by
``dpcore/__init__.py`` while ``python -m`` locates this module (``sys.argv[0] == "-m"``), and
:func:`dpcore.cli.main` restores Python's own (``KeyboardInterrupt``) once the command starts.
Only the interpreter's own first few tens of milliseconds, before any dpcore code runs, are
outside its reach.
"""

import sys

from dpcore.cli import main

if __name__ == "__main__":
    sys.exit(main())
