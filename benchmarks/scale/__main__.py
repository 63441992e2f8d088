"""`python -m benchmarks.scale PART …`: see benchmarks/scale/__init__.py."""

import sys

from benchmarks.scale.cli import main

sys.exit(main())
