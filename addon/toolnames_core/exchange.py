"""One LLM API exchange, from the request's bytes to the findings about its answer.

An ``Exchange`` holds everything toolnames knows about one request and its response, the
way h11's ``Connection`` holds one connection: what the request offered (its view), what
was wrong with it, what fix mode changed, and what the answer called. It is the one answer
to "what is this answer checked against?", used by the live addon, the scanner, the content
view and the report alike.

    exchange = Exchange.for_request("POST", "/v1/chat/completions", "api.openai.com")
    exchange.check_request(body, fix=True)        # findings, fixes, exchange.new_body
    exchange.check_response(200, "application/json", answer)
    exchange.findings                              # request's, then response's

An error answer is the provider's verdict on the request: ``check_response`` reads which
tool name or choice it rejected (``rejections.py``) and weighs it against what toolnames
predicted (``verdicts.py``); an accepted request is weighed too.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from toolnames_core import bodies
from toolnames_core import codes
from toolnames_core import fixes as fixes_
from toolnames_core import rejections as rejections_
from toolnames_core import request_checks
from toolnames_core import response_checks
from toolnames_core import verdicts
from toolnames_core.aliases import Restorer
from toolnames_core.encodings import ASK_UNCOMPRESSED
from toolnames_core.encodings import READABLE
from toolnames_core.encodings import stream_coding
from toolnames_core.endpoints import RuleOverride
from toolnames_core.endpoints import choose_rule
from toolnames_core.formats import BlockResponse
from toolnames_core.formats import WireFormat
from toolnames_core.formats import format_for
from toolnames_core.model import Finding
from toolnames_core.model import Fix
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import SkippedFix
from toolnames_core.names import quote_name
from toolnames_core.readers import DEFAULT
from toolnames_core.readers import Reader
from toolnames_core.rejections import Rejection
from toolnames_core.rules import NameRule
from toolnames_core.sigv4 import Signed
from toolnames_core.streams import StreamTap

if TYPE_CHECKING:
    # For the annotation only: the record stands above the exchange it is made from.
    from toolnames_core.record import FlowRecord

__all__ = ["SIGNED_SKIP", "SIGNED_WORKAROUNDS", "UNRECORDED_ANSWER", "Exchange", "inspect_exchange"]

# Why a signed request is left as sent when nothing said it may be signed again.
NOT_ALLOWED = "nothing allowed toolnames to sign it again"
# A name fix mode left as sent because the request is signed (the record's fix_skipped).
SIGNED_SKIP = "was left as sent: the request is signed with AWS SigV4"
# What lets fix mode change a signed request, said once in the comment and the view.
SIGNED_WORKAROUNDS = (
    "what would work: --set toolnames_resign=true with the client's own AWS credentials in "
    "mitmproxy's environment, a Bedrock API key sent as Authorization: Bearer, or a gateway "
    "that signs the requests it forwards"
)

# Why a recorded answer's calls went unchecked: mitmproxy keeps no streamed body unless its
# store_streamed_bodies option is on, so saved streams (toolnames_save's too) have none.
UNRECORDED_ANSWER = (
    "the recording holds no body for this answer (mitmproxy keeps a streamed answer's body "
    "only with --set store_streamed_bodies=true)"
)


class Exchange:
    """One request and its answer. The request is checked once (``check_request``,
    ``request_unreadable`` or ``request_without_tools``), then the answer once."""

    __slots__ = (
        "format",
        "rule",
        "host",
        "view",
        "readable",
        "request_checked",
        "request_findings",
        "fixes",
        "fix_skipped",
        "new_body",
        "blocked",
        "response_checked",
        "restorer",
        "accept_encoding_sent",
        "length_dropped",
        "response_calls",
        "response_findings",
        "rejections",
        "reader",
        "signed",
        "unsignable",
        "signed_declined",
        "resigned",
        "answer_decoded",
        "record",
    )

    def __init__(
        self, fmt: WireFormat, rule: NameRule, host: str = "", reader: Reader = DEFAULT
    ) -> None:
        # The format it speaks and the rule its names get: the records, looked up once
        # (``for_request``; ``formats.format_named`` and ``rules.rule_named`` by id).
        self.format = fmt
        self.rule = rule
        # The host the request went to, as the rule was chosen for it: drift is per host.
        self.host = host
        # What the request offered; None for a request without tools or one not read.
        self.view: RequestView | None = None
        # False when the request could not be read: what it offered is unknown, so no call
        # in its answer can be judged.
        self.readable = True
        self.request_checked = False
        self.request_findings: list[Finding] = []
        self.fixes: list[Fix] = []
        self.fix_skipped: list[SkippedFix] = []
        # The body as fix mode rewrote it, to send on instead of the client's.
        self.new_body: bytes | None = None
        # Fix mode's aliases, to put the app's names back into the answer.
        self.restorer: Restorer | None = None
        # The client's Accept-Encoding ("" if it sent none) when fix mode asked for an
        # uncompressed answer instead; None when it left the header alone.
        self.accept_encoding_sent: str | None = None
        # The streamed answer's Content-Length when fix mode dropped it; None otherwise.
        self.length_dropped: str | None = None
        # The answer is toolnames' own: nothing of the provider's to check.
        self.blocked = False
        self.response_checked = False
        self.response_calls: list[NameRef] = []
        self.response_findings: list[Finding] = []
        # What the provider's error answer rejected, tied to the request where it could be.
        self.rejections: list[Rejection] = []
        # How its bodies are decoded (readers.py): every reader gives the same answer.
        self.reader = reader
        # The request's AWS SigV4 signature (sigv4.py), if it carries one; set by the caller.
        self.signed: Signed | None = None
        # Why fix mode may not sign it again; None only when the caller, holding the
        # client's own credentials, allows it (before a fix is planned). Until then a signed
        # request is never changed.
        self.unsignable: str | None = NOT_ALLOWED
        # Why fix mode left the signed request as sent, when it did.
        self.signed_declined: str | None = None
        # Fix mode changed the signed request and signed it again (set by the caller).
        self.resigned = False
        # The content-encoding of a streamed answer fix mode decoded to give names back in.
        self.answer_decoded: str | None = None
        # Its latest record (record.FlowRecord.of): the next one reuses what this one made.
        self.record: FlowRecord | None = None

    @classmethod
    def for_request(
        cls,
        method: str,
        path: str,
        host: str,
        port: int | None = None,
        overrides: tuple[RuleOverride, ...] = (),
        reader: Reader = DEFAULT,
    ) -> Exchange | None:
        """The exchange for a request of ``method`` to ``host`` and ``path``: the format the
        path speaks and the rule the host gets for it; None if it is no LLM API call toolnames
        knows. The one way the addon, the view, the scanner and the report make one."""
        fmt = format_for(method, path)
        if fmt is None:
            return None
        return cls(fmt, choose_rule(fmt, host, overrides, port), host, reader)

    # -- the request -------------------------------------------------------------------

    def request_without_tools(self) -> None:
        """The request is known to name no tools (the tool-key scan found none)."""
        self.request_checked = True

    def request_unreadable(self, problem: str) -> None:
        """The request's body cannot be read (too large, streamed, undecodable)."""
        self.request_checked = True
        self.readable = False
        self.request_findings = [bodies.unreadable(problem)]

    def check_request(
        self,
        content: bytes,
        *,
        problem: str | None = None,
        fix: bool = False,
        scanned: bool = False,
    ) -> None:
        """Read and check the request. ``problem``: why its body cannot be read, if it
        cannot; ``fix``: plan fix mode's rewrites (``new_body``); ``scanned``: the caller's
        tool-key scan found a key, so it is not scanned again."""
        if problem is not None:
            self.request_unreadable(problem)
            return
        self.request_checked = True
        view, problem = bodies.read_request(
            content, self.format, scanned=scanned, reader=self.reader
        )
        if problem:
            self.readable = False
            self.request_findings = [problem]
        if view is None:
            return
        self.view = view
        self.request_findings = request_checks.check_request(view, self.rule, self.format)
        if fix and self.request_findings:
            self._fix(content)

    def _fix(self, content: bytes) -> None:
        """Fix mode: point a mismatched choice at the tool the client meant (a known client
        rewrite), and send every name the rule rejects under an alias (``aliases.py``)."""
        view = self.view
        choices = fixes_.FixPlan()
        # Only a choice that names a tool can name one not offered (plan_fixes reads nothing
        # else): most requests send "auto", and a renamed request holds a finding per place.
        if any(c.names for c in view.choices) and any(
            f.code == codes.CHOICE_NOT_IN_TOOLS for f in self.request_findings
        ):
            choices = fixes_.plan_fixes(view)
        done = fixes_.rewrite(
            view,
            self.rule,
            content,
            "was left as sent: the body is not UTF-8",
            choices,
            carried=self.format.carried,
        )
        self.fix_skipped = done.skipped + self._namespaced_left(view) + self._unenforced_left()
        self._note_skipped()
        if done.content is None:
            return
        if self.signed is not None and self.unsignable is not None:
            self._decline_signed(done.fixes)
            return
        self.fixes = done.fixes
        self.new_body = done.content
        # The answer is judged against what the provider was sent: a fixed choice names
        # the tool it now names (the record keeps what the client sent); aliased names
        # are judged as the app's own, once the answer has them back.
        fixed = {fix.where: fix.new for fix in choices.fixes}
        for choice in view.choices:
            for ref in choice.names:
                ref.name = fixed.get(ref.where, ref.name)
        if done.aliases:
            self.restorer = Restorer(done.aliases)

    def _namespaced_left(self, view: RequestView) -> list[SkippedFix]:
        """Names in a Responses namespace (its own name, a tool inside it) that break the
        rule: fix mode leaves them as sent, and says so, since a call names the namespace
        and the tool apart and toolnames does not give such a pair back."""
        tools = view.tools
        # Only the Responses API has namespaces: most requests hold none, settled in a step or
        # two per tool, where every finding (a renamed request holds one per tool) was sifted.
        # A name that merely holds "\0namespace:" takes the exact way below.
        if {t.namespace for t in tools} <= {None} and "\0namespace:" not in "\0" + "\0".join(
            [t.name for t in tools]
        ):
            return []
        places = {
            ref.path: ref.name.removeprefix("namespace:")
            for ref in tools
            if ref.namespace is not None or ref.name.startswith("namespace:")
        }
        return [
            SkippedFix(
                f.path,
                places[f.path],
                "was left as sent: fix mode does not rename names in a Responses namespace",
            )
            for f in self.request_findings
            if f.severity == "error" and f.path in places
        ]

    def _unenforced_left(self) -> list[SkippedFix]:
        """Under a rule its provider does not enforce (Ollama's), fix mode renames nothing:
        the provider takes every name, so no name is rejected; a name it still warns about
        (empty, offered twice) is left as sent, and the finding says why."""
        if self.rule.enforced:
            return []
        names = {ref.path: ref.name for ref in self.view.tools}
        why = (
            f"was left as sent: rule {self.rule.id} limits no names (the provider takes any), "
            "so fix mode renames none; toolnames_rule='HOST=RULE' renames under another rule"
        )
        return [
            SkippedFix(f.path, names[f.path], why)
            for f in self.request_findings
            if f.code in (codes.NAME_EMPTY, codes.NAME_DUPLICATE) and f.path in names
        ]

    def _note_skipped(self) -> None:
        """Say on the finding a declined fix concerns why fix mode left it: the log line,
        the comment, the content view and the scanner all show findings."""
        view = self.view
        findings = self.request_findings
        for skip in self.fix_skipped:
            if skip.path:
                places = {skip.path}
            else:  # a name fix mode would alias: wherever it sits
                refs = [*view.tools, *view.history, *(r for c in view.choices for r in c.names)]
                places = {ref.path for ref in refs if ref.name == skip.name}
            for i, finding in enumerate(findings):
                if finding.path in places:
                    message = f"{finding.message}; not fixed: {skip.text}"
                    findings[i] = dataclasses.replace(finding, message=message)
                    break

    def _decline_signed(self, planned: list[Fix]) -> None:
        """Fix mode leaves a signed request it may not sign again as sent, and says why on
        each finding a fix concerned: any change would make the provider refuse it."""
        why = (
            f"the request is signed with AWS SigV4 ({self.signed.scope_text}), which any change "
            f"would break (HTTP 403), and {self.unsignable}"
        )
        self.signed_declined = self.unsignable
        self.fix_skipped += [SkippedFix(f.path, f.old, SIGNED_SKIP) for f in planned]
        places = {f.path for f in planned}
        for i, finding in enumerate(self.request_findings):
            if finding.path in places and "; not fixed: " not in finding.message:
                message = f"{finding.message}; not fixed: {why}"
                self.request_findings[i] = dataclasses.replace(finding, message=message)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.request_findings if f.severity == "error"]

    def block_response(self) -> BlockResponse:
        """The answer that replaces the provider's for a request with errors; the exchange
        is then blocked, and that answer is never checked."""
        self.blocked = True
        errors = self.errors
        return self.format.block_response(block_message(errors, self.view), errors[0])

    # -- the answer --------------------------------------------------------------------

    def answer_encoding(self, accept_encoding: str) -> str | None:
        """The Accept-Encoding to send instead of the client's (``""``: it sent none), or None
        to leave it. Fix mode gives names back in the answer: a whole body mitmproxy decodes
        and encodes again, but a compressed stream would have to be re-compressed on the fly,
        so a request whose names were aliased asks for an uncompressed answer (identity). No
        Accept-Encoding at all admits every coding (RFC 9110 §12.5.3), so it is set then too."""
        if self.restorer is None or accept_encoding.strip().lower() == "identity":
            return None
        self.accept_encoding_sent = accept_encoding
        return "identity"

    def restore(self, content: bytes) -> bytes | None:
        """The answer with the app's names back in place of fix mode's aliases; None when
        nothing in it was renamed."""
        if self.restorer is None:
            return None
        restored = self.restorer(content)
        return restored if restored != content else None

    def stream_tap(self, content_encoding: str = "") -> StreamTap | None:
        """A tap for the streamed answer: it reads the calls (through gzip or deflate, if
        the stream is so encoded) and restores the app's names."""
        fmt = self.format
        if fmt.stream_collector is None or fmt.framing is None:
            return None
        coding = stream_coding(content_encoding)
        if coding in READABLE and self.restorer is not None:
            # Names go back inside the decoded stream, which goes on uncompressed: a signed
            # request's Accept-Encoding could not ask for an uncompressed one, and a provider
            # may compress whatever it was asked.
            self.answer_decoded = coding
        elif coding is not None and self.restorer is not None:
            # Restoring names inside a compressed stream would mean re-compressing it: the
            # stream goes on as the provider sent it, and the record says the app got aliases.
            self.fix_skipped += [
                SkippedFix(
                    "",
                    name,
                    f"was not given back in the answer, which came compressed with {coding} "
                    "although the request asked for an uncompressed one: the app got calls "
                    f"to {quote_name(alias)}",
                )
                for alias, name in self.restorer.aliases.items()
            ]
            # The calls are judged as the app got them: an alias is a tool it never offered.
            self.restorer = None
            return StreamTap(fmt, None, coding, self.reader, self._ask_uncompressed())
        return StreamTap(fmt, self.restorer, coding, self.reader, self._ask_uncompressed())

    def _ask_uncompressed(self) -> str:
        """What lets toolnames read a stream in a coding it cannot decode: mitmproxy's
        anticomp, unless the request's signature covers its Accept-Encoding (anticomp would
        break it)."""
        if self.signed is not None and self.signed.covers("accept-encoding"):
            return (
                "the request's Accept-Encoding is covered by its AWS SigV4 signature, so "
                "mitmproxy's anticomp would break the request: it cannot ask for an "
                "uncompressed answer"
            )
        return ASK_UNCOMPRESSED

    def drops_length(self, tap: StreamTap, content_length: str | None) -> bool:
        """Whether the streamed answer must go on without its Content-Length: the headers
        go to the client before the first byte of the body, and a tap that gives names back
        may change the body's length, so the length the provider sent would no longer hold
        and the client would wait for bytes that never come. The record says so."""
        if tap.rewriter is None or content_length is None:
            return False
        self.length_dropped = content_length
        return True

    @property
    def restored(self) -> int:
        """How many names in the answer were given back to the app so far."""
        return self.restorer.restored if self.restorer else 0

    def check_response(
        self, status: int | None, content_type: str, content: bytes, complete: bool = True
    ) -> list[Finding]:
        """Check a whole answer body (streamed bodies included, read whole); an error
        answer is read for what it rejected."""
        if self._hears_rejection(status):
            return self._rejected(status, content)
        if not self._judges(status):
            return []
        calls, problem = bodies.read_response_calls(self.format, content_type, content, self.reader)
        if problem is not None:
            self._not_given_back()
        found = self.check_calls(calls, complete, problem)
        # A streamed answer counts as accepted once it has begun: a body with any bytes
        # (isspace stops at the first other byte; strip would copy a large body).
        return found + self._accepted(status) if content and not content.isspace() else found

    def check_stream(self, status: int | None, tap: StreamTap, complete: bool) -> list[Finding]:
        """Check an answer read as it streamed by; ``complete`` False if it broke off."""
        if not self._judges(status):
            return []
        # An unread or broken-off stream proves nothing by the calls it lacks.
        problem = tap.problem()
        # A stream the provider ended with an error is no whole answer either.
        exception = tap.exception
        whole = complete and tap.ended and not problem and exception is None
        found = self.check_calls(tap.calls(), whole, problem)
        if exception is not None and exception[0].lower() in self.format.framing.rejects:
            # The provider's verdict on the request, sent inside the HTTP 200 stream once it
            # had begun (Bedrock's ValidationException, Ollama's {"error": ...} line): read as
            # its error answers are, and weighed as the 400 answer that carries the same.
            calls_found = self.response_findings
            found = [*found, *self._rejected(400, exception[1])]
            self.response_findings = [*calls_found, *self.response_findings]
            return found  # refused, not accepted, although it began as HTTP 200
        # Accepted once the first event arrived, whether or not the stream then broke off.
        return found + self._accepted(status) if tap.events else found

    def response_unread(self, status: int | None, why: str) -> list[Finding]:
        """The answer came but its body is not at hand (streamed through unkept, or a
        recording without it). When the request offered tools, that is said: a missing
        body must never pass for an answer without calls."""
        if not self._judges(status) or self.view is None or not self.view.tools:
            return []
        self._not_given_back()
        self.response_findings = [bodies.unchecked_calls(why)]
        return [*self.response_findings, *self._accepted(status)]

    def _not_given_back(self) -> None:
        """Fix mode's names cannot be given back in an answer toolnames cannot read: the
        record says so, name by name, and the answer goes on as it came."""
        if self.restorer is None:
            return
        self.fix_skipped += [
            SkippedFix(
                "",
                name,
                "was not given back in the answer, which toolnames could not read: a call "
                f"to it reached the app as {quote_name(alias)}",
            )
            for alias, name in self.restorer.aliases.items()
        ]
        self.restorer = None

    @property
    def sent_as_is(self) -> bool:
        """The provider saw the client's own bytes: its verdict is one on toolnames' rule."""
        return self.new_body is None and not self.blocked

    def _hears_rejection(self, status: int | None) -> bool:
        if self.response_checked or status not in rejections_.REJECTING_STATUSES:
            return False
        self.response_checked = True
        return self.request_checked and not self.blocked

    def _rejected(self, status: int, content: bytes) -> list[Finding]:
        sent = {fix.where: fix.new for fix in self.fixes}
        self.rejections = rejections_.read_rejections(self.format, status, content, self.view, sent)
        self.response_findings = verdicts.rejected_findings(
            self.rejections,
            status,
            self.request_findings,
            self.rule.id,
            self.host,
            self.sent_as_is,
            self.readable,
            {fix.path: (fix.old, fix.rewrite) for fix in self.fixes},
        )
        return self.response_findings

    def _accepted(self, status: int) -> list[Finding]:
        """The provider accepted what toolnames' rule rejects, if it did, as the client sent it."""
        if not self.request_findings or not self.sent_as_is or self.view is None:
            return []
        if self.format.validates_later:
            return []
        names = {ref.path: ref.name for ref in (*self.view.tools, *self.view.history)}
        found = verdicts.accepted_findings(
            status, self.request_findings, names, self.rule.id, self.host
        )
        self.response_findings = [*self.response_findings, *found]
        return found

    def _judges(self, status: int | None) -> bool:
        # Calls are judged once, in successful answers of the provider, against a request
        # that was read: an unread request's offer is unknown, not empty.
        if self.response_checked:
            return False
        self.response_checked = True
        ok = status is not None and 200 <= status < 300
        return ok and self.request_checked and not self.blocked

    def check_calls(
        self, calls: list[NameRef], complete: bool = True, problem: Finding | None = None
    ) -> list[Finding]:
        """Judge the calls of a successful answer, read by the caller; ``problem``: what
        kept the caller from reading all of it."""
        self.response_checked = True
        if self.restorer is not None:
            for call in calls:
                call.name = self.restorer.name(call.name)  # judged as the app's own name
        self.response_calls = calls
        found = []
        if self.readable:
            found = response_checks.check_calls(calls, self.offered, self.rule, complete)
        if problem:
            found.append(problem)
        self.response_findings = found
        return found

    @property
    def offered(self) -> RequestView:
        """What the answer is checked against: the request's view, or an empty offer."""
        return self.view or RequestView(self.format.api)

    @property
    def findings(self) -> list[Finding]:
        return [*self.request_findings, *self.response_findings]


def block_message(errors: list[Finding], view: RequestView | None) -> str:
    first = errors[0]
    message = f"toolnames: {first.message}"
    # The offered names, unless the message already lists them or says there are none.
    if first.code != codes.CHOICE_NOT_IN_TOOLS and view is not None and view.tools:
        message += f"; {request_checks.offered_text(view)}"
    if len(errors) > 1:
        rest = ", ".join(f"{f.code} at {f.path}" for f in errors[1:6])
        more = f" and {len(errors) - 6} more" if len(errors) > 6 else ""
        message += f". {len(errors) - 1} more error(s): {rest}{more}"
    return message + ". The request was blocked by toolnames and never reached the provider."


def inspect_exchange(
    method: str,
    host: str,
    path: str,
    request_content: bytes | None,
    response_status: int | None = None,
    response_content_type: str = "",
    response_content: bytes | None = None,
    overrides: tuple = (),
    request_problem: str | None = None,
    reader: Reader = DEFAULT,
    response_problem: str | None = None,
    port: int | None = None,
) -> Exchange | None:
    """Everything the live addon checks, for one recorded request and its response.

    Used by the scanner over flow files, HAR files and cassettes; None when the request
    is not an LLM API call toolnames knows. ``request_problem`` and ``response_problem``
    say why a recorded body could not be read (an undecodable content-encoding), reported
    as the live addon does. ``port``: where the request went, which can decide the rule
    (Ollama's default port) as it does live.
    """
    exchange = Exchange.for_request(method, path, host, port, overrides, reader)
    if exchange is None:
        return None
    if request_content is None and request_problem is None:
        request_problem = "the recording holds no request body"
    exchange.check_request(request_content or b"", problem=request_problem)
    if response_problem is not None:
        exchange.response_unread(response_status, response_problem)
    elif response_content is not None:
        exchange.check_response(response_status, response_content_type, response_content)
    elif response_status is not None:
        exchange.response_unread(response_status, UNRECORDED_ANSWER)
    return exchange
