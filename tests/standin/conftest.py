"""The stand-in every test here talks to (one per module, reset before each test), and SDK
clients pointed at it.
"""

from __future__ import annotations

import pytest

from standin import StandinProvider

# ---------------------------------------------------------------------------
# fixtures and HTTP helpers


@pytest.fixture(scope="module")
def server():
    with StandinProvider() as provider:
        yield provider


@pytest.fixture
def provider(server):
    server.reset()
    return server


# ---------------------------------------------------------------------------
# real SDK round trips


@pytest.fixture
def openai_client(provider):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=provider.url + "/v1", api_key="sk-test", max_retries=0)


@pytest.fixture
def anthropic_client(provider):
    anthropic = pytest.importorskip("anthropic")
    return anthropic.Anthropic(base_url=provider.url, api_key="sk-ant-test", max_retries=0)
