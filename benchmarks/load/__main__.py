"""`python -m benchmarks.load`."""

import signal
import sys

from benchmarks.load.cli import exit_on_sigterm, main

signal.signal(signal.SIGTERM, exit_on_sigterm)
sys.exit(main())
