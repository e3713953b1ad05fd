"""The storage's Redis connection, in this process: a restarted Redis is reconnected to without the call failing,
and a hung one fails the call in bounded time (TIMEOUT, or the URL's socket_timeout) as the registry's error."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import pytest

from imagekit import gradient
from trompe_server.errors import RegistryUnavailable
from trompe_server.limits import Limits
from trompe_server.redis_storage import TIMEOUT, RedisStorage
from trompe_server.registry import Registry


def test_a_call_after_a_redis_restart_reconnects_and_succeeds(own_redis):
    registry = Registry(Limits(), RedisStorage(own_redis.url, 0, "restart"))
    try:
        session, _ = registry.open_session("a", "original", gradient(), "test")
        own_redis.stop()
        own_redis.start()  # same port and append-only file: the session is still there
        registry.touch(session)
        assert [r.id for r in registry.records(session)] == ["original"]
    finally:
        registry.close()


def test_a_call_made_while_redis_restarts_waits_for_it(own_redis):
    """Reconnects are retried with a backoff (over a second in all): a restart in that window costs no call.

    The window is shorter than a redis-server start can take on a loaded box, so the restarted Redis is made
    ready first with its port closed, and a stand-in on the port shows when the call has tried and failed: only
    then is the port opened, a single command to a live Redis, however slow the machine."""
    registry = Registry(Limits(), RedisStorage(own_redis.url, 0, "restart"))
    try:
        session, _ = registry.open_session("a", "original", gradient(), "test")
        own_redis.stop()
        own_redis.start()  # same port and append-only file; its port is closed at once, its new clients refused
        with own_redis.client() as admin:
            admin.config_set("port", 0)  # this connection stays open
            stand_in = socket.create_server(("127.0.0.1", own_redis.port))
            stand_in.settimeout(60)  # a bound for a call that never came, not a timing check
            back = threading.Thread(target=reopen_once_tried, args=(stand_in, admin, own_redis.port))
            back.start()
            try:
                registry.touch(session)  # its first connection reaches the stand-in: Redis is not back yet
            finally:
                back.join()
        assert [r.id for r in registry.records(session)] == ["original"]
    finally:
        registry.close()


def reopen_once_tried(stand_in: socket.socket, admin, port: int) -> None:
    """Drop the first connection to the stand-in (as a Redis not yet up would), then give the port to Redis."""
    with stand_in:
        stand_in.accept()[0].close()
    admin.config_set("port", port)


def test_a_hung_redis_fails_the_call_within_the_socket_timeout(own_redis):
    default = RedisStorage(own_redis.url, 0, "hung")
    assert default.client.connection_pool.connection_kwargs["socket_timeout"] == TIMEOUT
    default.close()
    registry = Registry(Limits(), RedisStorage(own_redis.url + "?socket_timeout=0.5", 0, "hung"))
    session, _ = registry.open_session("a", "original", gradient(), "test")
    os.kill(own_redis.proc.pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        with pytest.raises(RegistryUnavailable, match=r"is unreachable \(Timeout"):
            registry.touch(session)
        assert time.monotonic() - began < 3
    finally:
        os.kill(own_redis.proc.pid, signal.SIGCONT)
        registry.close()


def test_a_redis_that_does_not_answer_at_start_is_one_line_naming_the_url():
    with socket.socket() as unused:  # a free port nobody listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(ValueError) as refused:
        RedisStorage(f"redis://:secret@127.0.0.1:{port}/0", 0)
    message = str(refused.value)
    assert message.startswith(f"--registry redis://:***@127.0.0.1:{port}/0: cannot reach Redis (")
    assert "secret" not in message  # the password is not shown
    assert message.endswith("); start it or fix the URL")
