"""Gemini replies are read through the byte cap too: a loopback server that streams 64 MiB with no length is cut
at the cap, with the cap's own error, and the client holds about the cap, not the body."""

from __future__ import annotations

import itertools
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from test_vendor_rules import backend, question
from trompe_agents.backends.base import BackendError
from trompe_agents.failures import ErrorKind, failure_kind

START, END = b'{"candidates": [{"content": {"role": "model", "parts": [{"text": "', b'"}]}}]}'  # 64 MiB of x between
CHUNK = b"x" * 65536
BODY = 64 * 1024 * 1024
CAP = 1024 * 1024


class Flood:
    """A hostile endpoint: every POST is answered 200 with a valid chunked reply of BODY bytes (no Content-Length,
    so only counting what is read can stop it); `sent` is how much it got out before the client hung up."""

    def __init__(self) -> None:
        self.sent = self.requests = 0
        flood = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (stdlib name)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                flood.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in itertools.chain([START], itertools.repeat(CHUNK, BODY // len(CHUNK)), [END, b""]):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        flood.sent += len(chunk)
                except OSError:  # the client hung up: what a cap should make it do
                    self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Flood:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


async def test_a_flood_without_a_length_is_cut_at_the_cap_in_bounded_memory():
    with Flood() as flood:
        async with backend("gemini", flood, max_retries=3, timeout=30.0, settings={"max_reply_bytes": CAP}) as b:
            tracemalloc.start()
            started = time.monotonic()
            try:
                with pytest.raises(BackendError, match=rf"the reply is over {CAP} bytes "
                                                       r"\(--backend-option max_reply_bytes\)") as failed:
                    await b.complete(question(), [])
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            elapsed = time.monotonic() - started
    assert failure_kind(failed.value) is ErrorKind.BACKEND
    assert flood.requests == 1  # not retried: another reply would be as large
    assert peak < 8 * CAP, f"{peak:,} bytes held for a {CAP:,} byte cap"
    assert flood.sent < BODY / 4 and elapsed < 10
