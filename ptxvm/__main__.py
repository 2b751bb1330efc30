"""``python -m ptxvm ...`` runs the command line (see ``ptxvm.cli``)."""

import sys

from .cli import main

sys.exit(main())
