"""What every adapter is made of (formats/base.py), and the explicit list of adapters."""

import pkgutil

from toolnames_core import formats
from toolnames_core.formats import FORMATS
from toolnames_core.formats.base import BlockResponse

# The modules in formats/ that are no adapter: what the adapters share.
SHARED = {"base", "openai_common"}


def test_every_adapter_module_is_in_the_table_once():
    adapters = {m.name for m in pkgutil.iter_modules(formats.__path__)} - SHARED
    assert {FORMATS[api].read_request.__module__.rsplit(".", 1)[1] for api in FORMATS} == adapters
    assert len(FORMATS) == len(adapters)


def test_a_block_answer_is_a_named_record():
    answer = BlockResponse(400, {"content-type": "application/json"}, b"{}")
    assert answer.status == 400 and answer.body == b"{}"
