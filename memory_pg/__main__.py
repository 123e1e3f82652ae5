"""``python -m memory_pg``: the same as the ``memory-pg`` command."""

import sys

from memory_pg.cli import main

sys.exit(main())
