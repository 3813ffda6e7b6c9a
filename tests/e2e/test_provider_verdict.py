"""
The provider's verdict, end to end (issue 15): a real mitmdump in observe mode in front of a
stand-in OpenAI whose rule is the documented one, stricter, or looser than toolnames' rule for
it. A confirmed prediction, a rejection toolnames missed and a false alarm are each reported
live (log line, saved metadata) and again by `scripts/scan` on the saved file.
"""

import json
import subprocess

import pytest

from standin import StandinProvider
from tests.testkit import annotations
from tests.testkit import read_flows
from tests.testkit import wait_for_flows

SCAN = ["scripts/scan", "--json", "--no-progress"]
TOOLS_PATH = "tools[0].function.name"
LONG_NAME = "lookup_customer_orders_by_email_address_and_date_range_for_support"  # 66
SHORT_NAME = "lookup_customer_orders_by_email"  # 31: every known rule takes it

assert len(LONG_NAME) == 66 and len(SHORT_NAME) == 31


@pytest.fixture
def drifted():
    """Start a stand-in OpenAI whose longest function name is N (None: the documented 64)."""
    started = []

    def start(name_max_length: int | None) -> StandinProvider:
        provider = StandinProvider(port=0, name_max_length=name_max_length).start()
        started.append(provider)
        return provider

    yield start
    for provider in started:
        provider.stop()


def ask(proxy, name: str, stream: bool = False):
    """A chat completion through the proxy with one tool; the SDK's answer or its error."""
    import openai

    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
    tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    messages = [{"role": "user", "content": "find my orders"}]
    try:
        answer = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=[tool], stream=stream
        )
        return list(answer) if stream else answer
    except openai.BadRequestError as error:
        return error


def run(mitmdump, binary, provider, tmp_path, name: str, stream: bool = False):
    """One request in observe mode, saved: (what the SDK got, the saved flow, its log line)."""
    saved = tmp_path / "verdict.mitm"
    proxy = mitmdump("--set", f"toolnames_save={saved}", upstream=provider.url, binary=binary)
    got = ask(proxy, name, stream)
    (flow,) = wait_for_flows(saved, 1)
    proxy.wait_for_log("toolnames")
    proxy.stop()
    (line,) = annotations(proxy.log_text())
    return got, flow, line, saved


def findings(flow) -> list[tuple[str, str, str]]:
    return [(f["code"], f["severity"], f["path"]) for f in flow.metadata["toolnames"]["findings"]]


def scanned(saved) -> list[tuple[str, str, str]]:
    result = subprocess.run(
        [*SCAN, str(saved)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode in (0, 1), result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return [(r["code"], r["severity"], r["path"]) for r in rows]


@pytest.mark.needs_sdk
def test_a_rejection_toolnames_predicted_is_confirmed(mitmdump, mitmdump_binary, drifted, tmp_path):
    import openai

    provider = drifted(None)  # the documented rule: names up to 64
    got, flow, line, saved = run(mitmdump, mitmdump_binary, provider, tmp_path, LONG_NAME)

    assert isinstance(got, openai.BadRequestError)
    assert got.body["param"] == TOOLS_PATH
    expected = [
        ("name-too-long", "error", TOOLS_PATH),
        ("provider-rejected", "error", TOOLS_PATH),
    ]
    assert findings(flow) == expected
    confirmed = flow.metadata["toolnames"]["findings"][1]["message"]
    assert confirmed.endswith("; toolnames had predicted it (name-too-long)")
    assert line.startswith(f"toolnames error: name-too-long: {TOOLS_PATH} ")
    assert line.endswith("; the provider rejected it too")
    assert scanned(saved) == expected


@pytest.mark.needs_sdk
def test_a_stricter_provider_is_a_rejection_toolnames_missed(
    mitmdump, mitmdump_binary, drifted, tmp_path
):
    import openai

    provider = drifted(20)  # stricter than toolnames' openai rule
    got, flow, line, saved = run(mitmdump, mitmdump_binary, provider, tmp_path, SHORT_NAME)

    assert isinstance(got, openai.BadRequestError)
    expected = [
        ("provider-rejected", "error", TOOLS_PATH),
        ("rule-disagrees", "warning", TOOLS_PATH),
    ]
    assert findings(flow) == expected
    rejected, disagrees = flow.metadata["toolnames"]["findings"]
    assert f"'{SHORT_NAME}' (31 chars)" in rejected["message"]
    assert "maximum length 20" in rejected["message"]  # the provider's own words
    assert rejected["message"].endswith("; toolnames had not predicted it")
    assert disagrees["rule"] == "openai"
    assert disagrees["message"].startswith("rule openai disagrees with 127.0.0.1: ")
    assert line.startswith("toolnames error: provider-rejected: ")
    assert scanned(saved) == expected


@pytest.mark.needs_sdk
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_looser_provider_makes_toolnames_error_a_false_alarm(
    mitmdump, mitmdump_binary, drifted, tmp_path, stream
):
    provider = drifted(128)  # looser than toolnames' openai rule
    got, flow, line, saved = run(mitmdump, mitmdump_binary, provider, tmp_path, LONG_NAME, stream)

    assert not isinstance(got, Exception)  # the app works: the provider took the name
    expected = [
        ("name-too-long", "error", TOOLS_PATH),
        ("rule-disagrees", "warning", TOOLS_PATH),
    ]
    assert findings(flow) == expected
    disagrees = flow.metadata["toolnames"]["findings"][1]
    assert "but the provider accepted the request (HTTP 200)" in disagrees["message"]
    assert line.startswith(f"toolnames error: name-too-long: {TOOLS_PATH} ")
    assert line.endswith(" (+1 more)")
    # A saved stream has no body: the scanner reports what the live addon recorded.
    assert scanned(saved) == expected
    assert read_flows(saved)[0].response.status_code == 200


@pytest.mark.needs_sdk
@pytest.mark.parametrize("unread", ["max_body", "encoding"])
def test_a_rejected_request_toolnames_did_not_read_says_so(
    mitmdump, mitmdump_binary, standin, tmp_path, unread
):
    """Over toolnames_max_body, or in a content-encoding mitmproxy cannot decode: toolnames
    predicted nothing, and the provider's rejection must not say it predicted no error."""
    import openai

    saved = tmp_path / "unread.mitm"
    args = ["--set", f"toolnames_save={saved}", "--set", "toolnames_max_body=200"]
    proxy = mitmdump(*args, binary=mitmdump_binary)
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
    tool = {"type": "function", "function": {"name": "github.create_issue"}}  # OpenAI rejects it
    prompt = "x" * (300 if unread == "max_body" else 10)
    headers = {"content-encoding": "x-unknown"} if unread == "encoding" else {}
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": prompt}],
            tools=[tool],
            extra_headers=headers,
        )
    (flow,) = wait_for_flows(saved, 1)
    proxy.wait_for_log("toolnames")
    proxy.stop()
    unreadable, rejected = flow.metadata["toolnames"]["findings"]
    assert unreadable["code"] == "request-unreadable"
    assert rejected["code"] == "provider-rejected"
    assert "predicted no error" not in rejected["message"]
    assert rejected["message"].endswith(
        "; toolnames did not read this request (request-unreadable), so it predicted nothing"
    )
    (line,) = annotations(proxy.log_text())
    assert line.startswith("toolnames error: provider-rejected: ")
    assert "so it predicted nothing" in line


def fix_run(mitmdump, binary, provider, tmp_path, name: str, headers: dict | None = None):
    """One chat completion in fix mode, saved: (what the SDK got, the saved flow, its line)."""
    import openai

    saved = tmp_path / "fixed.mitm"
    args = ["--set", "toolnames_mode=fix", "--set", f"toolnames_save={saved}"]
    proxy = mitmdump(*args, upstream=provider.url, binary=binary)
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
    tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    try:
        got = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "find my orders"}],
            tools=[tool],
            extra_headers=headers or {},
        )
    except openai.BadRequestError as error:
        got = error
    (flow,) = wait_for_flows(saved, 1)
    proxy.wait_for_log("toolnames")
    proxy.stop()
    (line,) = annotations(proxy.log_text())
    return got, flow, line, saved


@pytest.mark.needs_sdk
def test_a_drifted_provider_rejecting_toolnames_alias_is_said_so_not_fixed(
    mitmdump, mitmdump_binary, drifted, tmp_path
):
    import openai

    provider = drifted(60)  # shorter than the 64 characters of toolnames' alias
    got, flow, line, saved = fix_run(mitmdump, mitmdump_binary, provider, tmp_path, LONG_NAME)

    assert isinstance(got, openai.BadRequestError)
    record = flow.metadata["toolnames"]
    (fix,) = record["fixes"]
    alias = fix["to"]
    assert len(alias) == 64 and fix["from"] == LONG_NAME
    expected = [
        ("name-too-long", "error", TOOLS_PATH),
        ("provider-rejected", "error", TOOLS_PATH),
        ("rule-disagrees", "warning", TOOLS_PATH),
    ]
    assert findings(flow) == expected
    _, rejected, disagrees = record["findings"]
    said = f"the provider rejected {TOOLS_PATH} '{alias}' (64 chars), toolnames' alias for '{LONG_NAME}'"
    assert rejected["message"].startswith(said)
    assert "had predicted" not in rejected["message"]
    assert disagrees["message"].startswith(
        f"rule openai disagrees with 127.0.0.1: the provider rejected {TOOLS_PATH} '{alias}'"
    )
    # The headline is the failure, not the fix; the flow is marked flagged, not fixed.
    assert line.startswith(f"toolnames error: provider-rejected: {said}")
    assert f"; toolnames fixed renamed '{LONG_NAME}' → '{alias}'" in line
    assert flow.marked == ":warning:"
    assert scanned(saved) == expected


@pytest.mark.needs_sdk
def test_fix_mode_leads_with_a_call_to_a_tool_never_offered(
    mitmdump, mitmdump_binary, drifted, tmp_path
):
    provider = drifted(None)
    headers = {"x-standin-call": "delete_everything"}
    got, flow, line, _ = fix_run(mitmdump, mitmdump_binary, provider, tmp_path, LONG_NAME, headers)

    assert got.choices[0].message.tool_calls[0].function.name == "delete_everything"
    assert line.startswith("toolnames error: response-unknown-tool: ")
    assert "; toolnames fixed renamed " in line
    assert flow.marked == ":warning:"
