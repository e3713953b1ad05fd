"""Streamable HTTP transport: loopback by default, bearer token required beyond it."""

from __future__ import annotations

import hmac
import ipaddress
import json
import sys

from mcp.server.transport_security import TransportSecuritySettings

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
UNAUTHORIZED = "missing or wrong bearer token: send the server's --token as 'Authorization: Bearer TOKEN'"


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def security_settings(host: str, port: int, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection stays on: only the bound host (and any named extras) may be addressed."""
    hosts = {f"{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]")} | {f"{host}:{port}"}
    hosts |= {h if ":" in h else f"{h}:{port}" for h in allowed_hosts}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(hosts),
        allowed_origins=sorted(f"http://{h}" for h in hosts),
    )


async def send_error(send, status: int, message: str, headers: tuple = ()) -> None:
    """Answer with a JSON-RPC error body, so MCP clients show this message instead of a generic one."""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *headers]})
    await send({"type": "http.response.body", "body": json.dumps({
        "jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}).encode()})


class BearerAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send_error(send, 401, UNAUTHORIZED, ((b"www-authenticate", b'Bearer realm="trompe"'),))
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """ASGI middleware: a body declared over the cap is refused naming the limit (the SDK's 413 is plain text)."""

    def __init__(self, app, max_body: int):
        self.app, self.max_body = app, max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
            if declared.isdigit() and int(declared) > self.max_body:
                await send_error(send, 413, f"request body: {int(declared)} bytes, over this server's "
                                 f"{self.max_body}-byte limit; images travel as base64 (4/3 of the file size): "
                                 "send a smaller image or start the server with a larger --max-source-bytes")
                return
        await self.app(scope, receive, send)


def serve_http(mcp, host: str, port: int, token: str | None, allowed_hosts: list[str],
               max_body: int) -> None:
    """Run the server over streamable HTTP with uvicorn until interrupted."""
    import uvicorn

    if not is_loopback(host) and not token:
        raise SystemExit(f"refusing to bind {host}: a non-loopback host needs a bearer token "
                         "(--token or TROMPE_TOKEN)")
    security = security_settings(host, port, allowed_hosts)
    if not is_loopback(host) and not allowed_hosts:
        print(f"trompe-server: requests must name one of these hosts: {', '.join(security.allowed_hosts)}; "
              "add --allowed-host NAME:PORT for the name remote clients use", file=sys.stderr)
    app = BodyLimit(mcp.streamable_http_app(transport_security=security, max_request_body_size=max_body, host=host),
                    max_body)
    if token:
        app = BearerAuth(app, token)
    uvicorn.run(app, host=host, port=port, log_level="warning")
