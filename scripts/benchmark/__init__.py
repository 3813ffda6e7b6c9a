"""
scripts/bench: what the toolnames addon costs, measured three ways.

cli         the command line, the run and its printout
workload    the bodies and headers sent
cpu         (a) CPU per request, in process
throughput  (b) requests per second through a real mitmdump
streaming   (c) time to the first streamed chunk
report      the tables and the verdict on each target
"""

from benchmark.cli import main

__all__ = ["main"]
