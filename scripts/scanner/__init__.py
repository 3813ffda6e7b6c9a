"""
scripts/scan: toolnames' checks over recorded traffic (flow files, HAR files, cassettes).

cli      the command line, its help and exit status
run      which reader reads each file; every exchange through toolnames_core.inspect_exchange
recorded the recorded exchange the readers produce, their failure, body decoding
flows    mitmproxy flow files
jsonfiles HAR files and JSON cassettes, streamed
cassettes YAML cassettes (vcrpy, pytest-recording, Ruby VCR, betamax)
yamlevents YAML events to values: libyaml (PyYAML) when there, else ruamel.yaml in pure Python
output   the table, TSV and JSON lines; the progress bar
samples  the sample recordings in flows/ and the builders the tests use
"""

from scanner.cli import main

__all__ = ["main"]
