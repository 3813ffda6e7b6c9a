"""
scripts/demo: the addon doing its job end to end, offline, on loopback.

cli      the command line: the stand-in, then mitmdump in observe, fix and block mode
clients  a real Mastra agent (node) and the openai SDK, sending the same request
steps    each client through one mode, checked; the saved flows at the end
"""

from walkthrough.cli import main

__all__ = ["main"]
