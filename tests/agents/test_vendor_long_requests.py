"""Long requests: `--timeout` is a deadline for the whole request (a server dripping bytes is cut), and a reply cut
off at the output limit is asked again once with twice the limit, then an error of its own kind, never an answer."""

from __future__ import annotations

import time

import pytest
from test_vendor_rules import BACKENDS, CROP, backend, question
from trompe_agents.backends.base import BackendError
from trompe_agents.cliopts import add_backend_args, backend_options_from_args
from trompe_agents.failures import ErrorKind, failure_kind
from trompe_agents.testing import FakeVendor, Reply, Tokens, final

LIMIT_FIELD = {"claude": "max_tokens", "openai": "max_output_tokens", "openai-chat": "max_completion_tokens"}


def output_limit(name: str, body: dict) -> int:
    return body["generationConfig"]["maxOutputTokens"] if name == "gemini" else body[LIMIT_FIELD[name]]


@pytest.mark.parametrize("name", list(BACKENDS))
async def test_a_cut_off_reply_is_asked_again_with_twice_the_limit(name):
    cut = Reply(text="The answer is", truncated=True, usage=Tokens(input=100, output=50, reasoning=0, cached=0))
    with FakeVendor(BACKENDS[name][1], [cut, final("The answer is 4.")]) as fake:
        async with backend(name, fake, thinking="off") as b:
            turn = await b.complete(question(), [CROP], max_output_tokens=1000)
        first, second = (output_limit(name, r.json) for r in fake.requests)
    assert turn.message.text == "The answer is 4."
    assert (first, second) == (1000, 2000)
    assert turn.sent["truncated_retry"]["max_output_tokens"] == 2000
    assert turn.usage.input_tokens == 200  # both replies were billed


@pytest.mark.parametrize("name", list(BACKENDS))
async def test_cut_off_twice_is_a_truncated_error_not_an_answer(name):
    cut = Reply(text="The answer is", truncated=True)
    with FakeVendor(BACKENDS[name][1], [cut]) as fake:
        async with backend(name, fake, thinking="off") as b:
            with pytest.raises(BackendError, match=r": truncated: the reply was cut off at the output limit twice") \
                    as failed:
                await b.complete(question(), [CROP], max_output_tokens=1000)
        assert len(fake.requests) == 2
    assert failure_kind(failed.value) is ErrorKind.TRUNCATED and "lower --thinking" in str(failed.value)
    assert failed.value.usage.input_tokens == 2 * Tokens().input


async def test_a_server_dripping_bytes_is_cut_at_the_timeout():
    """Each byte arrives well within the SDK's per-read timeout; only the whole-request deadline ends it."""
    with FakeVendor("chat", [final("a reply long enough to drip for many seconds " * 20)], drip=0.2) as fake:
        async with backend("openai-chat", fake, timeout=1.0) as b:
            started = time.monotonic()
            with pytest.raises(BackendError, match=r"timeout: .*no complete reply within 1 s \(--timeout\)") as failed:
                await b.complete(question(), [])
            elapsed = time.monotonic() - started
    assert failure_kind(failed.value) is ErrorKind.TIMEOUT and elapsed < 4


def test_timeout_and_service_tier_options(capsys):
    import argparse

    parser = argparse.ArgumentParser(prog="x")
    add_backend_args(parser)
    options = backend_options_from_args(parser.parse_args(["--timeout", "600", "--service-tier", "flex"]), "x")
    assert (options.timeout, options.service_tier) == (600.0, "flex")
    assert backend_options_from_args(parser.parse_args([]), "x").timeout is None  # the tier's default
    for bad in (["--timeout", "0"], ["--timeout", "soon"], ["--service-tier", "cheap"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
    err = capsys.readouterr().err
    assert "--timeout: expected a number of seconds > 0, got '0'" in err and "invalid choice: 'cheap'" in err


@pytest.mark.parametrize("name", list(BACKENDS))
async def test_a_reply_over_the_byte_cap_fails_for_good(name):
    with FakeVendor(BACKENDS[name][1], [final("x" * 300_000)]) as fake:
        async with backend(name, fake, max_retries=3, settings={"max_reply_bytes": 100_000}) as b:
            with pytest.raises(BackendError, match=r"backend: the reply announces \d+ bytes, over 100000 "
                                                   r"\(--backend-option max_reply_bytes\)"):
                await b.complete(question(), [])
        assert len(fake.requests) == 1  # not retried: another reply would be as large
        async with backend(name, fake) as b:  # the default cap (16 MiB) lets it through
            assert (await b.complete(question(), [])).message.text == "x" * 300_000


@pytest.mark.parametrize("value", [0, 100, "big", True])
def test_a_bad_byte_cap_is_refused_in_one_line(value):
    with FakeVendor("chat") as fake, pytest.raises(ValueError, match=r"max_reply_bytes=.*: expected a whole number "
                                                                     "of bytes >= 1024"):
        backend("openai-chat", fake, settings={"max_reply_bytes": value})
