"""
The commands the README and the manual give work as written: every proxy a user starts binds
to loopback, every repository path they name exists, and the scan and offline mitmdump
commands run on the committed samples (with mitmproxy 12, and 11 under scripts/test).

The commands are read from the ```sh blocks of README.md, every docs/*.md and flows/README.md,
and from the ``Usage:`` of addon/toolnames.py's docstring.

The regular-proxy blocks' CA variables are run with boto3 through mitmdump (12 and 11) to
the stand-in; the reverse-mode command for signed clients is held to what it says of Host.
"""

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness.mitmdump import ADDON_SCRIPT
from tests.testkit import REPO_ROOT

DOCS = [
    REPO_ROOT / "README.md",
    *sorted((REPO_ROOT / "docs").glob("*.md")),
    REPO_ROOT / "flows" / "README.md",
]
PROXIES = {"mitmdump", "mitmweb", "mitmproxy"}
# Where a command's argument names a file of the repository.
REPO_DIRS = ("addon/", "scripts/", "flows/", "tests/", "docs/", "requirements/")
# What starts a command line: a block holding one must be marked sh to be checked here.
PROGRAMS = re.compile(r"^(\.venv/bin/|scripts/\w|mitmdump |mitmweb |mitmproxy |export |python )")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(path: Path) -> list[tuple[str, str]]:
    return FENCE.findall(path.read_text(encoding="utf-8"))


def shell_lines(text: str) -> list[str]:
    """The commands of a shell block, continuation lines joined."""
    return [line for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def readme_commands() -> list[list[str]]:
    commands = []
    for doc in DOCS:
        for lang, text in blocks(doc):
            if lang == "sh":
                commands += [shlex.split(line, comments=True) for line in shell_lines(text)]
    return [c for c in commands if c]


def usage_commands() -> list[list[str]]:
    docstring = ast.get_docstring(ast.parse(ADDON_SCRIPT.read_text(encoding="utf-8"))) or ""
    usage = docstring.split("Usage:\n\n", 1)[1].split("\n\n", 1)[0]
    return [shlex.split(line) for line in usage.splitlines()]


def program(command: list[str]) -> str:
    return Path(command[0]).name


def serves(command: list[str]) -> bool:
    """Whether a mitmproxy command starts a proxy server (-n and -nr do not)."""
    return not any(arg in ("-n", "-nr", "--no-server", "server=false") for arg in command)


def repo_paths(command: list[str]) -> list[str]:
    return [arg for arg in command[1:] if arg.startswith(REPO_DIRS)]


def test_the_readme_has_commands_to_check():
    commands = readme_commands()
    assert sum(program(c) in PROXIES for c in commands) >= 10
    assert sum(c[0] == "scripts/scan" for c in commands) >= 4


def test_every_block_with_a_command_is_marked_sh():
    unmarked = [
        f"{doc.name}: {line}"
        for doc in DOCS
        for lang, text in blocks(doc)
        if lang != "sh"
        for line in text.splitlines()
        if PROGRAMS.match(line)
    ]
    assert not unmarked, "commands outside ```sh blocks, not checked here: " + "; ".join(unmarked)


@pytest.mark.parametrize(
    "command",
    [c for c in readme_commands() + usage_commands() if program(c) in PROXIES],
    ids=" ".join,
)
def test_every_proxy_a_user_starts_binds_to_loopback(command):
    # mitmproxy listens on every interface by default; this proxy carries API keys.
    if serves(command):
        assert "--listen-host" in command, "no --listen-host 127.0.0.1"
        assert command[command.index("--listen-host") + 1] == "127.0.0.1"


@pytest.mark.parametrize(
    "command", [c for c in readme_commands() if program(c) in PROXIES], ids=" ".join
)
def test_every_readme_proxy_command_says_which_mitmproxy(command):
    assert command[0].startswith(".venv/bin/"), "the venv's mitmproxy, set up by the quick start"


@pytest.mark.parametrize("command", readme_commands() + usage_commands(), ids=" ".join)
def test_every_repository_path_a_command_names_exists(command):
    assert [p for p in repo_paths(command) if not (REPO_ROOT / p).exists()] == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO_ROOT)))
def test_every_repository_path_the_text_names_exists(doc):
    named = re.findall(
        r"`((?:addon|scripts|flows|tests|docs|requirements)/[^`\s]*)`", doc.read_text()
    )
    assert named
    missing = [p for p in named if not (REPO_ROOT / p).exists() and not (doc.parent / p).exists()]
    assert missing == []


# A relative Markdown link: its target (none for a link within the page) and its anchor.
LINK = re.compile(r"\]\(([^)#:\s]*)(?:#([^)\s]*))?\)")
HEADING = re.compile(r"^#+ (.+)$", re.M)


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in HEADING.findall(text)
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO_ROOT)))
def test_every_relative_link_names_a_file_and_heading_that_exist(doc):
    broken = []
    for target, anchor in LINK.findall(doc.read_text(encoding="utf-8")):
        path = doc.parent / target if target else doc
        if not path.exists():
            broken.append(target)
        elif anchor and (path.suffix != ".md" or anchor not in anchors(path)):
            broken.append(f"{target}#{anchor}")
    assert broken == []


def test_the_readme_links_to_every_page_of_the_manual():
    linked = {t for t, _ in LINK.findall((REPO_ROOT / "README.md").read_text(encoding="utf-8"))}
    pages = {f"docs/{page.name}" for page in (REPO_ROOT / "docs").glob("*.md")}
    assert pages <= linked


def test_the_sdk_snippets_take_their_key_from_the_environment():
    snippets = [
        (doc, text)
        for doc in DOCS
        for lang, text in blocks(doc)
        if lang == "python" and "OpenAI(" in text
    ]
    # The README's chat completions client; the manual's, and its realtime session.
    assert len(snippets) >= 3
    for doc, snippet in snippets:
        compile(snippet, doc.name, "exec")
        assert 'api_key=os.environ["OPENAI_API_KEY"]' in snippet
        assert 'base_url="http://127.0.0.1:8080/v1"' in snippet


def runnable(command: list[str]) -> bool:
    """Every file the command reads is in the repository."""
    files = [a for a in command[1:] if a.endswith((".mitm", ".har", ".yaml", ".json", ".py"))]
    return all(a.startswith(REPO_DIRS) for a in files)


SCANS = [c for c in readme_commands() if c[0] == "scripts/scan" and runnable(c)]
OFFLINE = [
    c
    for c in readme_commands()
    if program(c) == "mitmdump" and not serves(c) and runnable(c) and repo_paths(c)
]


@pytest.mark.e2e
@pytest.mark.parametrize("command", SCANS, ids=" ".join)
def test_the_scan_commands_run_on_the_committed_samples(command):
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        # This interpreter, not a .venv the command would set up on first use.
        env={**os.environ, "TOOLNAMES_SCAN_PYTHON": sys.executable},
    )
    # 1: error findings, as the samples hold; 2 would be an input it could not read.
    assert result.returncode == 1, result.stdout + result.stderr
    assert "error" in result.stdout


def test_there_are_scan_and_offline_commands_to_run():
    assert len(SCANS) >= 4 and len(OFFLINE) >= 2


@pytest.mark.e2e
@pytest.mark.parametrize("command", OFFLINE, ids=" ".join)
def test_the_offline_mitmdump_commands_run_on_the_committed_samples(
    command, mitmdump_binary, mitmproxy_confdir
):
    result = subprocess.run(
        [str(mitmdump_binary), *command[1:], "--set", f"confdir={mitmproxy_confdir}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert ": toolnames error: " in result.stdout


# -- the regular proxy's CA variables, and reverse mode's Host, with boto3 ----------------------

BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com"
# A boto3 app as a user runs it: the default endpoint, nothing but the environment to find the
# proxy and its CA. It prints what it got back, or the error's class and text.
BOTO3_APP = """
import json, sys
import boto3
import botocore.exceptions
from botocore.config import Config

client = boto3.client(
    "bedrock-runtime",
    region_name="us-east-1",
    endpoint_url=sys.argv[1] if len(sys.argv) > 1 else None,
    aws_access_key_id="AKIDTESTNOTAKEY",
    aws_secret_access_key="test-not-a-secret",
    config=Config(retries={"max_attempts": 1}),
)
tool = {"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}
try:
    answer = client.converse(
        modelId="anthropic.claude-3-haiku",
        messages=[{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
        toolConfig={"tools": [tool]},
    )
except botocore.exceptions.BotoCoreError as e:
    print(type(e).__name__, e)
except botocore.exceptions.ClientError as e:
    print("refused", e.response["Error"]["Code"])
else:
    print("answered", json.dumps(answer["output"]["message"]["content"]))
"""


# An addon that sends Bedrock's requests to the stand-in and leaves their Host as sent.
TO_STANDIN = """
def request(flow):
    if flow.request.pretty_host == "bedrock-runtime.us-east-1.amazonaws.com":
        host = flow.request.host_header
        flow.request.scheme, flow.request.host, flow.request.port = "http", "127.0.0.1", {port}
        flow.request.host_header = host
"""


def proxy_blocks() -> list[tuple[Path, str]]:
    """The ```sh blocks that start a regular proxy and set a client up for it."""
    return [
        (doc, text)
        for doc in DOCS
        for lang, text in blocks(doc)
        if lang == "sh" and "export HTTPS_PROXY=" in text
    ]


def mitmdump_line(text: str) -> list[str]:
    """The block's one mitmdump command."""
    commands = [shlex.split(line, comments=True) for line in shell_lines(text)]
    (command,) = [c for c in commands if c and program(c) == "mitmdump"]
    return command


def exported(text: str, home: str, port: int) -> dict[str, str]:
    """The block's ``export NAME=VALUE`` lines as the shell would set them, ``~/.mitmproxy``
    being mitmproxy's default confdir and 8080 the port the block's mitmdump listens on."""
    names = {}
    for command in (shlex.split(line, comments=True) for line in shell_lines(text)):
        if command and command[0] == "export":
            name, value = command[1].split("=", 1)
            names[name] = value.replace("~/.mitmproxy", home).replace(":8080", f":{port}")
    return names


def run_app(env: dict[str, str], tmp_path: Path, *args: str) -> str:
    # Nothing from this process's environment but PATH: no proxy, CA or AWS setting of its own.
    base = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", BOTO3_APP, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **env},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_readme_and_the_manual_show_the_regular_proxy_with_its_ca_variables():
    shown = {doc.relative_to(REPO_ROOT).as_posix() for doc, _ in proxy_blocks()}
    assert {"README.md", "docs/usage.md"} <= shown
    for _, text in proxy_blocks():
        assert "--mode" not in mitmdump_line(text)  # regular mode
        assert "AWS_CA_BUNDLE" in exported(text, "", 0)


@pytest.mark.e2e
@pytest.mark.needs_sdk
@pytest.mark.parametrize(
    "doc, text",
    proxy_blocks(),
    ids=[d.relative_to(REPO_ROOT).as_posix() for d, _ in proxy_blocks()],
)
def test_boto3_goes_through_the_regular_proxy_with_the_variables_the_docs_export(
    doc, text, mitmdump, mitmdump_binary, mitmproxy_confdir, standin, tmp_path
):
    pytest.importorskip("boto3")
    command = mitmdump_line(text)
    port = int(command[command.index("--listen-port") + 1])
    # The fixture binds to loopback on a free port and loads the addon; what else the block's
    # command sets is passed on.
    rest = [
        arg
        for i, arg in enumerate(command[1:], 1)
        if arg not in ("--listen-host", "--listen-port", "-s")
        and command[i - 1] not in ("--listen-host", "--listen-port", "-s")
    ]
    # The one thing the test adds: Bedrock's host is served by the stand-in, over the TLS
    # mitmproxy intercepts (no connection upstream before the request, none to AWS), with the
    # Host boto3 signed (--map-remote would rewrite it, and the stand-in checks the signature).
    redirect = tmp_path / "to_standin.py"
    redirect.write_text(TO_STANDIN.format(port=standin.port))
    proxy = mitmdump(
        *rest,
        "-s",
        str(redirect),
        "--set",
        "connection_strategy=lazy",
        mode="regular",
        binary=mitmdump_binary,
    )
    env = exported(text, str(mitmproxy_confdir), proxy.port)
    assert env["HTTPS_PROXY"] == proxy.url and port == 8080

    assert run_app(env, tmp_path).startswith("answered ")
    (request,) = standin.requests
    assert request["path"] == "/model/anthropic.claude-3-haiku/converse"
    assert dict(request["headers"])["Authorization"].startswith("AWS4-HMAC-SHA256 ")

    # Without the variables boto3 reads, the same app does not trust mitmproxy's CA.
    unset = {k: v for k, v in env.items() if k not in ("AWS_CA_BUNDLE", "REQUESTS_CA_BUNDLE")}
    assert "CERTIFICATE_VERIFY_FAILED" in run_app(unset, tmp_path)
    assert len(standin.requests) == 1


def reverse_signed_command() -> list[str]:
    """The manual's reverse-mode command for signed clients."""
    (command,) = [
        c
        for c in readme_commands()
        if program(c) == "mitmdump" and "keep_host_header=true" in c and "--mode" in c
    ]
    return command


@pytest.mark.e2e
@pytest.mark.needs_sdk
def test_reverse_mode_sends_another_host_than_boto3_signed_unless_it_keeps_the_host(
    mitmdump, mitmdump_binary, standin, tmp_path
):
    pytest.importorskip("boto3")
    command = reverse_signed_command()
    assert command[command.index("--mode") + 1] == f"reverse:{BEDROCK}"
    keep = command[
        command.index("keep_host_header=true") - 1 : command.index("keep_host_header=true") + 1
    ]
    assert keep == ["--set", "keep_host_header=true"]

    for args in ([], keep):
        proxy = mitmdump(*args, binary=mitmdump_binary)  # reverse mode, to the stand-in
        printed = run_app({}, tmp_path, proxy.url)
        headers = dict(standin.requests[-1]["headers"])
        signed = headers["Authorization"].split("SignedHeaders=", 1)[1].split(",", 1)[0]
        assert "host" in signed.split(";")
        # boto3 signed the Host it sent to the proxy.
        received = headers["Host"]
        if args:
            assert received == f"127.0.0.1:{proxy.port}"
            assert printed.startswith("answered ")
            assert "keep_host_header" not in proxy.log_text()
        else:
            assert received == f"127.0.0.1:{standin.port}"  # not what was signed
            # The stand-in checks the signature as AWS does; toolnames says why, once.
            assert printed.strip() == "refused InvalidSignatureException"
            run_app({}, tmp_path, proxy.url)
            proxy.wait_for_log("keep_host_header=true")
            said = [x for x in proxy.log_text().splitlines() if "keep_host_header=true" in x]
            assert len(said) == 1 and "reverse mode" in said[0]
