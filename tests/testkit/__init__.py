"""
Helpers the test modules share (conftest.py holds the fixtures and imports from here too):

infrastructure  where the repository, the mitmdump binaries and chromium are; skip or fail
disk            the fixtures on disk: captured SDK requests and provider answers
core            the core as the tests drive it, and small chat bodies and answers
sdks            SDK clients answered by a mock transport
clients         SDK clients as an app builds them, pointed at a mitmdump, with test credentials
strategies      hypothesis strategies for whatever JSON
streams         raw streamed bodies (SSE, AWS event streams)
e2e             mitmdump's log, plain HTTP past any proxy, saved flows read back
scan            scripts/scan as the tests run it, and traffic to feed it
arbitrary       every format's bodies, answers and events for the property tests (imported
                from tests.testkit.arbitrary: its names are not re-exported here)
"""

from tests.testkit.clients import CITY
from tests.testkit.clients import PROMPT
from tests.testkit.clients import WHOLE_AND_STREAMED
from tests.testkit.clients import anthropic_client
from tests.testkit.clients import cohere_client
from tests.testkit.clients import vertex_client
from tests.testkit.core import UNUSUAL_NAMES
from tests.testkit.core import api_for
from tests.testkit.core import cells
from tests.testkit.core import chat_answer
from tests.testkit.core import chat_body
from tests.testkit.core import exchange_for
from tests.testkit.core import found
from tests.testkit.core import judge
from tests.testkit.core import record_metadata
from tests.testkit.core import refs
from tests.testkit.core import render_request_text
from tests.testkit.core import render_response_text
from tests.testkit.core import row_of
from tests.testkit.core import stream_calls
from tests.testkit.disk import REQUEST_FIXTURES
from tests.testkit.disk import RESPONSE_FIXTURES
from tests.testkit.disk import RESPONSE_SUFFIXES
from tests.testkit.disk import RESPONSES
from tests.testkit.disk import RESPONSES_DIR
from tests.testkit.disk import SDK_DIR
from tests.testkit.disk import fixtures_of
from tests.testkit.disk import load_sdk
from tests.testkit.disk import replace_once
from tests.testkit.disk import response_api
from tests.testkit.disk import response_body
from tests.testkit.disk import response_fixture
from tests.testkit.disk import sdk_fixture
from tests.testkit.e2e import DIRECT
from tests.testkit.e2e import annotations
from tests.testkit.e2e import mitmdump_read
from tests.testkit.e2e import post
from tests.testkit.e2e import read_flows
from tests.testkit.e2e import recording_client
from tests.testkit.e2e import toolnames_lines
from tests.testkit.e2e import wait_for_flows
from tests.testkit.infrastructure import CLAUDE_CODE_DIR
from tests.testkit.infrastructure import MAIN_VENV_MITMDUMP
from tests.testkit.infrastructure import MASTRA_DIR
from tests.testkit.infrastructure import REPO_ROOT
from tests.testkit.infrastructure import binary_id
from tests.testkit.infrastructure import chromium_path
from tests.testkit.infrastructure import in_ci
from tests.testkit.infrastructure import missing_infrastructure
from tests.testkit.infrastructure import mitmdump_binaries
from tests.testkit.infrastructure import mitmproxy_version
from tests.testkit.infrastructure import require_chromium
from tests.testkit.scan import ANSI
from tests.testkit.scan import BAD_CASE_FINDINGS
from tests.testkit.scan import FORMAT_OF
from tests.testkit.scan import SCAN_SCRIPT
from tests.testkit.scan import UNIT_OF
from tests.testkit.scan import WRITERS
from tests.testkit.scan import MeasuredScan
from tests.testkit.scan import bad_flows
from tests.testkit.scan import big_flagged_flow
from tests.testkit.scan import cut_file
from tests.testkit.scan import measured_scan
from tests.testkit.scan import run_scan
from tests.testkit.scan import scan_env
from tests.testkit.scan import scan_found
from tests.testkit.scan import scan_json
from tests.testkit.scan import strip_ansi
from tests.testkit.sdks import answering_http_client
from tests.testkit.sdks import sdk_http_module
from tests.testkit.strategies import keyed_bodies
from tests.testkit.strategies import vocabulary_bodies
from tests.testkit.streams import aws_chunk
from tests.testkit.streams import aws_event
from tests.testkit.streams import aws_stream
from tests.testkit.streams import every_split
from tests.testkit.streams import ndjson
from tests.testkit.streams import sent_on
from tests.testkit.streams import sse
from tests.testkit.streams import zstd_compress

__all__ = [
    "UNUSUAL_NAMES",
    "api_for",
    "ANSI",
    "BAD_CASE_FINDINGS",
    "CITY",
    "DIRECT",
    "FORMAT_OF",
    "MAIN_VENV_MITMDUMP",
    "CLAUDE_CODE_DIR",
    "MASTRA_DIR",
    "MeasuredScan",
    "PROMPT",
    "REPO_ROOT",
    "REQUEST_FIXTURES",
    "RESPONSES",
    "RESPONSES_DIR",
    "RESPONSE_SUFFIXES",
    "RESPONSE_FIXTURES",
    "SCAN_SCRIPT",
    "SDK_DIR",
    "UNIT_OF",
    "WHOLE_AND_STREAMED",
    "WRITERS",
    "annotations",
    "anthropic_client",
    "answering_http_client",
    "aws_chunk",
    "aws_event",
    "aws_stream",
    "bad_flows",
    "big_flagged_flow",
    "binary_id",
    "cells",
    "chat_answer",
    "chat_body",
    "chromium_path",
    "cohere_client",
    "cut_file",
    "every_split",
    "ndjson",
    "exchange_for",
    "fixtures_of",
    "found",
    "in_ci",
    "judge",
    "keyed_bodies",
    "load_sdk",
    "measured_scan",
    "missing_infrastructure",
    "mitmdump_binaries",
    "mitmdump_read",
    "mitmproxy_version",
    "post",
    "read_flows",
    "record_metadata",
    "recording_client",
    "refs",
    "render_request_text",
    "render_response_text",
    "replace_once",
    "require_chromium",
    "response_api",
    "response_body",
    "response_fixture",
    "row_of",
    "run_scan",
    "scan_env",
    "scan_found",
    "scan_json",
    "sdk_fixture",
    "sdk_http_module",
    "sse",
    "sent_on",
    "zstd_compress",
    "stream_calls",
    "strip_ansi",
    "toolnames_lines",
    "vertex_client",
    "vocabulary_bodies",
    "wait_for_flows",
]
