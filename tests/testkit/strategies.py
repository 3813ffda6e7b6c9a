"""Hypothesis strategies for whatever JSON."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["keyed_bodies", "vocabulary_bodies"]

# Two families, each drawn exactly as the tests that use it always drew it.

_json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=25,
)


def vocabulary_bodies(words: list[str], types: list[str]) -> st.SearchStrategy[dict]:
    """Objects keyed by a format's ``words`` with its ``types`` among the values, so that its
    shapes get read deeply, or else arbitrary JSON objects (the Anthropic and Responses tests)."""
    shaped_values = st.recursive(
        _json_scalars | st.sampled_from(types),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.sampled_from(words) | st.text(max_size=3), inner, max_size=5)
        ),
        max_leaves=30,
    )
    return st.dictionaries(st.sampled_from(words), shaped_values, max_size=6) | st.dictionaries(
        st.text(max_size=6), _json_values, max_size=4
    )


_any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def keyed_bodies(keys: list[str], strings: list[str]) -> st.SearchStrategy[dict]:
    """Bodies shaped like requests and responses (only ``keys`` as keys, ``strings`` among the
    values), or objects with arbitrary JSON wherever a value goes (the Gemini and Bedrock tests)."""
    key = st.sampled_from(keys)
    shaped = st.recursive(
        st.none() | st.integers() | st.sampled_from(strings),
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(key, children, max_size=4)
        ),
        max_leaves=30,
    )
    return st.dictionaries(key, shaped, max_size=4) | st.dictionaries(
        st.text(max_size=8), _any_json, max_size=4
    )
