"""Anthropic's Message Batches for the stand-in provider: ``POST /v1/messages/batches``.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

from standin.anthropic_messages import AnthropicMessages
from standin.shared import as_dict
from standin.shared import as_list

__all__ = ["AnthropicBatches", "batch_in_progress"]


class AnthropicBatches(AnthropicMessages):
    """providers.md §5: a batch of Messages bodies, ``{"requests": [{"custom_id", "params"}]}``.
    Anthropic validates each ``params`` only when the batch is processed ("Validation of the
    params object for each message request is performed asynchronously", its batch docs), so
    the create call checks the envelope only and answers the batch object, in progress."""

    def mode_for(self, path):
        return "json" if path.endswith("/v1/messages/batches") else None

    def validate(self, body, name_max_length=None):
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise self.error("requests: Field required")  # modeled (pydantic wording)
        seen = set()
        for i, request in enumerate(requests):
            custom_id = as_dict(request).get("custom_id")
            if not isinstance(custom_id, str):
                raise self.error(f"requests.{i}.custom_id: Field required")  # modeled
            if not isinstance(as_dict(request).get("params"), dict):
                raise self.error(f"requests.{i}.params: Field required")  # modeled
            if custom_id in seen:
                # Modeled: the docs say each custom_id must be unique within the batch.
                raise self.error(f"requests.{i}.custom_id: custom_id must be unique")
            seen.add(custom_id)

    def decide(self, body, path, raw, call_header):
        return super().decide({}, path, raw, "")  # the batch is answered later, if ever

    def render(self, turn, body, done: bool = True):
        return batch_in_progress(f"msgbatch_{turn.uid}", len(as_list(body.get("requests"))))


def batch_in_progress(batch_id: str, count: int) -> dict:
    """The batch object a create call answers: `count` requests processing, none done. The
    SDK fixtures' capture server (tests/fixtures/capture_sdk_bodies.py) answers it too."""
    return {
        "id": batch_id,
        "type": "message_batch",
        "processing_status": "in_progress",
        "request_counts": {
            "processing": count,
            "succeeded": 0,
            "errored": 0,
            "canceled": 0,
            "expired": 0,
        },
        "ended_at": None,
        "created_at": "2026-01-01T00:00:00Z",
        "expires_at": "2026-01-02T00:00:00Z",
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": None,
    }
