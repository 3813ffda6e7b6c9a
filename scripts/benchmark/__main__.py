"""python -m benchmark: what scripts/bench runs."""

import sys

from benchmark.cli import main

sys.exit(main())
