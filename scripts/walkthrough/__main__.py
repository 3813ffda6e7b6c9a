"""python -m walkthrough: what scripts/demo runs."""

import sys

from walkthrough.cli import main

sys.exit(main())
