"""``python -m ragspine.cli``."""

import sys

from ragspine.cli import main

sys.exit(main())
