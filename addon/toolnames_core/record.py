"""The record toolnames keeps of a flow: what it found, fixed or blocked, as typed data.

A live flow's record is made from its ``Exchange``; a saved flow's is read back from its
metadata (``from_metadata``), validated there once, since a file may come from another
toolnames version or a hand edit. Everything that shows a flow (marker, comment, log line,
content view, report, scanner) reads this record, never the metadata dict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from itertools import chain
from itertools import islice
from operator import is_
from typing import TYPE_CHECKING
from typing import NamedTuple

from toolnames_core import codes
from toolnames_core.aliases import ALIAS_REWRITE
from toolnames_core.exchange import SIGNED_WORKAROUNDS
from toolnames_core.exchange import Exchange
from toolnames_core.model import SEVERITY_RANK
from toolnames_core.model import Finding
from toolnames_core.model import SkippedFix
from toolnames_core.names import quote_name
from toolnames_core.sigv4 import Signed
from toolnames_core.verdicts import confirmations

if TYPE_CHECKING:
    # For the annotation only: sessions/ and mcp/ stand above the record, which they are
    # turned into.
    from toolnames_core.mcp import McpExchange
    from toolnames_core.sessions import Session

__all__ = [
    "COMMENT_PREFIX",
    "MARKERS",
    "FlowRecord",
    "RecordedFix",
    "RecordedRejection",
    "storable",
]

# Markers that tell the three outcomes apart at a glance in mitmweb's flow list.
MARKERS = {"blocked": ":no_entry:", "fixed": ":hammer_and_wrench:", "flagged": ":warning:"}
COMMENT_PREFIX = "toolnames"
ACTIONS = ("observed", "fixed", "blocked")


class RecordedFix(NamedTuple):
    """One rewritten name as recorded: where, the client's value, what was sent, and why."""

    path: str
    old: str
    new: str
    rewrite: str
    # For a WebSocket session: the index of the rewritten message in the flow's messages.
    message_index: int | None = None

    def to_dict(self) -> dict:
        d = {"path": self.path, "from": self.old, "to": self.new, "rewrite": self.rewrite}
        if self.message_index is not None:
            d["message_index"] = self.message_index
        return d


class RecordedRejection(NamedTuple):
    """What the provider's error answer rejected: where, the name sent there (None when it
    could not be tied to one), and the provider's own words."""

    path: str
    name: str | None
    text: str
    tied: bool

    def to_dict(self) -> dict:
        return {"path": self.path, "name": self.name, "text": self.text, "tied": self.tied}

    @classmethod
    def from_dict(cls, item: object) -> RecordedRejection | None:
        if not isinstance(item, dict):
            return None
        path, name, text, tied = (item.get(k) for k in ("path", "name", "text", "tied"))
        if not (isinstance(path, str) and isinstance(text, str) and isinstance(tied, bool)):
            return None
        if name is not None and not isinstance(name, str):
            return None
        return cls(path, name, text, tied)


class _Made:
    """What records made of one list of fixes and of the findings beside it, shared by every
    record whose exchange's fixes are these very objects. A flow's request hook records its
    findings and fixes, and its answer's hook records them again with the answer's findings
    after them, each time as metadata, a comment and an outcome; fix mode shares each place's
    fix and finding between requests, and an agent resends its tools and history every turn,
    so the next flow's record holds the same objects again (issue 25: at 100 tools, a quarter
    of a renamed flow). Lists are compared by identity (findings and fixes are frozen; a
    record's lists are never changed in place), so what was made of other lists is never
    taken. What it holds is never changed in place either: records of several flows read it."""

    __slots__ = (
        "finding_entries",
        "findings",
        "fix_entries",
        "fixed",
        "fixes",
        "renamed",
        "renames_text",
        "replaced",
        "source",
        "unrepaired",
        "unrepaired_of",
    )

    def __init__(self, source: list, fixes: list[RecordedFix]) -> None:
        self.source = source  # the exchange's fixes the record's fixes were made from
        self.fixes = fixes  # their records, the fixes of every record made with this
        # Of those fixes, each made when first asked for: their metadata entries, the places
        # fix mode rewrote, the aliases (``FlowRecord.renamed``), what the comment says of
        # the other rewrites, and all it says of the fixes.
        self.fix_entries: list[dict] | None = None
        self.fixed: set | None = None
        self.renamed: dict[str, tuple[str, int]] | None = None
        self.replaced: tuple[str, ...] | None = None
        self.renames_text: tuple[str, ...] | None = None
        # The findings last recorded with them, their entries, and those the fixes leave
        # standing (of the findings ``unrepaired_of``).
        self.findings: list[Finding] = []
        self.finding_entries: list[dict] = []
        self.unrepaired_of: list[Finding] | None = None
        self.unrepaired: list[Finding] = []

    @classmethod
    def of(cls, source: list) -> _Made:
        """What was made of fixes ``source`` (kept from a recent flow whose exchange's fixes
        are the same objects), or a new one. A conversation that grew keeps its fixes and
        adds some after them: what a kept one made of the fixes it begins with is reused."""
        grown_from = None
        for kept in reversed(_made_lately):
            if _starts_with(source, kept.source):
                if len(kept.source) == len(source):
                    _made_lately.remove(kept)
                    _made_lately.append(kept)
                    return kept
                if grown_from is None or len(kept.source) > len(grown_from.source):
                    grown_from = kept
        if grown_from is None or not grown_from.source:
            made = cls(source, _recorded_fixes(source))
        else:
            made = cls(source, grown_from.fixes + _recorded_fixes(source[len(grown_from.source) :]))
            made.grow_from(grown_from)
        if len(_made_lately) >= _MAX_MADE_LATELY:
            del _made_lately[0]
        _made_lately.append(made)
        return made

    def grow_from(self, before: _Made) -> None:
        """Take what ``before`` made of the fixes this one begins with, each made for the
        rest; what ``before`` had not made yet is left to be made when asked for."""
        done = len(before.fixes)
        added = self.fixes[done:]
        if before.fix_entries is not None:
            self.fix_entries = before.fix_entries + _entries_of(added)
        if before.fixed is not None:
            self.fixed = before.fixed | _places(added)
        if before.renamed is not None:
            self.renamed = _renamed(added, dict(before.renamed))
            self.replaced = before.replaced + _replaced(added)
        # The findings' entries hold: they are the findings' own. What the fixes leave
        # standing does not: a fix added may repair a finding that stood.
        self.findings, self.finding_entries = before.findings, before.finding_entries


_made_lately: list[_Made] = []
# Conversations at once whose records' makings are kept: each holds a flow's lists.
_MAX_MADE_LATELY = 4


class _EachOnce:
    """What is made of each of a request's findings and fixes, made once. Fix mode makes each
    place's fix and finding once and shares them between requests (aliases.py,
    request_checks.py), and an agent resends the same tools and history every turn: their
    records and metadata entries are made once too, found by the object's identity (held
    with it, so that the identity is never another object's). Bounded: a client sending ever
    new names starts it over. What it makes is shared between flows: never changed in place
    (mitmproxy deep-copies a flow's metadata when it copies or saves the flow)."""

    __slots__ = ("make", "made")

    def __init__(self, make: Callable) -> None:
        self.make = make
        self.made: dict[int, tuple] = {}

    def each(self, items: list) -> list:
        made = self.made
        get = made.get
        out = []
        append = out.append
        for item in items:
            entry = get(id(item))
            if entry is None or entry[0] is not item:
                if len(made) >= _MAX_EACH_ONCE:
                    made.clear()
                entry = made[id(item)] = (item, self.make(item))
            append(entry[1])
        return out


def _storable_entry(item: Finding | RecordedFix) -> dict:
    entry = item.to_dict()
    return entry if _ascii_entries([entry]) else storable(entry)


_MAX_EACH_ONCE = 8192
_recorded_fixes = _EachOnce(lambda f: RecordedFix(f.path, f.old, f.new, f.rewrite)).each
# Metadata entries, storable: of a Finding, or of a RecordedFix.
_entries_of = _EachOnce(_storable_entry).each


def _starts_with(items: list, head: list) -> bool:
    """Whether ``items`` begins with the very objects of ``head``."""
    return len(head) <= len(items) and all(map(is_, head, items))


@dataclass(slots=True)
class FlowRecord:
    api: str
    rule: str
    mode: str
    action: str  # one of ACTIONS
    findings: list[Finding] = field(default_factory=list)
    fixes: list[RecordedFix] = field(default_factory=list)
    fix_skipped: list[SkippedFix] = field(default_factory=list)
    # Names in the answer given back to the app in place of fix mode's aliases.
    restored: int = 0
    saved: bool = False
    # What the provider's error answer rejected (its verdict, tied to the request).
    rejections: list[RecordedRejection] = field(default_factory=list)
    # The client that sent the request, as its headers tell (clients.py); None if they don't.
    client: str | None = None
    # The client's Accept-Encoding ("" for none) when fix mode asked for identity instead.
    accept_encoding_sent: str | None = None
    # The streamed answer's Content-Length, when fix mode sent the answer on without it.
    length_dropped: str | None = None
    # The request's AWS SigV4 signature (who signed, for what; never the signature itself),
    # why fix mode left it as sent, and whether fix mode signed it again.
    signed: Signed | None = None
    signed_declined: str | None = None
    resigned: bool = False
    # The content-encoding of the streamed answer fix mode decoded to give names back in.
    answer_decoded: str | None = None
    # What an earlier record of the same flow made (``of``), reused where it still holds.
    made: _Made | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, exchange: Exchange, mode: str, client: str | None = None) -> FlowRecord:
        """The record of ``exchange`` so far. Made again for the same exchange (its answer
        judged after its request was recorded), it reuses what the earlier one made of what
        has not changed: the fixes, and the entries of the request's findings."""
        action = "blocked" if exchange.blocked else "fixed" if exchange.fixes else "observed"
        earlier = exchange.record
        made = earlier.made if earlier is not None else None
        if made is None or made.source is not exchange.fixes:
            made = _Made.of(exchange.fixes)
        exchange.record = recorded = cls(
            exchange.format.api,
            exchange.rule.id,
            mode,
            action,
            exchange.findings,
            made.fixes,
            list(exchange.fix_skipped),
            exchange.restored,
            rejections=[
                RecordedRejection(r.path, r.name, r.provider_text, r.tied)
                for r in exchange.rejections
            ],
            client=client,
            accept_encoding_sent=exchange.accept_encoding_sent,
            length_dropped=exchange.length_dropped,
            signed=exchange.signed,
            signed_declined=exchange.signed_declined,
            resigned=exchange.resigned,
            answer_decoded=exchange.answer_decoded,
            made=made,
        )
        return recorded

    @classmethod
    def of_session(cls, session: Session, mode: str, client: str | None = None) -> FlowRecord:
        """The record of a WebSocket session: each finding and fix with its message's index."""
        action = "blocked" if session.blocked else "fixed" if session.fixes else "observed"
        return cls(
            session.api,
            session.rule,
            mode,
            action,
            list(session.findings),
            [RecordedFix(f.path, f.old, f.new, f.rewrite, index) for index, f in session.fixes],
            list(session.fix_skipped),
            session.restored,
            client=client,
        )

    @classmethod
    def of_mcp(cls, exchange: McpExchange, mode: str, client: str | None = None) -> FlowRecord:
        """The record of an MCP request and its answer: the rule is toolnames_mcp_rule's."""
        return cls(
            exchange.api,
            exchange.rule,
            mode,
            "fixed" if exchange.fixes else "observed",
            exchange.findings,
            [RecordedFix(f.path, f.old, f.new, f.rewrite) for f in exchange.fixes],
            list(exchange.fix_skipped),
            client=client,
            accept_encoding_sent=exchange.accept_encoding_sent,
            length_dropped=exchange.length_dropped,
            signed=exchange.signed,
            signed_declined=exchange.signed_declined,
            resigned=exchange.resigned,
        )

    # -- as flow metadata ----------------------------------------------------------------

    def to_metadata(self) -> dict:
        # Every value storable (``storable``); the entries of findings and fixes are made so
        # once, and kept for the flow's next record, so they are not walked again here.
        meta: dict = {
            "api": storable(self.api),
            "rule": storable(self.rule),
            "mode": storable(self.mode),
            "action": storable(self.action),
            "findings": self._finding_entries(),
        }
        if self.fixes:
            meta["fixes"] = self._fix_entries()
        if self.fix_skipped:
            meta["fix_skipped"] = storable([s.to_dict() for s in self.fix_skipped])
        if self.restored:
            meta["restored"] = self.restored
        if self.saved:
            meta["saved"] = True
        if self.rejections:
            meta["rejected"] = storable([r.to_dict() for r in self.rejections])
        if self.client:
            meta["client"] = storable(self.client)
        if self.accept_encoding_sent is not None:
            meta["accept_encoding"] = {
                "from": storable(self.accept_encoding_sent),
                "to": "identity",
            }
        if self.length_dropped is not None:
            meta["content_length_dropped"] = storable(self.length_dropped)
        if self.answer_decoded is not None:
            meta["answer_decoded"] = storable(self.answer_decoded)
        if self.signed is not None:
            signed = self.signed.to_dict()
            if self.signed_declined is not None:
                signed["declined"] = self.signed_declined
            if self.resigned:
                signed["resigned"] = True
            meta["signed"] = storable(signed)
        return meta

    def _finding_entries(self) -> list[dict]:
        """The findings' metadata entries, storable."""
        made = self.made
        if made is None:
            return _entries_of(self.findings)
        findings = self.findings
        if _starts_with(findings, made.findings):
            done = made.finding_entries
            entries = done + _entries_of(findings[len(done) :])
        else:
            entries = _entries_of(findings)
        made.findings, made.finding_entries = findings, entries
        return entries

    def _fix_entries(self) -> list[dict]:
        """The fixes' metadata entries, storable."""
        made = self._made_of_fixes()
        if made is None:
            return _entries_of(self.fixes)
        if made.fix_entries is None:
            made.fix_entries = _entries_of(self.fixes)
        return made.fix_entries

    def _made_of_fixes(self) -> _Made | None:
        """What was made of this record's fixes; None for a record with other fixes than it
        was made with (``dataclasses.replace``): nothing made of those is taken."""
        made = self.made
        return made if made is not None and made.fixes is self.fixes else None

    @classmethod
    def from_metadata(cls, meta: object) -> FlowRecord | None:
        """The record in a flow's metadata; None if there is none, or none this version reads."""
        if not isinstance(meta, dict):
            return None
        head = [meta.get(k) for k in ("api", "rule", "mode", "action")]
        findings = _entries(meta.get("findings", []), ("code", "severity", "path", "message"))
        fixes = _entries(meta.get("fixes", []), ("path", "from", "to", "rewrite"))
        skipped = _entries(meta.get("fix_skipped", []), ("path", "name", "reason"))
        if not all(isinstance(v, str) for v in head) or None in (findings, fixes, skipped):
            return None
        if head[3] not in ACTIONS or (head[3] == "fixed" and not fixes):
            return None
        restored = meta.get("restored", 0)
        if type(restored) is not int or restored < 0:
            return None
        rejected = meta.get("rejected", [])
        rejections = (
            [RecordedRejection.from_dict(r) for r in rejected]
            if isinstance(rejected, list)
            else [None]
        )
        if None in rejections:
            return None
        encoding = meta.get("accept_encoding")
        sent = encoding.get("from") if isinstance(encoding, dict) else None
        dropped = meta.get("content_length_dropped")
        decoded = meta.get("answer_decoded")
        signed_meta = meta.get("signed")
        signed = Signed.from_dict(signed_meta)
        declined = signed_meta.get("declined") if signed is not None else None
        return cls(
            *head,
            findings=[
                Finding(
                    f["code"],
                    f["severity"],
                    f["path"],
                    f["message"],
                    f.get("rule"),
                    _index(f.get("message_index")),
                )
                for f in findings
                if f["severity"] in SEVERITY_RANK
            ],
            fixes=[
                RecordedFix(
                    f["path"], f["from"], f["to"], f["rewrite"], _index(f.get("message_index"))
                )
                for f in fixes
            ],
            fix_skipped=[SkippedFix(s["path"], s["name"], s["reason"]) for s in skipped],
            restored=restored,
            saved=meta.get("saved") is True,
            rejections=rejections,
            client=meta["client"] if isinstance(meta.get("client"), str) else None,
            accept_encoding_sent=sent if isinstance(sent, str) else None,
            length_dropped=dropped if isinstance(dropped, str) else None,
            signed=signed,
            signed_declined=declined if isinstance(declined, str) else None,
            resigned=signed is not None and signed_meta.get("resigned") is True,
            answer_decoded=decoded if isinstance(decoded, str) else None,
        )

    # -- what it shows -------------------------------------------------------------------

    @property
    def worst(self) -> str | None:
        return max((f.severity for f in self.findings), key=SEVERITY_RANK.__getitem__, default=None)

    @property
    def flagged(self) -> bool:
        return self.worst in ("warning", "error") or bool(self.fixes)

    @property
    def outcome(self) -> str | None:
        """``blocked``, ``fixed``, ``flagged``, or None for a flow with nothing to show: the
        worst of what happened (a fix that left an error standing is flagged)."""
        return self._outcome(self._unrepaired() if self.action == "fixed" else [])

    def _outcome(self, unrepaired: list[Finding]) -> str | None:
        """``outcome``, given what ``_unrepaired`` returns (read only for a fixed flow)."""
        if self.action == "blocked":
            return "blocked"
        if self.action == "fixed" and self._standing_error(unrepaired) is None:
            return "fixed"
        return "flagged" if self.flagged else None

    def _unrepaired(self) -> list[Finding]:
        """The findings a fix did not repair (all of them, if nothing was fixed). Not to be
        changed: a fixed record's list is kept for the next record of its flow."""
        if self.action != "fixed":
            return list(self.findings)
        # A finding about a name is repaired where fix mode rewrote that name; one at a place
        # it left as sent (a choice no rewrite explains, a name offered twice) still stands.
        made = self._made_of_fixes()
        if made is None:
            return _standing(self.findings, _places(self.fixes))
        findings = self.findings
        if made.unrepaired_of is findings:
            return made.unrepaired
        if made.fixed is None:
            made.fixed = _places(self.fixes)
        # The answer's record lists the request's findings first, and the next flow's record
        # the same findings again: only the findings after those are sifted.
        head = made.unrepaired_of
        if head is not None and _starts_with(findings, head):
            unrepaired = made.unrepaired + _standing(findings[len(head) :], made.fixed)
        else:
            unrepaired = _standing(findings, made.fixed)
        made.unrepaired_of, made.unrepaired = findings, unrepaired
        return unrepaired

    def _standing_error(self, unrepaired: list[Finding]) -> Finding | None:
        """The worst error a fix left standing (of ``unrepaired``), by SEVERITY_RANK: the
        provider's rejection, a call to a tool never offered. It outranks the fix, so the
        line leads with it."""
        worst = max(unrepaired, key=lambda f: SEVERITY_RANK[f.severity], default=None)
        return worst if worst is not None and worst.severity == "error" else None

    def comment(self) -> str:
        """One line: the worst outcome first (an error the provider returned or the app will
        hit, then a fix, then warnings), as the flow list shows it."""
        # The findings left standing, read once: each outcome asks for them, and a fixed
        # flow's are hundreds of findings sifted by hundreds of fixes (issue 25).
        unrepaired = self._unrepaired()
        outcome = self._outcome(unrepaired)
        if outcome == "fixed":
            text = f"{COMMENT_PREFIX} fixed {self.fixes_text()}"
            others = unrepaired
        else:
            lead = sorted(unrepaired, key=lambda f: -SEVERITY_RANK[f.severity])
            head = lead[0] if lead else None
            verb = "blocked" if outcome == "blocked" else head.severity if head else ""
            text = (
                f"{COMMENT_PREFIX} {verb}: {head.code}: {head.message}" if head else COMMENT_PREFIX
            )
            others = lead[1:]
        # In fix mode the provider saw other bytes: its rejection is news, never a confirmation.
        confirmed = confirmations(self.findings) if self.action != "fixed" else []
        others = [f for f in others if f not in confirmed]
        if others:
            text += f" (+{len(others)} more)"
        if confirmed:
            text += "; the provider rejected it too"
        if self.action == "fixed" and outcome != "fixed":
            text += f"; toolnames fixed {self.fixes_text()}"
        if self.fix_skipped and "; not fixed: " not in text:
            first = self.fix_skipped[0]
            text += f"; not fixed: {first.text}"
            if len(self.fix_skipped) > 1:
                text += f" (+{len(self.fix_skipped) - 1} more not fixed)"
        if self.signed_declined is not None:
            if "; not fixed: the request is signed" not in text and self.signed is not None:
                text += (
                    f"; not fixed: the request is signed with AWS SigV4 "
                    f"({self.signed.scope_text}), and {self.signed_declined}"
                )
            text += f"; {SIGNED_WORKAROUNDS}"
        # One line: names are escaped already; a provider's quoted words may still break lines.
        return storable(" ".join(text.split()))

    def fixed_message(self, index: int) -> FlowRecord | None:
        """A WebSocket session's record of one message fix mode rewrote: its own findings and
        fixes, so its line says once what happened to it; None if it was not rewritten."""
        fixes = [f for f in self.fixes if f.message_index == index]
        if not fixes:
            return None
        findings = [f for f in self.findings if f.message_index == index]
        return replace(self, findings=findings, fixes=fixes, fix_skipped=[], restored=0)

    def outcome_text(self) -> str:
        """What the outcome was, in the words of what happened (the content view's line)."""
        outcome = self.outcome
        if outcome == "fixed":
            return self.fixes_text()
        if outcome == "blocked":
            return "toolnames answered with an error; the provider never saw the request"
        if self.action == "fixed":
            return f"see the findings below; it also fixed: {self.fixes_text()}"
        return "see the findings below"

    @property
    def renamed(self) -> dict[str, tuple[str, int]]:
        """Each aliased name: (its alias, at how many places)."""
        return dict(self._renames()[1])

    def _renames(self) -> tuple[tuple[str, ...], dict[str, tuple[str, int]]]:
        """What the comment says of each fix that is no alias, and ``renamed`` (made once for
        the records that share this one's fixes, never to be changed)."""
        made = self._made_of_fixes()
        if made is None:
            return _replaced(self.fixes), _renamed(self.fixes, {})
        if made.renamed is None:
            made.replaced, made.renamed = _replaced(self.fixes), _renamed(self.fixes, {})
        return made.replaced, made.renamed

    def fixes_text(self) -> str:
        """What fix mode changed, shortly: choices pointed elsewhere, names aliased, names
        given back in the answer."""
        made = self._made_of_fixes()
        renames = made.renames_text if made is not None else None
        if renames is None:
            renames = self._renames_text()
            if made is not None:
                made.renames_text = renames
        parts = list(renames)
        if self.restored:
            parts.append(f"restored {self.restored} name(s) in the answer")
        if self.accept_encoding_sent is not None:
            parts.append("asked for an uncompressed answer")
        if self.answer_decoded is not None:
            parts.append(
                f"gave the names back inside the {self.answer_decoded} stream, sent on uncompressed"
            )
        if self.length_dropped is not None:
            parts.append("sent the streamed answer without its Content-Length")
        if self.resigned and self.signed is not None:
            parts.append(f"signed it again with AWS SigV4 ({self.signed.scope_text})")
        return "; ".join(parts)

    def _renames_text(self) -> tuple[str, ...]:
        """What ``fixes_text`` says of the fixes themselves."""
        replaced, renamed = self._renames()
        if not renamed:
            return replaced
        shown = [
            f"{quote_name(old)} → {quote_name(new)}" + (f" ({n} places)" if n > 1 else "")
            for old, (new, n) in islice(renamed.items(), 3)
        ]
        more = f" and {len(renamed) - 3} more" if len(renamed) > 3 else ""
        return (*replaced, "renamed " + ", ".join(shown) + more)

    def signature_text(self) -> str | None:
        """What the record says of the request's signature, for the view; None if unsigned."""
        signed = self.signed
        if signed is None:
            return None
        text = f"AWS SigV4 ({signed.scope_text}"
        if signed.readable:
            text += f"; signed headers {';'.join(signed.signed_headers)}"
        text += ", in the URL)" if signed.presigned else ")"
        if self.resigned:
            text += "; fix mode signed it again with the same access key"
        elif self.signed_declined is not None:
            text += f"; not fixed: {self.signed_declined}; {SIGNED_WORKAROUNDS}"
        return text


def _places(fixes: list[RecordedFix]) -> set[tuple[str, int | None]]:
    """The places ``fixes`` rewrote."""
    return {(f.path, f.message_index) for f in fixes}


def _renamed(fixes: list[RecordedFix], renamed: dict) -> dict[str, tuple[str, int]]:
    """``renamed`` (each aliased name: its alias, at how many places) with ``fixes`` added."""
    for f in fixes:
        if f.rewrite == ALIAS_REWRITE:
            renamed[f.old] = (f.new, renamed.get(f.old, ("", 0))[1] + 1)
    return renamed


def _replaced(fixes: list[RecordedFix]) -> tuple[str, ...]:
    """What the comment says of each of ``fixes`` that is no alias (a choice pointed at
    another tool, a name given its provider's spelling)."""
    return tuple(
        f"{f.path} {quote_name(f.old)} → {quote_name(f.new)} ({f.rewrite})"
        for f in fixes
        if f.rewrite != ALIAS_REWRITE
    )


def _standing(findings: list[Finding], fixed: set) -> list[Finding]:
    """Of ``findings``, those no fix at the places ``fixed`` repaired."""
    return [
        f
        for f in findings
        if f.code not in _RENAMED_CODES or (f.path, f.message_index) not in fixed
    ]


# Findings fix mode's renaming repairs: the names themselves (the record still lists them).
_RENAMED_CODES = (
    codes.CHOICE_NOT_IN_TOOLS,
    codes.NAME_TOO_LONG,
    codes.NAME_INVALID_CHARS,
    codes.NAME_INVALID_START,
    codes.NAME_EMPTY,
    codes.HISTORY_NAME_INVALID,
    codes.MCP_NAME_REJECTED,
    codes.MCP_NAME_INVALID,
)


def _index(value: object) -> int | None:
    """A message index as recorded; anything else (absent, or a hand edit) is none."""
    return value if type(value) is int and value >= 0 else None


def _entries(items: object, keys: tuple[str, ...]) -> list[dict] | None:
    """``items`` if it is a list of objects each with a string under every key, else None."""
    if isinstance(items, list) and all(
        isinstance(item, dict) and all(isinstance(item.get(k), str) for k in keys) for item in items
    ):
        return items
    return None


def storable(value):
    """``value`` with every string encodable as UTF-8.

    JSON lets a name hold a lone surrogate ("\\ud800"); mitmproxy writes metadata and
    comments as UTF-8, so one raw surrogate would make the flow impossible to save.
    """
    if isinstance(value, str):
        # Nearly every string is ASCII, which holds no surrogate: keep it as it is.
        return value if value.isascii() else value.encode("utf-8", "backslashreplace").decode()
    if isinstance(value, dict):
        return {k: storable(v) for k, v in value.items()}
    if isinstance(value, list):
        if _ascii_entries(value):
            return value
        return [storable(v) for v in value]
    return value


def _ascii_entries(items: list) -> bool:
    """Whether ``items`` are entries whose values are all ASCII strings (findings and fixes,
    nearly always), told in one pass in C: a fixed flow records every renamed place, twice,
    and a Python step per value cost more than making the entries."""
    try:
        return "".join(chain.from_iterable(map(dict.values, items))).isascii()
    except TypeError:  # not a dict, or a value that is no string: looked at one by one
        return False
