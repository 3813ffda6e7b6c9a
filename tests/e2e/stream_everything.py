"""The baseline for streaming comparisons: mitmproxy without toolnames, streaming turned on.

Plain mitmproxy buffers text/event-stream responses; this is the script a user
adds to keep them streaming, so "with the addon as without it" compares like with like.
"""


def responseheaders(flow):
    content_type = flow.response.headers.get("content-type", "")
    if content_type.startswith(("text/event-stream", "application/vnd.amazon.eventstream")):
        flow.response.stream = True
