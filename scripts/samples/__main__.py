"""Write the sample recordings: ``.venv/bin/python -m samples [OUTPUT_DIR]`` (default flows/)."""

import sys

from samples.recordings import main

sys.exit(main(sys.argv))
