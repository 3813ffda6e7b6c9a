"""
Run toolnames' checks over recorded traffic: mitmproxy flow files, HAR files and test cassettes.

    scripts/scan flows/                       # a table on a terminal, tab-separated otherwise
    scripts/scan --json recordings/ a.har     # one JSON object per finding per line
    scripts/scan --rule 'openrouter.ai=anthropic' tests/cassettes/

Every exchange goes through `toolnames_core.inspect_exchange`, the code the live
addon runs: this module only reads recordings and prints what that function finds. A flow
the addon fixed in flight is the exception: its body is the rewritten one, so its findings
come from the record the addon made of the body as sent.

Inputs are streamed, one flow / HAR entry / cassette interaction at a time, so memory stays
bounded by the largest single exchange, not by the file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import traceback

from scanner.output import JsonOutput
from scanner.output import Output
from scanner.output import Progress
from scanner.output import TableOutput
from scanner.output import TsvOutput
from scanner.recorded import PROG
from scanner.run import EXIT_INCOMPLETE
from scanner.run import Input
from scanner.run import Scanner
from toolnames_core import RULES
from toolnames_core import parse_rule_override
from toolnames_core import reader_named

__all__ = ["HELP_EPILOG", "build_parser", "collect_inputs", "main"]

HELP_EPILOG = """\
formats (chosen by content, then by file extension):
  mitmproxy flow files   what `mitmdump -w`, mitmweb and toolnames_save write (.mitm, .flows, any name)
  HAR files              from browsers, mitmweb and `mitmdump --set hardump=`; .zhar (zlib) too
  cassettes              vcrpy / pytest-recording YAML (`interactions:`), Ruby VCR and betamax
                         (`http_interactions`), JSON cassettes; bodies as text, !!binary or base64.
                         YAML is read with PyYAML's libyaml parser, as vcrpy reads it; without
                         PyYAML, ruamel.yaml reads it about 25 times slower (the scan says so)
  Any of them may be gzip-compressed. Folders are searched recursively (hidden entries are
  skipped); a file found in a folder that is not recognisable traffic is skipped, while a file
  named on the command line must be traffic.

output:
  On a terminal, a table (file, flow, endpoint, severity, code, JSON path, message) sized to
  the terminal. Otherwise the same columns tab-separated, with a header line. --json writes one
  JSON object per finding per line. "flow" is the 0-based position of the flow in the file,
  of the entry in log.entries, or of the interaction in the cassette. A summary line and any
  read errors go to stderr, with a progress bar when stderr is a terminal.

exit status:
  0  every input was read and no finding has severity error
  1  at least one error finding (the provider would reject the request, or the model called
     a tool that was never offered)
  2  the scan is incomplete: an input could not be read, or only partly (truncated or corrupt;
     the findings from the part that was read are still printed), a usage error, or the
     scanner itself failed.
  2 takes precedence over 1: when any input could not be read (fully), the status is 2 even
  if error findings were reported, so an incomplete scan never passes for a verdict on all
  of the traffic. The findings from what was read are printed either way.
"""


def collect_inputs(paths: list[str]) -> list[Input]:
    inputs: list[Input] = []
    seen: set[str] = set()

    def add(path: str, explicit: bool) -> None:
        real = os.path.realpath(path)
        if real in seen:
            return
        seen.add(real)
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0
        inputs.append(Input(path, explicit, size))

    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if not name.startswith(".") and os.path.isfile(full):
                        add(full, explicit=False)
        else:
            add(path, explicit=True)
    return inputs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run the toolnames checks over recorded LLM API traffic: mitmproxy flow files, "
        "HAR files and test cassettes (vcrpy / pytest-recording).",
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="files, or folders to search recursively"
    )
    parser.add_argument(
        "--json", action="store_true", help="write one JSON object per finding per line"
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="HOST_PATTERN=RULE",
        help="check requests to matching hosts against another provider's rule, as the addon's "
        "toolnames_rule option (e.g. 'openrouter.ai=anthropic', '*=portable'); repeatable. "
        f"Rules: {', '.join(RULES)}.",
    )
    parser.add_argument(
        "--mcp-rule",
        default="openai",
        metavar="RULE",
        help="the rule MCP servers' listed names are held to, as the addon's toolnames_mcp_rule "
        "option (default openai): names it rejects are warnings, names only other providers "
        f"reject information. Rules: {', '.join(RULES)}.",
    )
    parser.add_argument(
        "--reader",
        choices=("auto", "json", "msgspec"),
        default="auto",
        help="how bodies are decoded, as the addon's toolnames_reader option: auto (msgspec when "
        "it can be imported, else json), json, or msgspec; every reader finds the same",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar, even on a terminal"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        parser.error(f"no such file or directory: {', '.join(missing)}")
    try:
        overrides = tuple(parse_rule_override(spec) for spec in args.rule)
    except ValueError as e:
        parser.error(f"argument --rule: {e}")
    if args.mcp_rule not in RULES:
        parser.error(f"argument --mcp-rule: {args.mcp_rule!r} is not a rule")
    try:
        reader = reader_named(args.reader)
    except ValueError as e:
        parser.error(f"argument --reader: {e}")

    inputs = collect_inputs(args.paths)
    progress = Progress(
        sum(i.size for i in inputs),
        sys.stderr,
        enabled=sys.stderr.isatty() and not args.no_progress,
    )
    output: Output
    if args.json:
        output = JsonOutput(sys.stdout, progress.clear)
    elif sys.stdout.isatty():
        color = not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        width = shutil.get_terminal_size((120, 24)).columns
        output = TableOutput(sys.stdout, width, color, progress.clear)
    else:
        output = TsvOutput(sys.stdout, progress.clear)
    scanner = Scanner(overrides, output, progress, reader)
    scanner.mcp_rule = args.mcp_rule
    try:
        scanner.run(inputs)
    except Exception:  # noqa: BLE001 - exit 1 would read as "error findings"
        progress.clear()
        traceback.print_exc()
        sys.stderr.write(f"{PROG}: internal error: the scan did not finish\n")
        return EXIT_INCOMPLETE
    sys.stderr.write(f"{PROG}: {scanner.summary()}\n")
    return scanner.exit_code()
