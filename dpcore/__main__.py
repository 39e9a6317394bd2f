"""``python -m dpcore``."""

import sys

from dpcore.cli import main

if __name__ == "__main__":
    sys.exit(main())
