"""``python -m dlbkit``: the same as the ``dlbkit`` command."""

import sys

from dlbkit.face.cli import main

sys.exit(main())
