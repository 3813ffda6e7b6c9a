"""SDK clients answered by a mock transport."""

from __future__ import annotations

import importlib

import pytest

from toolnames_core.formats import BlockResponse

__all__ = ["answering_http_client", "sdk_http_module"]


def sdk_http_module():
    # openai 3.x and anthropic 2.x are built on httpx2 (the same API as httpx); older releases
    # on httpx.
    for name in ("httpx2", "httpx"):
        try:
            return importlib.import_module(name)
        except ImportError:
            pass
    pytest.skip("neither httpx2 nor httpx is installed")


def answering_http_client(answer: BlockResponse):
    """An http client for an SDK that answers every request with (status, headers, body)."""
    httpx = sdk_http_module()
    status, headers, content = answer
    transport = httpx.MockTransport(
        lambda request: httpx.Response(status, headers=headers, content=content)
    )
    return httpx.Client(transport=transport)
