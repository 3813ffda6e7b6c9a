"""The sample recordings in flows/ and the builders that make them (``recordings``), which
the scanner's tests and the scanning benchmark write their recordings with too. Kept out of
the scanner: it builds answers with the stand-in provider, which the shipped scanner must
not import."""

__all__ = ["recordings"]
