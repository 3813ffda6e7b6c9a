"""python -m scanner: what scripts/scan runs."""

import signal
import sys

from scanner.cli import main

# `scan ... | head` ends quietly, as other command-line tools do.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
try:
    sys.exit(main())
except KeyboardInterrupt:
    sys.stderr.write("\n")
    sys.exit(130)
