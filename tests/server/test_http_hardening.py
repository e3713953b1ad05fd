"""The HTTP server under slow, greedy and many clients: loopback only, every loop bounded."""

from __future__ import annotations

import errno
import json
import resource
import socket
import subprocess
import threading

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from imagekit import data_url, gradient
from serverkit import INITIALIZE, SERVER, env_with, free_port, stop
from trompe_server.http import AcceptErrors

HALF_SENT = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Server:
    """A `trompe-server --http` process; its stderr is read on a thread so a chatty log never blocks it."""

    def __init__(self, *flags: str, nofile: int | None = None):
        self.port = free_port()
        limit = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))) if nofile else None
        self.proc = subprocess.Popen([SERVER, "--http", "--port", str(self.port), *flags], env=env_with(),
                                     stderr=subprocess.PIPE, text=True, preexec_fn=limit)
        self.lines: list[str] = []
        for line in self.proc.stderr:  # up to the banner, which is printed once the port is bound
            self.lines.append(line.strip())
            if "serving" in line:
                break
        assert self.proc.poll() is None, "\n".join(self.lines)
        threading.Thread(target=lambda: self.lines.extend(self.proc.stderr), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        stop(self.proc)


def answer(sock: socket.socket) -> bytes:
    """Whatever the server sends before closing (bounded by the socket timeout); RESET for a reset.

    A server that closes a connection with the request still unread makes the kernel send a reset, which
    may overtake its 503: to the client both are a refused connection.
    """
    chunks = []
    try:
        while chunk := sock.recv(4096):
            chunks.append(chunk)
    except ConnectionResetError:
        return b"RESET"
    return b"".join(chunks)


async def tool_names(url: str) -> list[str]:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            opened = await client.call_tool("open_session", {"source": data_url(gradient())})
            assert not opened.is_error, opened.content[0].text
            return [t.name for t in (await client.list_tools()).tools]


async def test_half_sent_requests_are_refused_or_timed_out_and_the_server_keeps_serving():
    """300 slow clients against a 256-descriptor limit: over the cap they get 503, the rest 408; no exit. (The
    header timeout leaves the 300 connects time to land before the first slot frees, even on a busy box.)"""
    with Server("--header-timeout", "4", "--max-connections", "1000", nofile=256) as server:
        assert "max_connections lowered from 1000 to 192 to fit the descriptor limit (256" in server.lines[0]
        socks = []
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            sock.sendall(HALF_SENT)
            socks.append(sock)
        answers = [answer(sock) for sock in socks]
        for sock in socks:
            sock.close()
        busy = [a for a in answers if a.startswith(b"HTTP/1.1 503") or a == b"RESET"]
        slow = [a for a in answers if a.startswith(b"HTTP/1.1 408")]
        assert len(busy) + len(slow) == 300
        assert len(busy) >= 300 - 192
        assert all(b"connections are open (max_connections)" in a for a in busy if a != b"RESET")
        assert slow and b"header_timeout 4 s" in slow[0]
        assert server.proc.poll() is None
        names = await tool_names(server.url)
        banner = server.lines[1]
        assert f"serving {len(names)} tools over streamable HTTP at {server.url}" in banner
        assert "open_session" in names


async def test_a_stalled_request_body_times_out():
    with Server("--read-timeout", "1") as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
        reply = answer(sock)
        sock.close()
        assert reply.startswith(b"HTTP/1.1 408") and b"read_timeout 1 s" in reply


async def test_transport_sessions_idle_past_the_timeout_are_closed():
    """(Beyond --max-transport-sessions a session is closed, never a new one refused: test_transport_sessions.py.)"""
    with Server("--transport-idle-timeout", "1") as server:
        async with httpx2.AsyncClient(headers=MCP_HEADERS, timeout=30) as http:
            first = await http.post(server.url, json=INITIALIZE)
            assert first.status_code == 200
            listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            for _ in range(30):  # idle a second, the session is closed; a late timer is given another second
                await anyio.sleep(1.2)
                stale = await http.post(server.url, json=listed, headers={"mcp-session-id":
                                                                          first.headers["mcp-session-id"]})
                if stale.status_code == 404:
                    break
            assert stale.status_code == 404


class LegacyClient:
    """An MCP client of the stateful protocol (2025-06-18), which gets a transport session id per client."""

    def __init__(self, http: httpx2.AsyncClient, url: str):
        self.http, self.url, self.session_id, self.ids = http, url, "", 1

    async def start(self) -> LegacyClient:
        reply = await self.http.post(self.url, json=INITIALIZE)
        self.session_id = reply.headers["mcp-session-id"]
        await self.http.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers={"mcp-session-id": self.session_id})
        return self

    async def call(self, tool: str, arguments: dict) -> dict:
        self.ids += 1
        reply = await self.http.post(self.url, headers={"mcp-session-id": self.session_id}, json={
            "jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        data = [line[5:] for line in reply.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1] if data else reply.text)["result"]


async def test_one_client_cannot_evict_another_clients_sessions():
    with Server("--max-sessions", "3", "--max-sessions-per-client", "2") as server:
        async with httpx2.AsyncClient(headers=MCP_HEADERS, timeout=httpx2.Timeout(30, read=120)) as http:
            patient, greedy = await LegacyClient(http, server.url).start(), await LegacyClient(http, server.url).start()
            source = {"source": data_url(gradient())}
            mine = (await patient.call("open_session", source))["structuredContent"]["session"]
            theirs = [(await greedy.call("open_session", source))["structuredContent"]["session"] for _ in range(6)]
            assert not (await patient.call("list_images", {"session": mine}))["isError"]
            alive = [not (await greedy.call("list_images", {"session": s}))["isError"] for s in theirs]
            assert alive == [False] * 4 + [True] * 2


def test_busy_port_is_a_one_line_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([SERVER, "--http", "--port", str(port)], env=env_with(), capture_output=True,
                              text=True, timeout=60)
    assert done.returncode != 0
    assert done.stderr.strip() == (f"trompe-server: cannot listen on 127.0.0.1:{port}: Address already in use; "
                                   "stop the other server or choose another --port")


@pytest.mark.parametrize("code", [errno.EMFILE, errno.ENFILE])
def test_running_out_of_descriptors_in_accept_is_one_line_not_a_crash(capsys, code):
    AcceptErrors()(None, {"message": "socket.accept() out of system resource",
                          "exception": OSError(code, "Too many open files")})
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing connections for now: Too many open files" in err


async def test_connections_to_the_listening_socket_send_small_replies_at_once():
    """Without TCP_NODELAY on accepted connections, every small reply (headers, then body) waited ~40 ms for the
    client's delayed ACK: asyncio sets it only where the listening socket names IPPROTO_TCP, as bind()'s must."""
    import asyncio

    from trompe_server.http import bind

    sock = bind("127.0.0.1", 0)
    accepted: asyncio.Future = asyncio.get_running_loop().create_future()

    class Accept(asyncio.Protocol):
        def connection_made(self, transport) -> None:
            accepted.set_result(transport)

    server = await asyncio.get_running_loop().create_server(Accept, sock=sock)  # as uvicorn serves sockets=[sock]
    try:
        _, writer = await asyncio.open_connection(*sock.getsockname())
        transport = await accepted
        assert transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        writer.close()
        transport.close()
    finally:
        server.close()
        await server.wait_closed()
