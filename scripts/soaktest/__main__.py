"""python -m soaktest: what scripts/soak runs."""

import sys

from soaktest.cli import main

sys.exit(main())
