"""``python -m siselect``: the command line, for when the console script is not on PATH."""

import sys

from siselect.client.cli import main

sys.exit(main())
