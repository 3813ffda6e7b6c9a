"""python -m standin: the stand-in provider on its own (--help for its options)."""

import sys

from standin.server import main

sys.exit(main())
