"""
scripts/soak: many flows through a real mitmdump with the addon, then a kill -9.

cli      the command line and the printout
traffic  the flows: every kind in every wire format
drive    one run: the load, memory samples, the kill; the log and the saved file after it
phases   the phases and their checks
"""

from soaktest.cli import main

__all__ = ["main"]
