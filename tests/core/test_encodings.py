import gzip
import zlib

import brotli
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import zstd_compress
from toolnames_core.encodings import READABLE
from toolnames_core.encodings import STEP
from toolnames_core.encodings import StreamDecoder
from toolnames_core.encodings import stream_coding

RAW = b"".join(b'data: {"n": %d}\n\n' % i for i in range(3000))


def raw_deflate(data: bytes) -> bytes:
    obj = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return obj.compress(data) + obj.flush()


def flushed_gzip(pieces: list[bytes]) -> bytes:
    """As a provider streams it: each event flushed at once (Z_SYNC_FLUSH)."""
    obj = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    return b"".join(obj.compress(p) + obj.flush(zlib.Z_SYNC_FLUSH) for p in pieces) + obj.flush()


ENCODED = {
    "gzip": gzip.compress(RAW),
    "x-gzip": gzip.compress(RAW),
    "gzip (two members)": gzip.compress(RAW[:100]) + gzip.compress(RAW[100:]),
    "gzip (flushed per event)": flushed_gzip(RAW.splitlines(keepends=True)),
    "deflate (zlib)": zlib.compress(RAW),
    "deflate (raw)": raw_deflate(RAW),
    "br": brotli.compress(RAW),
    "zstd": zstd_compress(RAW),
    "zstd (two frames)": zstd_compress(RAW[:100]) + zstd_compress(RAW[100:]),
}


def decode(coding: str, data: bytes, size: int) -> tuple[bytes, StreamDecoder]:
    decoder = StreamDecoder(coding)
    out = b"".join(p for i in range(0, len(data), size) for p in decoder.feed(data[i : i + size]))
    return out, decoder


@pytest.mark.parametrize("case", ENCODED)
@pytest.mark.parametrize("size", [1, 2, 3, 100, 10**6])
def test_a_stream_decodes_to_its_bytes_however_it_is_split(case, size):
    coding = case.split()[0]
    out, decoder = decode(coding, ENCODED[case], size)
    assert out == RAW
    assert decoder.failure is None


@settings(max_examples=50)
@given(st.binary(max_size=2000), st.integers(1, 64))
def test_gzip_of_anything_decodes_back_in_any_chunks(data, size):
    assert decode("gzip", gzip.compress(data), size)[0] == data


def test_bytes_that_are_not_gzip_are_a_failure_not_an_exception():
    out, decoder = decode("gzip", b"data: not compressed\n\n", 5)
    assert out == b""
    assert decoder.failure.startswith("its gzip encoding could not be decoded (")
    assert list(decoder.feed(gzip.compress(b"x"))) == []  # nothing read after a failure


def test_a_highly_compressed_stream_is_decoded_in_bounded_steps():
    pieces = list(StreamDecoder("gzip").feed(gzip.compress(b"\0" * (20 * STEP))))
    assert max(map(len, pieces)) <= STEP and sum(map(len, pieces)) == 20 * STEP


@pytest.mark.parametrize("coding", ["compress", "gzip, br", "identity"])
def test_a_coding_without_a_decoder_has_none(coding):
    with pytest.raises(ValueError):
        StreamDecoder(coding)


def test_br_and_zstd_decode_with_what_mitmproxy_brings():
    assert {"br", "zstd"} <= set(READABLE)
    assert decode("br", b"not br", 3)[1].failure.startswith("its br encoding could not be")
    assert decode("zstd", b"not zstd", 3)[1].failure.startswith("its zstd encoding could not")


@pytest.mark.parametrize(
    "header,coding",
    [("", None), ("identity", None), (" GZIP ", "gzip"), ("br", "br"), ("gzip, br", "gzip, br")],
)
def test_stream_coding_reads_the_content_encoding_header(header, coding):
    assert stream_coding(header) == coding
