"""One retry policy for all vendors: rate limits, outages, empty quotas and fallback models, through the real SDKs."""

from __future__ import annotations

import email.utils
import socket
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_vendor_roundtrip import VENDORS
from trompe_agents.backends.base import BackendError, BackendOptions, QuotaExhausted
from trompe_agents.backends.retry import BASE_DELAY, Retrier, parse_duration, retry_after
from trompe_agents.messages import Message, TextPart
from trompe_agents.testing import FakeVendor, final

LABELS = ["claude", "openai", "openai-chat", "gemini-3"]


class Sleeps(list):
    """An injected sleep that records the waits instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(label: str, base_url: str, model: str, sleeps: Sleeps, **options):
    cls, _, _ = VENDORS[label]
    return cls(BackendOptions(model=model, base_url=base_url, api_key="k", **options), sleep=sleeps)


async def ask(backend):
    turn = await backend.complete([Message("user", [TextPart("hi")])], [])
    return turn


def models(fake: FakeVendor) -> list[str]:
    return [r.model for r in fake.requests]


@pytest.mark.parametrize("label", LABELS)
async def test_rate_limit_waits_what_the_server_asks_then_succeeds(label):
    sleeps = Sleeps()
    with FakeVendor(VENDORS[label][1], [final("ok")]) as fake:
        async with make(label, fake.base_url, "ratelimit", sleeps) as backend:
            turn = await ask(backend)
    assert turn.message.text == "ok" and models(fake) == ["ratelimit", "ratelimit"]
    assert sleeps == [0.0], "retry-after: 0 (Gemini: RetryInfo 0s) is honoured, not replaced by backoff"
    [retry] = turn.sent["retries"]
    assert "429" in retry["reason"] and retry["wait_s"] == 0


@pytest.mark.parametrize("label", LABELS)
async def test_server_error_backs_off_with_jitter_then_succeeds(label):
    sleeps = Sleeps()
    with FakeVendor(VENDORS[label][1], [final("ok")]) as fake:
        async with make(label, fake.base_url, "flaky", sleeps) as backend:
            turn = await ask(backend)
    assert turn.message.text == "ok" and len(fake.requests) == 2
    assert len(sleeps) == 1 and BASE_DELAY / 2 <= sleeps[0] <= BASE_DELAY
    assert "500" in turn.sent["retries"][0]["reason"]


@pytest.mark.parametrize("label", LABELS)
async def test_quota_switches_to_the_fallback_model_at_once_and_stays_there(label):
    sleeps = Sleeps()
    with FakeVendor(VENDORS[label][1], [final("ok")]) as fake:
        async with make(label, fake.base_url, "quota", sleeps, fallback_models=["backup"]) as backend:
            first = await ask(backend)
            second = await ask(backend)
    assert models(fake) == ["quota", "backup", "backup"] and sleeps == []
    [switch] = first.sent["model_switch"]
    assert (switch["from"], switch["to"]) == ("quota", "backup")
    assert switch["reason"].split(":")[0] in ("quota", "credit")  # the kind leads the reason
    assert first.sent["model"] == backend.model == "backup" and "model_switch" not in second.sent


@pytest.mark.parametrize("label", LABELS)
async def test_quota_without_fallback_is_quota_exhausted_after_one_request(label):
    sleeps = Sleeps()
    with FakeVendor(VENDORS[label][1]) as fake:
        async with make(label, fake.base_url, "quota", sleeps) as backend:
            with pytest.raises(QuotaExhausted, match="--fallback-model"):
                await ask(backend)
    assert len(fake.requests) == 1 and sleeps == []


@pytest.mark.parametrize("label", LABELS)
async def test_repeated_failure_switches_model_after_the_retries(label):
    sleeps = Sleeps()
    faults = {"primary": ["server_error"] * 3}
    with FakeVendor(VENDORS[label][1], [final("ok")], faults=faults) as fake:
        async with make(label, fake.base_url, "primary", sleeps, max_retries=2, fallback_models=["second"]) as backend:
            turn = await ask(backend)
    assert models(fake) == ["primary"] * 3 + ["second"] and len(sleeps) == 2
    assert sleeps[1] > sleeps[0] / 2, "exponential: the second wait's range starts where the first one's ends"
    assert "still failing after 3 attempts" in turn.sent["model_switch"][0]["reason"]


@pytest.mark.parametrize("label", LABELS)
async def test_a_wait_longer_than_the_cap_is_not_sat_out(label):
    sleeps = Sleeps()
    with FakeVendor(VENDORS[label][1], [final("ok")], faults={"slow": ["slowdown"]}) as fake:
        async with make(label, fake.base_url, "slow", sleeps, retry_cap=60, fallback_models=["quick"]) as backend:
            turn = await ask(backend)
        async with make(label, fake.base_url, "slow2", sleeps, retry_cap=60) as alone:
            fake.faults["slow2"] = ["slowdown"]
            with pytest.raises(BackendError, match="more than the retry cap"):
                await ask(alone)
    assert sleeps == [] and models(fake) == ["slow", "quick", "slow2"]
    assert "asked to wait 3600s" in turn.sent["model_switch"][0]["reason"]


@pytest.mark.parametrize("label", LABELS)
async def test_a_bad_request_is_not_retried(label):
    sleeps = Sleeps()
    with FakeVendor(VENDORS[label][1], faults={"m": ["bad_request"]}) as fake:
        async with make(label, fake.base_url, "m", sleeps, fallback_models=["other"]) as backend:
            with pytest.raises(BackendError, match="400") as info:
                await ask(backend)
    assert not isinstance(info.value, QuotaExhausted)
    assert len(fake.requests) == 1 and sleeps == []


@pytest.mark.parametrize("label", LABELS)
async def test_connection_refused_fails_at_once_naming_vendor_url_and_cause(label):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}" + ("/v1" if VENDORS[label][1] in ("responses", "chat") else "")
    sleeps = Sleeps()
    async with make(label, base_url, "m", sleeps, max_retries=2, fallback_models=["other"]) as backend:
        with pytest.raises(BackendError) as info:
            await ask(backend)
    message = str(info.value)
    assert info.value.kind == "connection" and sleeps == [] and backend.model == "m"  # no retries, no switch
    assert f"127.0.0.1:{port}" in message and backend.name in message and "--base-url" in message
    assert "--fallback-model" not in message


@given(st.floats(0, 1e6, allow_nan=False), st.integers(0, 10**7))
def test_retry_after_reads_seconds_and_prefers_milliseconds(seconds, ms):
    assert retry_after({"retry-after": repr(seconds)}) == pytest.approx(seconds)
    assert retry_after({"retry-after": repr(seconds), "retry-after-ms": str(ms)}) == pytest.approx(ms / 1000)


def test_retry_after_reads_http_dates_and_ignores_garbage():
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after({"retry-after": later}) <= 30
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None
    assert (parse_duration("1.5s"), parse_duration("0s"), parse_duration("1m")) == (1.5, 0.0, None)


@given(st.integers(0, 30), st.floats(0, 1), st.floats(0.5, 600))
def test_backoff_grows_exponentially_with_jitter_under_the_cap(attempt, jitter, cap):
    retrier = Retrier(BackendOptions(retry_cap=cap), lambda exc: None, "m", rng=lambda: jitter)
    wait = retrier.backoff(attempt, None)
    ceiling = min(cap, BASE_DELAY * 2**attempt)
    assert ceiling / 2 <= wait <= ceiling
    assert retrier.backoff(attempt, 7.0) == 7.0, "a delay the server names wins"
