import platform
import threading
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer

import pytest

from toolnames_core.clients import CLIENT_HEADERS
from toolnames_core.clients import client_label


def label(headers: dict[str, str]) -> str | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    return client_label(lambda name: lowered.get(name, ""))


# Header values as the clients sent them to a local listener (openai 3.57.0, anthropic 2.14.0,
# google-genai 3.6.1, boto3 1.44.8, and the AI SDK packages of tests/e2e/mastra under node 20).
CAPTURED = [
    (
        {
            "user-agent": "OpenAI/Python 3.57.0",
            "x-stainless-lang": "python",
            "x-stainless-package-version": "3.57.0",
            "x-stainless-runtime": "CPython",
            "x-stainless-runtime-version": "3.13.0",
        },
        "openai Python SDK 3.57.0 (CPython 3.13.0)",
    ),
    (
        {
            "User-Agent": "Anthropic/Python 2.14.0",
            "X-Stainless-Lang": "python",
            "X-Stainless-Package-Version": "2.14.0",
            "X-Stainless-Runtime": "CPython",
            "X-Stainless-Runtime-Version": "3.13.0",
        },
        "anthropic Python SDK 2.14.0 (CPython 3.13.0)",
    ),
    (
        {
            "user-agent": "google-genai-sdk/3.6.1 gl-python/3.13.0",
            "x-goog-api-client": "google-genai-sdk/3.6.1 gl-python/3.13.0",
        },
        "google-genai SDK 3.6.1 (python 3.13.0)",
    ),
    (
        {
            "User-Agent": "Boto3/1.44.8 md/Botocore#1.44.8 ua/2.1 os/linux#6.18.44-fc-v669 "
            "md/arch#x86_64 lang/python#3.13.0 md/pyimpl#CPython m/Z,N,e,b,E "
            "cfg/retry-mode#standard Botocore/1.44.8"
        },
        "boto3 1.44.8 (python 3.13.0)",
    ),
    (
        # Mastra's model router, through @ai-sdk/openai-compatible.
        {
            "user-agent": "ai-sdk/openai-compatible/2.0.62 ai-sdk/provider-utils/4.0.40 "
            "runtime/node.js/v20.20.2"
        },
        "Vercel AI SDK ai-sdk/openai-compatible (Mastra's model router uses it) 2.0.62 "
        "(node.js v20.20.2)",
    ),
    (
        {
            "user-agent": "ai-sdk/openai/3.0.141 ai-sdk/provider-utils/4.0.66 runtime/node.js/v20.20.2"
        },
        "Vercel AI SDK ai-sdk/openai 3.0.141 (node.js v20.20.2)",
    ),
    (
        {"user-agent": "ai/6.0.326 ai-sdk/provider-utils/4.0.66 runtime/node.js/v20.20.2"},
        "Vercel AI SDK 6.0.326 (node.js v20.20.2)",
    ),
]


@pytest.mark.parametrize(
    "headers,expected", CAPTURED, ids=[e.split()[0] + e.split()[1] for _, e in CAPTURED]
)
def test_each_known_client_is_named_with_its_version_and_runtime(headers, expected):
    assert label(headers) == expected


def test_another_stainless_sdk_is_named_by_its_language():
    headers = {
        "user-agent": "Acme/JS 1.0",
        "x-stainless-lang": "js",
        "x-stainless-package-version": "1.0",
    }
    assert label(
        {**headers, "x-stainless-runtime": "node", "x-stainless-runtime-version": "v20"}
    ) == ("a Stainless SDK for js 1.0 (node v20)")


def test_an_unknown_client_is_named_by_its_user_agent_shortened_and_escaped():
    assert label({"user-agent": "curl/8.5.0"}) == "User-Agent curl/8.5.0"
    shown = label({"user-agent": "x\u202e" + "y" * 100})
    assert shown.startswith("User-Agent x\\u202eyyy") and shown.endswith("…")


def test_a_request_without_client_headers_names_no_client():
    assert label({}) is None


class _Listener(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        _Listener.seen.append({k.lower(): v for k, v in self.headers.items()})
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(
            b'{"error": {"code": 400, "message": "x", "type": "invalid_request_error"}}'
        )

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    _Listener.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Listener.seen
    server.shutdown()
    server.server_close()


def _call(kind: str, base: str) -> str:
    """Make one request with the real SDK; its version."""
    if kind == "openai":
        import openai

        client = openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="m", messages=[])
        return openai.__version__
    if kind == "anthropic":
        import anthropic

        client = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0)
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(model="m", max_tokens=1, messages=[])
        return anthropic.__version__
    if kind == "google-genai":
        from google import genai
        from google.genai import errors
        from google.genai import types

        client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=base))
        with pytest.raises(errors.ClientError):
            client.models.generate_content(model="gemini-2.5-flash", contents="hi")
        return genai.__version__
    import boto3
    import botocore.config
    import botocore.exceptions

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=base,
        aws_access_key_id="a",
        aws_secret_access_key="b",
        config=botocore.config.Config(retries={"max_attempts": 1}),
    )
    with pytest.raises(botocore.exceptions.ClientError):
        client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
    return boto3.__version__


@pytest.mark.needs_sdk
@pytest.mark.parametrize(
    "kind,name,runtime",
    [
        ("openai", "openai Python SDK", f"CPython {platform.python_version()}"),
        ("anthropic", "anthropic Python SDK", f"CPython {platform.python_version()}"),
        ("google-genai", "google-genai SDK", f"python {platform.python_version()}"),
        ("boto3", "boto3", f"python {platform.python_version()}"),
    ],
)
def test_the_real_sdks_are_named_from_the_headers_they_send(listener, kind, name, runtime):
    base, seen = listener
    version = _call(kind, base)
    headers = seen[-1]
    assert client_label(lambda h: headers.get(h, "")) == f"{name} {version} ({runtime})"


@pytest.mark.parametrize("headers", [h for h, _ in CAPTURED] + [{}, {"user-agent": "curl/8.0"}])
def test_every_header_the_label_reads_is_one_of_client_headers(headers):
    # The addon names a client from these headers' values alone, and remembers the label by
    # them (toolnames_mitm/flows.py client): a header read beyond them would be missed.
    asked = []
    lowered = {k.lower(): v for k, v in headers.items()}
    client_label(lambda name: asked.append(name) or lowered.get(name, ""))
    assert asked and set(asked) <= set(CLIENT_HEADERS)
