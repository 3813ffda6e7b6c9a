"""The records adapters fill: a message that names nothing is not judged at all."""

from toolnames_core.model import Choice
from toolnames_core.model import NameRef
from toolnames_core.sessions.base import Block
from toolnames_core.sessions.base import ClientMessage


def test_names_anything():
    assert not ClientMessage().names_anything
    assert ClientMessage(tools=[]).names_anything  # an empty list clears the tools
    assert ClientMessage(choice_given=True).names_anything
    assert ClientMessage(choice=Choice("required", ("c",)), choice_given=True).names_anything
    assert ClientMessage(history=[NameRef("a", ("n",))]).names_anything
    assert ClientMessage(results=[NameRef("a", ("n",))]).names_anything


def test_a_block_is_an_event_or_a_close():
    assert Block(event=b"{}").close_code == 0
    assert Block(close_code=1007, close_reason="toolnames: x").event is None
