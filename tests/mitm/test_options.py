"""toolnames' options (options.py): each value checked, and a bad one told in one line."""

import pytest
from mitmproxy import addonmanager
from mitmproxy import exceptions
from mitmproxy.test import taddons

from toolnames_core import readers
from toolnames_mitm import options

RULES_ACCEPTED = (
    "HOST_PATTERN=RULE, RULE one of openai, azure, anthropic, gemini, bedrock, mistral, groq, "
    "deepseek, cohere, ollama, portable"
)


@pytest.fixture
def tctx():
    with taddons.context() as tctx:
        options.declare(addonmanager.Loader(tctx.master))
        yield tctx


@pytest.mark.parametrize(
    "name,value,line",
    [
        (
            "toolnames_mode",
            "Block",
            "toolnames_mode: 'Block' is not a mode; accepted: observe, fix, block",
        ),
        (
            "toolnames_rule",
            ["*=portable", "openrouter.ai=claude"],
            f"toolnames_rule: 'openrouter.ai=claude' is not HOST_PATTERN=RULE with a known RULE; accepted: {RULES_ACCEPTED}",
        ),
        (
            "toolnames_rule",
            ["openrouter.ai"],
            f"toolnames_rule: 'openrouter.ai' is not HOST_PATTERN=RULE with a known RULE; accepted: {RULES_ACCEPTED}",
        ),
        (
            "toolnames_filter",
            "~~",
            "toolnames_filter: '~~' is not a mitmproxy filter expression; accepted: a mitmproxy filter expression such as '~d api.openai.com'",
        ),
        (
            "toolnames_max_body",
            "12q",
            "toolnames_max_body: '12q' is not a size; accepted: a number of bytes or a size such as 512k or 32m; 0 reads every body",
        ),
        (
            "toolnames_max_body",
            "-1",
            "toolnames_max_body: '-1' is negative; accepted: a number of bytes or a size such as 512k or 32m; 0 reads every body",
        ),
        (
            "toolnames_reader",
            "ujson",
            "toolnames_reader: 'ujson' is not a reader; accepted: auto, json, msgspec",
        ),
        (
            "toolnames_mcp_rule",
            "mcp",
            "toolnames_mcp_rule: 'mcp' is not a rule; accepted: "
            + RULES_ACCEPTED.split("one of ")[1],
        ),
    ],
)
def test_a_bad_value_is_one_line_with_the_option_the_value_and_what_is_accepted(
    tctx, name, value, line
):
    tctx.options.update(**{name: value})
    with pytest.raises(exceptions.OptionsError) as e:
        options.read(tctx.options, [name])
    assert str(e.value) == line


def test_the_reader_is_auto_json_or_msgspec_where_it_can_be_imported(tctx):
    tctx.options.update(toolnames_reader="json")
    assert options.read(tctx.options, ["toolnames_reader"]) == {
        "toolnames_reader": readers.STANDARD
    }
    tctx.options.update(toolnames_reader="msgspec")
    if readers.FAST:
        assert options.read(tctx.options, ["toolnames_reader"])["toolnames_reader"] is readers.FAST
    else:
        with pytest.raises(exceptions.OptionsError) as e:
            options.read(tctx.options, ["toolnames_reader"])
        assert str(e.value) == (
            "toolnames_reader: 'msgspec' cannot be used: msgspec is not installed beside "
            "mitmproxy (pipx inject mitmproxy msgspec, or uv tool install mitmproxy --with "
            "msgspec); accepted: auto, json, msgspec"
        )


def test_a_save_path_must_be_a_file_in_a_folder_that_exists(tctx, tmp_path):
    missing = tmp_path / "typo" / "flagged.mitm"
    for path, reason in [
        (missing, f"is in a folder that does not exist ({missing.parent})"),
        (tmp_path, "is a folder"),
    ]:
        tctx.options.update(toolnames_save=str(path))
        with pytest.raises(exceptions.OptionsError) as e:
            options.read(tctx.options, ["toolnames_save"])
        assert str(e.value) == (
            f"toolnames_save: '{path}' {reason}; accepted: a new file or a mitmproxy flow file, in a folder that exists"
        )
    assert not missing.parent.exists()
    tctx.options.update(toolnames_save=str(tmp_path / "flagged.mitm"))
    assert options.read(tctx.options, ["toolnames_save"]) == {
        "toolnames_save": tmp_path / "flagged.mitm"
    }


def test_good_values_are_read_into_what_the_addon_keeps(tctx):
    tctx.options.update(
        toolnames_mode="fix",
        toolnames_rule=["openrouter.ai=anthropic"],
        toolnames_filter="~d api.openai.com",
        toolnames_max_body="1k",
        toolnames_redact=False,
        toolnames_mcp_rule="anthropic",
    )
    parsed = options.read(tctx.options, options.NAMES)
    assert parsed["toolnames_mcp_rule"] == "anthropic"
    assert parsed["toolnames_mode"] == "fix"
    assert [(o.host_pattern, o.rule) for o in parsed["toolnames_rule"]] == [
        ("openrouter.ai", "anthropic")
    ]
    assert parsed["toolnames_filter"] is not None
    assert parsed["toolnames_max_body"] == 1024
    assert parsed["toolnames_redact"] is False
    assert parsed["toolnames_save"] is None
    assert parsed["toolnames_reader"] is readers.READERS[0]  # auto


def test_the_defaults_are_valid_and_every_help_is_one_paragraph(tctx):
    assert set(options.read(tctx.options, options.NAMES)) == options.NAMES
    for option in options.OPTIONS:
        assert option.name.startswith("toolnames_")
        assert "\n" not in option.help


# --set values as mitmproxy keeps them until a script declares its options.
SPECS = [
    ["toolnames_redact=maybe"],
    ["toolnames_redact=False"],
    ["toolnames_redact=no"],
    ["toolnames_redact"],
    ["toolnames_redact=false"],
    ["toolnames_redact=toggle"],
    ["toolnames_mode"],
    ["toolnames_mode=fix", "toolnames_mode=block"],
    ["toolnames_mode=nonsense"],  # parses; configure refuses it
    ["toolnames_save"],
    ["toolnames_save=a", "toolnames_save=b"],
    ["toolnames_rule=a=openai", "toolnames_rule=b=anthropic"],
    ["toolnames_filter"],
    ["toolnames_max_body=1k", "toolnames_max_body=2k"],
]


@pytest.mark.parametrize("specs", SPECS, ids=" ".join)
def test_exactly_the_values_mitmproxy_cannot_parse_are_withdrawn(specs):
    """mitmproxy's own parser is the judge: what it would refuse (and so unload the script
    without a word) is withdrawn and told; everything else is left to it."""
    with taddons.context() as tctx:
        tctx.options.set(*specs, defer=True)
        options.declare(addonmanager.Loader(tctx.master))
        try:
            tctx.options.process_deferred()
            refused = False
        except exceptions.OptionsError:
            refused = True
    with taddons.context() as tctx:
        tctx.options.set(*specs, defer=True)
        options.declare(addonmanager.Loader(tctx.master))
        problems = options.withdraw_unparsable(tctx.options)
        assert bool(problems) == refused
        assert all("\n" not in p and p.startswith("toolnames_") for p in problems)
        tctx.options.process_deferred()  # never raises now
        assert not any(name in tctx.options.deferred for name in options.NAMES)


def test_the_lines_name_the_value_and_what_is_accepted():
    with taddons.context() as tctx:
        tctx.options.set(
            "toolnames_redact=maybe", "toolnames_mode", "toolnames_max_body=1k",
            "toolnames_max_body=2k", defer=True,
        )  # fmt: skip
        options.declare(addonmanager.Loader(tctx.master))
        assert options.withdraw_unparsable(tctx.options) == [
            "toolnames_mode: was given without a value; accepted: observe, fix, block",
            "toolnames_redact: 'maybe' is not a boolean; accepted: true, false (the option alone means true)",
            "toolnames_max_body: was given 2 times ('1k', '2k'); accepted: a number of bytes or a size such as 512k or 32m; 0 reads every body",
        ]


def test_a_value_of_the_wrong_type_from_the_config_file_is_withdrawn():
    with taddons.context() as tctx:
        # What mitmproxy's config.yaml loader defers: typed YAML values.
        tctx.options.deferred.update({"toolnames_redact": "maybe", "toolnames_rule": "a=openai"})
        options.declare(addonmanager.Loader(tctx.master))
        assert options.withdraw_unparsable(tctx.options) == [
            "toolnames_redact: 'maybe' is not a boolean; accepted: true, false (the option alone means true)",
            f"toolnames_rule: 'a=openai' is not a list of strings; accepted: {RULES_ACCEPTED}",
        ]
        tctx.options.process_deferred()


@pytest.mark.parametrize(
    "name,closest",
    [
        ("toolnames_moed", "toolnames_mode"),
        ("toolnames_maxbody", "toolnames_max_body"),
        ("toolnames_rules", "toolnames_rule"),
        ("toolnames_svae", "toolnames_save"),
        ("toolnames_Mode", "toolnames_mode"),
    ],
)
def test_a_misspelled_option_is_withdrawn_and_told_with_the_closest(name, closest):
    # mitmproxy keeps a value for an option nobody declared among its deferred values, for
    # good and without a word: the proxy would run in observe mode.
    with taddons.context() as tctx:
        tctx.options.set(f"{name}=fix", "other_addons_option=1", defer=True)
        options.declare(addonmanager.Loader(tctx.master))
        problems = options.withdraw_unparsable(tctx.options)
        assert problems == [f"{name}: is not a toolnames option; did you mean {closest}?"]
        assert name not in tctx.options.deferred
        # Another addon's option is left to that addon (and to mitmproxy).
        assert "other_addons_option" in tctx.options.deferred


def test_the_set_command_refuses_a_misspelled_option_with_the_same_line():
    from toolnames_mitm.addon import ToolNames

    addon = ToolNames()
    with taddons.context(addon) as tctx:
        commands = tctx.master.commands
        with pytest.raises(exceptions.CommandError) as refused:
            commands.call_strings("set", ["toolnames_moed", "fix"])
        assert str(refused.value) == (
            "toolnames_moed: is not a toolnames option; did you mean toolnames_mode?"
        )
        with pytest.raises(exceptions.CommandError) as refused:
            commands.execute("set toolnames_moed fix")
        assert "did you mean toolnames_mode?" in str(refused.value)
        # Everything else is mitmproxy's own set, as before.
        commands.call_strings("set", ["toolnames_mode", "fix"])
        assert tctx.options.toolnames_mode == "fix" and addon.mode == "fix"
        with pytest.raises(exceptions.CommandError, match="Unknown option"):
            commands.call_strings("set", ["no_such_option", "1"])
        addon.done()
        # Unloaded: mitmproxy's own command is back.
        with pytest.raises(exceptions.CommandError, match="Unknown option"):
            commands.call_strings("set", ["toolnames_moed", "fix"])
