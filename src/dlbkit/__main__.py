"""``python -m dlbkit``: the same as the ``dlbkit`` command."""

import sys

from .cli import main

sys.exit(main())
