"""``python -m dlbkit.face.cli``: the ``dlbkit`` command line (as ``python -m dlbkit``)."""

import sys

from dlbkit.face.cli import main

sys.exit(main())
