"""How a tool name is shown to a person: one quoted, escaped form in every message.

A name can hold characters that hide themselves or rearrange the text around them
(U+202E RIGHT-TO-LEFT OVERRIDE, U+200B ZERO WIDTH SPACE), control characters, combining
marks and letters that look like ASCII ones. Shown raw, such a name reads as a valid one, or
garbles the log line, the flow comment, the client's error and the scan table alike. Every
rule toolnames knows allows printable ASCII only, so every other character is escaped, and
named by its code point, the same way wherever a name is shown.
"""

from __future__ import annotations

import unicodedata

__all__ = ["MAX_SHOWN", "char_label", "describe_name", "escape_text", "quote_name", "unusual_chars"]

# Longer names are cut (the length is always given beside them).
MAX_SHOWN = 80
_LABELS_SHOWN = 4

_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# unicodedata has no names for the C0 and C1 controls.
_CONTROL_NAMES = {
    "\x00": "NULL",
    "\t": "CHARACTER TABULATION",
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
}


def _escape(c: str) -> str:
    if " " <= c <= "~":
        return "\\" + c if c in "\\'" else c
    if c in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[c]
    cp = ord(c)
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def quote_name(name: str) -> str:
    """``'search\\u202eweb'``: the name in quotes, every character outside printable ASCII
    escaped (``\\n``, ``\\t``, ``\\r``, ``\\uXXXX``, ``\\UXXXXXXXX``), cut to MAX_SHOWN."""
    if len(name) <= MAX_SHOWN and _plain(name):
        return f"'{name}'"  # nothing to escape: most names, settled without a step per character
    cut = name if len(name) <= MAX_SHOWN else name[:MAX_SHOWN]
    text = "".join(map(_escape, cut))
    return f"'{text}…'" if cut is not name else f"'{text}'"


def _plain(name: str) -> bool:
    """Printable ASCII without a backslash or quote: every character shown as it is."""
    return name.isascii() and name.isprintable() and "\\" not in name and "'" not in name


def unusual_chars(name: str) -> list[str]:
    """The distinct characters of ``name`` outside printable ASCII, in order of appearance."""
    if name.isascii() and name.isprintable():
        return []
    return list(dict.fromkeys(c for c in name if not " " <= c <= "~"))


def char_label(c: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``."""
    cp = ord(c)
    if c in _CONTROL_NAMES:
        label = _CONTROL_NAMES[c]
    elif 0xD800 <= cp <= 0xDFFF:
        label = "<lone surrogate>"
    elif unicodedata.category(c) == "Cc":
        label = "<control>"
    else:
        label = unicodedata.name(c, "<unassigned>")
    return f"U+{cp:04X} {label}"


def describe_name(name: str) -> str:
    """``'search.web' (10 chars)``; a name with characters outside printable ASCII also
    names each of them: ``'search\\u202eweb' (10 chars; U+202E RIGHT-TO-LEFT OVERRIDE)``."""
    unusual = unusual_chars(name)
    if not unusual:
        return f"{quote_name(name)} ({len(name)} chars)"
    labels = ", ".join(char_label(c) for c in unusual[:_LABELS_SHOWN])
    if len(unusual) > _LABELS_SHOWN:
        labels += f" and {len(unusual) - _LABELS_SHOWN} more"
    return f"{quote_name(name)} ({len(name)} chars; {labels})"


def escape_text(text: str) -> str:
    """Free text (a provider's words, a path) with the characters that could hide or
    reorder what a terminal shows escaped as in ``quote_name``; other letters stay."""
    return "".join(_escape(c) if _unsafe(c) else c for c in text)


def _unsafe(c: str) -> bool:
    if " " <= c <= "~":
        return False
    # Cc controls, Cf format characters (bidi controls, zero-width ones), Zl/Zp separators,
    # lone surrogates.
    return unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Cn")
