"""toolnames' options: declared, read and checked in one place, and a bad value told in one
line that names the option, the value and what is accepted.

mitmproxy parses a script's ``--set`` values only once the script has declared its options,
inside its script loader, and a value it cannot parse there (``toolnames_redact=maybe``, a
scalar option given twice or without a value) leaves the script silently unloaded: no line,
no hook. So ``withdraw_unparsable`` takes such values out before mitmproxy reads them, and
the addon reports them itself.

mitmproxy also keeps a value for an option nobody declares (``--set toolnames_moed=fix``)
among its deferred values, silently, for good: the proxy would run in observe mode. So a
``toolnames_…`` name that is none of toolnames' options is withdrawn and told too, naming
the closest option (``unknown_option``); once running, mitmproxy's ``set`` command refuses
an unknown name itself, and ``refuse_unknown`` gives it the same line.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import NamedTuple
from typing import Optional

from mitmproxy import exceptions
from mitmproxy import flowfilter
from mitmproxy.utils import human

from toolnames_core import RULES
from toolnames_core import Reader
from toolnames_core import RuleOverride
from toolnames_core import parse_rule_override
from toolnames_core import reader_named

__all__ = [
    "FILTER",
    "MAX_BODY",
    "MCP_RULE",
    "MODE",
    "MODES",
    "NAMES",
    "OPTIONS",
    "READER",
    "REDACT",
    "RESIGN",
    "RULE",
    "SAVE",
    "Invalid",
    "PREFIX",
    "Option",
    "bad_value",
    "declare",
    "read",
    "refuse_unknown",
    "unknown_option",
    "withdraw_unparsable",
]

MODES = ("observe", "fix", "block")
READER_CHOICES = ("auto", "json", "msgspec")


class Invalid(ValueError):
    """A value an option does not accept: ``reason`` continues ``'<value>' …`` in the line."""

    def __init__(self, reason: str, value: object = None, shown: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.value = value
        self.shown = shown


class Option(NamedTuple):
    name: str
    typespec: Any
    default: Any
    help: str
    # What a value may be, for the error line.
    accepted: str
    # The value mitmproxy holds -> what the addon keeps; raises Invalid.
    parse: Callable[[Any], Any]
    choices: Sequence[str] | None = None


def _mode(value: str) -> str:
    # mitmproxy shows an option's choices but does not enforce them.
    if value not in MODES:
        raise Invalid("is not a mode", value)
    return value


def _save(value: str | None) -> Path | None:
    if not value:
        return None
    path = Path(value).expanduser()
    if path.is_dir():
        raise Invalid("is a folder", value)
    if not path.parent.is_dir():
        # Never made for the user: a typo in the folder would save flows where nobody looks.
        raise Invalid(f"is in a folder that does not exist ({path.parent})", value)
    return path


def _redact(value: bool) -> bool:
    # mitmproxy parses a bool itself (a value it cannot parse is withdrawn, see above).
    return value


def _rules(values: Sequence[str]) -> tuple[RuleOverride, ...]:
    overrides = []
    for spec in values:
        try:
            overrides.append(parse_rule_override(spec))
        except ValueError:
            raise Invalid("is not HOST_PATTERN=RULE with a known RULE", spec) from None
    return tuple(overrides)


def _mcp_rule(value: str) -> str:
    if value not in RULES:
        raise Invalid("is not a rule", value)
    return value


def _filter(value: str | None) -> flowfilter.TFilter | None:
    if not value:
        return None
    try:
        return flowfilter.parse(value)
    except ValueError:
        raise Invalid("is not a mitmproxy filter expression", value) from None


def _max_body(value: str) -> int:
    try:
        size = human.parse_size(value) or 0
    except ValueError:
        raise Invalid("is not a size", value) from None
    if size < 0:
        raise Invalid("is negative", value)
    return size


def _reader(value: str) -> Reader:
    if value not in READER_CHOICES:
        raise Invalid("is not a reader", value)
    try:
        return reader_named(value)
    except ValueError:
        # Only msgspec can be missing.
        raise Invalid(
            "cannot be used: msgspec is not installed beside mitmproxy (pipx inject mitmproxy "
            "msgspec, or uv tool install mitmproxy --with msgspec)",
            value,
        ) from None


MODE = Option(
    "toolnames_mode",
    str,
    "observe",
    "What to do with a request whose tool names are wrong. observe: annotate and log, never change "
    "a byte. fix: also rewrite a named tool choice that matches exactly one offered tool under a "
    "known client rewrite (Mastra, OpenAI Agents SDK), and send every tool name the provider's "
    "rule rejects under an alias it accepts, giving the app its own names back in the answer. "
    "block: answer a request with an error finding with HTTP 400 in the provider's own error "
    "shape, so it never reaches the provider.",
    ", ".join(MODES),
    _mode,
    MODES,
)
SAVE = Option(
    "toolnames_save",
    Optional[str],
    None,
    "Append every flagged flow, once complete, to this file in mitmproxy's flow format "
    "(read it with mitmproxy -r or mitmdump -nr). Its folder must exist. The file is created "
    "readable by its owner only.",
    "a new file or a mitmproxy flow file, in a folder that exists",
    _save,
)
REDACT = Option(
    "toolnames_redact",
    bool,
    True,
    "Remove credentials from flows saved by toolnames_save: every header and trailer whose name "
    "means a credential (authorization, api-key, x-portkey-api-key, helicone-auth, cookies, "
    "tokens, secrets, signatures) and such query parameters (key=, access_token=, sig=). "
    "The live flow is never touched.",
    "true, false (the option alone means true)",
    _redact,
)
RULE = Option(
    "toolnames_rule",
    Sequence[str],
    [],
    "Check names of requests to some hosts against another provider's rule, as HOST_PATTERN=RULE "
    "(a shell-style host pattern), e.g. openrouter.ai=anthropic for a gateway that forwards to "
    "Anthropic, or *=portable for the strictest rule every provider accepts. The first match wins. "
    "Rules: " + ", ".join(RULES) + ".",
    "HOST_PATTERN=RULE, RULE one of " + ", ".join(RULES),
    _rules,
)
FILTER = Option(
    "toolnames_filter",
    Optional[str],
    None,
    "Only inspect flows matching this mitmproxy filter expression (e.g. '~d api.openai.com'). "
    "By default every LLM API request is inspected.",
    "a mitmproxy filter expression such as '~d api.openai.com'",
    _filter,
)
MAX_BODY = Option(
    "toolnames_max_body",
    str,
    "32m",
    "Leave request bodies larger than this unread and forward them unchanged (the flow is "
    "annotated as unread). Accepts sizes like 512k or 32m; 0 reads every body.",
    "a number of bytes or a size such as 512k or 32m; 0 reads every body",
    _max_body,
)

READER = Option(
    "toolnames_reader",
    str,
    "auto",
    "How request and response bodies are decoded. auto: msgspec when it can be imported (it "
    "decodes only the fields toolnames reads, several times faster than json on large bodies), "
    "else json. json: the standard library. msgspec: insist on it. Every reader gives the same "
    "findings; the one in use is logged at start-up.",
    ", ".join(READER_CHOICES),
    _reader,
    READER_CHOICES,
)

RESIGN = Option(
    "toolnames_resign",
    bool,
    False,
    "In fix mode, sign a changed AWS SigV4-signed request (boto3, the AWS SDKs, Bedrock with IAM "
    "or SSO credentials) again, with the client's service, region and signed headers, using the "
    "credentials in mitmproxy's environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
    "AWS_SESSION_TOKEN, else the shared credentials file's AWS_PROFILE or default profile), and "
    "only when they are the access key the client signed with. Off: fix mode leaves signed "
    "requests as sent, and says so.",
    "true, false (the option alone means true)",
    _redact,
)

MCP_RULE = Option(
    "toolnames_mcp_rule",
    str,
    "openai",
    "The rule the tool names an MCP server lists are held to: each listed name this rule "
    "rejects is a warning (names only some other provider rejects are information), and fix "
    "mode lists it to the client under an alias the rule accepts, calling the server's tool by "
    "its own name. Rules: " + ", ".join(RULES) + ".",
    ", ".join(RULES),
    _mcp_rule,
    tuple(RULES),
)

OPTIONS = [MODE, SAVE, REDACT, RULE, FILTER, MAX_BODY, READER, RESIGN, MCP_RULE]
NAMES = frozenset(option.name for option in OPTIONS)
# Every toolnames option's name starts so: another name that does is a misspelled one.
PREFIX = "toolnames_"


def unknown_option(name: str) -> str | None:
    """The one line for a ``toolnames_…`` name that is no toolnames option; None for any
    other name (one of toolnames' own, or another addon's)."""
    if not name.startswith(PREFIX) or name in NAMES:
        return None
    # cutoff=0: a name that starts with the prefix always gets the closest of them.
    closest = difflib.get_close_matches(name, sorted(NAMES), n=1, cutoff=0)[0]
    return f"{name}: is not a toolnames option; did you mean {closest}?"


def refuse_unknown(commands) -> Callable[[], None]:
    """Put a ``set`` command before mitmproxy's own (the console's ``:set``, mitmweb's
    command bar) that refuses a misspelled toolnames option with its line, and hands every
    other call to mitmproxy's unchanged. Returns what puts mitmproxy's own back (``done``):
    mitmproxy removes no command when a script is unloaded."""
    original = commands.commands.get("set")
    if original is None:
        return lambda: None
    # A script reloaded wraps mitmproxy's own command, not the previous wrapper.
    own = getattr(original.func, "mitmproxy_set", original.func)

    def set_option(option: str, *value: str) -> None:
        line = unknown_option(option)
        if line is not None:
            raise exceptions.CommandError(line)
        own(option, *value)

    set_option.__doc__ = own.__doc__
    set_option.mitmproxy_set = own  # type: ignore[attr-defined]
    commands.add("set", set_option)
    installed = commands.commands["set"]

    def restore() -> None:
        if commands.commands.get("set") is installed:
            commands.commands["set"] = original

    return restore


def bad_value(option: Option, problem: Invalid) -> str:
    """The one line that tells a bad value."""
    what = f"{problem.value!r} {problem.reason}" if problem.shown else problem.reason
    return f"{option.name}: {what}; accepted: {option.accepted}"


def declare(loader) -> None:
    for option in OPTIONS:
        if option.choices:
            loader.add_option(
                option.name,
                option.typespec,
                option.default,
                option.help,
                choices=list(option.choices),
            )
        else:
            loader.add_option(option.name, option.typespec, option.default, option.help)


def read(options, names: Sequence[str]) -> dict[str, Any]:
    """The parsed values of the named toolnames options, or an OptionsError with the line."""
    parsed = {}
    for option in OPTIONS:
        if option.name in names:
            try:
                parsed[option.name] = option.parse(getattr(options, option.name))
            except Invalid as e:
                raise exceptions.OptionsError(bad_value(option, e)) from None
    return parsed


def withdraw_unparsable(options) -> list[str]:
    """
    Take out of mitmproxy's deferred values (``--set`` and the config file, for options not yet
    declared) those of toolnames' options that mitmproxy would fail to parse or type-check,
    and return a line for each; and those of ``toolnames_…`` names that are no toolnames
    option, which mitmproxy would keep without a word. Call it in ``load``, right after
    ``declare``.
    """
    problems = []
    for name in sorted(options.deferred):
        line = unknown_option(name)
        if line is not None:
            del options.deferred[name]
            problems.append(line)
    for option in OPTIONS:
        if option.name not in options.deferred:
            continue
        value = options.deferred[option.name]
        # mitmproxy keeps --set values as strings until the option is declared.
        strings = getattr(value, "val", None)
        try:
            if isinstance(strings, list):
                _check_strings(option, strings)
            else:
                _check_type(option, value)
        except Invalid as e:
            del options.deferred[option.name]
            problems.append(bad_value(option, e))
    return problems


def _check_strings(option: Option, strings: list[str]) -> None:
    """What mitmproxy's own parser rejects (optmanager._parse_setval), told as an Invalid."""
    if option.typespec == Sequence[str]:
        return
    if len(strings) > 1:
        given = ", ".join(repr(s) for s in strings)
        raise Invalid(f"was given {len(strings)} times ({given})", shown=False)
    value = strings[0] if strings else None
    if option.typespec is bool:
        if value not in (None, "true", "false", "toggle"):
            raise Invalid("is not a boolean", value)
    elif option.typespec is str and value is None:
        raise Invalid("was given without a value", shown=False)


def _check_type(option: Option, value: object) -> None:
    if option.typespec is bool:
        ok = isinstance(value, bool)
    elif option.typespec is str:
        ok = isinstance(value, str)
    elif option.typespec == Optional[str]:
        ok = value is None or isinstance(value, str)
    else:
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    if not ok:
        raise Invalid(f"is not a {_kind(option)}", value)


def _kind(option: Option) -> str:
    if option.typespec is bool:
        return "boolean"
    if option.typespec == Sequence[str]:
        return "list of strings"
    return "string"
