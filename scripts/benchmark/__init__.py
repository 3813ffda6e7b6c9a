"""
scripts/bench: what the toolnames addon costs, measured three ways, and how fast scripts/scan reads.

cli         the command line, the run and its printout
workload    the bodies and headers sent
cpu         (a) CPU per request, in process
throughput  (b) requests per second through a real mitmdump
streaming   (c) time to the first streamed chunk
scanning    (d) scripts/scan's throughput in MB/s, per format, and its peak memory
report      the tables and the verdict on each target
"""

from benchmark.cli import main

__all__ = ["main"]
