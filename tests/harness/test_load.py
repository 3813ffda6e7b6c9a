"""Load through a proxy (harness.load): keep-alive clients, counted answers."""

import json
import threading

from harness.load import Answer
from harness.load import Client
from harness.load import LoadRequest
from harness.load import run_load
from standin import StandinProvider

CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


def chat(i: int) -> LoadRequest:
    return LoadRequest("/v1/chat/completions", CHAT, {"x-load-index": str(i)})


def test_a_counted_run_sends_each_request_once_and_hears_every_answer():
    answers: dict[int, Answer] = {}
    lock = threading.Lock()

    def on_done(i: int, answer: Answer) -> None:
        with lock:
            answers[i] = answer

    with StandinProvider() as provider:
        result = run_load(provider.port, chat, 4, count=20, on_done=on_done)
        sent = sorted(int(dict(r["headers"])["x-load-index"]) for r in provider.requests)

    assert result.requests == 20 and result.statuses == {200: 20} and result.errors == []
    assert sent == list(range(20))
    assert sorted(answers) == list(range(20))
    assert all(b'"hello"' in a.body for a in answers.values())
    assert result.rps > 0


def test_a_stop_event_ends_a_run():
    stop = threading.Event()
    stop.set()
    with StandinProvider() as provider:
        result = run_load(provider.port, chat, 2, count=10, stop=stop)
    assert result.requests == 0


def test_a_client_sends_again_on_a_connection_the_server_closed():
    with StandinProvider() as provider:
        client = Client(provider.port)
        assert client.post("/v1/chat/completions", CHAT).status == 200
        # The server closes idle keep-alive connections: stopping it does, and a new one
        # on the same port answers the retry.
        port = provider.port
    with StandinProvider(port=port) as provider:
        assert client.post("/v1/chat/completions", CHAT).status == 200
        client.close()
