"""One TLS context for every vendor client of the process: loading the CA bundle takes ~20 ms, and each backend
made one to three of its own (httpx's client, and google-genai's sync client beside ours)."""

from __future__ import annotations

import functools
import ssl

import httpx2


@functools.cache
def shared_context() -> ssl.SSLContext:
    """httpx's default context (certifi, or SSL_CERT_FILE / SSL_CERT_DIR as set when it is first made)."""
    return httpx2.create_ssl_context()
