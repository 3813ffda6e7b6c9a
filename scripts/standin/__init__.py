"""
A stand-in LLM provider on loopback, shared by the demo, the benchmark and the tests.

server              the HTTP side: StandinProvider (in-process) and `python -m standin`
formats             the formats in one explicit list, and which of them serves a path
shared              what the formats share: the error, the fake model's Turn, helpers
openai_chat, openai_responses, anthropic_messages, gemini, bedrock_converse
                    one module per wire format, named like the addon's adapters

It does not import the addon: it is an oracle written from the providers' documented
behaviour (docs/providers.md), not from the code it tests.
"""

from standin.server import StandinProvider

__all__ = ["StandinProvider"]
