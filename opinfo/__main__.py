"""``python -m opinfo`` is the ``opinfo`` command."""
import sys

from .cli import main

sys.exit(main())
