"""Live LLM APIs over a WebSocket: OpenAI Realtime (and Azure's) and Gemini Live.

A ``Session`` per connection reads each message as it passes (``session.py``); one
adapter per protocol says what a message declares, forces, remembers or calls
(``realtime.py``, ``gemini_live.py``); ``detect_protocol`` tells from the upgrade
request's path which protocol a connection speaks.
"""

from __future__ import annotations

from toolnames_core.sessions.base import Block
from toolnames_core.sessions.detect import detect_protocol
from toolnames_core.sessions.session import PROTOCOLS
from toolnames_core.sessions.session import Outcome
from toolnames_core.sessions.session import Session
from toolnames_core.sessions.session import SessionFix
from toolnames_core.sessions.session import inspect_session

__all__ = [
    "PROTOCOLS",
    "Block",
    "Outcome",
    "Session",
    "SessionFix",
    "detect_protocol",
    "inspect_session",
]
