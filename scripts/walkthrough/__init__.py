"""
scripts/demo: the addon doing its job end to end, offline, on loopback.

cli      the command line: the stand-in, then mitmdump in observe, fix and block mode, and
         fix mode renaming
clients  a real Mastra agent (node) and the openai SDK, sending the same request
steps    each client through one mode, checked; the saved flows at the end
renaming fix mode renames the tool names a provider rejects, for a Vercel AI SDK app
"""

from walkthrough.cli import main

__all__ = ["main"]
