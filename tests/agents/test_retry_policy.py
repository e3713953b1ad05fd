"""The retry policy and the error kinds, fast: the vendors' error bodies through the real SDKs, in memory.

Each vendor's documented or reported error bodies (testing/fake_vendors.py cites them) reach the real SDK client
through `FakeVendor.transport()` (no socket, no thread), the backend's own `classify` reads the SDK's exception,
and the `Retrier` runs with a recorded sleep and a fixed jitter. test_error_kinds.py sends the same bodies over
loopback; this file is what `tools/mutation.py --group retry` runs, so it has to stay fast.
"""

from __future__ import annotations

import email.utils
import functools
import socket
import time

import anthropic
import anyio
import httpx2
import openai
import pytest
from google import genai
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st
from netkit import free_port
from test_retry import Sleeps
from trompe_agents.backends.base import BackendError, BackendOptions, QuotaExhausted
from trompe_agents.backends.claude import ClaudeBackend
from trompe_agents.backends.error_kinds import status_kind, transport_failure
from trompe_agents.backends.gemini import GeminiBackend
from trompe_agents.backends.openai_responses import OpenAIResponsesBackend
from trompe_agents.messages import Message, TextPart
from trompe_agents.backends.retry import Retrier, parse_duration, retry_after
from trompe_agents.testing import FakeVendor, final
from trompe_agents.testing.fake_vendors import ERROR_BODIES

KIND = {"anthropic": "anthropic", "openai": "responses", "gemini": "gemini"}
BACKEND = {"anthropic": ClaudeBackend, "openai": OpenAIResponsesBackend, "gemini": GeminiBackend}
WHERE = "vendor at http://fake"


def client(vendor: str, transport: httpx2.AsyncBaseTransport | None = None, base_url: str = "http://fake"):
    """The vendor's real SDK client, without its own retries, on the given transport."""
    if vendor == "gemini":  # on httpx, as the backend's client: on aiohttp the SDK retries a failed connect itself
        if transport:  # no TLS setup for no socket
            http = types.HttpOptions(base_url=base_url, async_client_args={"transport": transport, "verify": False})
        else:
            http = types.HttpOptions(base_url=base_url, httpx_async_client=httpx2.AsyncClient())
        return genai.Client(api_key="k", http_options=http)
    sdk = anthropic.AsyncAnthropic if vendor == "anthropic" else openai.AsyncOpenAI
    url = base_url + ("/v1" if vendor == "openai" else "")
    return sdk(api_key="k", base_url=url, max_retries=0, http_client=httpx2.AsyncClient(transport=transport))


def sender(sdk):
    """`call(model)` for the Retrier: one minimal request through the SDK; the reply's text."""
    async def call(model: str) -> str:
        if isinstance(sdk, anthropic.AsyncAnthropic):
            reply = await sdk.messages.create(model=model, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
            return reply.content[0].text
        if isinstance(sdk, openai.AsyncOpenAI):
            return (await sdk.responses.create(model=model, input="hi")).output_text
        return (await sdk.aio.models.generate_content(model=model, contents="hi")).text

    return call


@functools.cache
def classify(vendor: str):
    """The backend's own reading of its SDK's exceptions (one backend per vendor: building one sets up TLS)."""
    return BACKEND[vendor](BackendOptions(model="m", base_url="http://fake", api_key="k")).classify


def retrier(vendor: str, sleeps: Sleeps, jitter: float = 0.5, **options) -> Retrier:
    """The Retrier a backend of `vendor` builds, with its real `classify`, a recorded sleep and a fixed jitter."""
    return Retrier(BackendOptions(**options), classify(vendor), "default", sleep=sleeps, rng=lambda: jitter,
                   where=WHERE)


def run(vendor: str, faults: list[str], sleeps: Sleeps | None = None, models: list[str] | None = None,
        **options) -> tuple[Retrier, FakeVendor, object]:
    """One request through the Retrier while the fake answers `faults` in turn (then 'ok'); the result or error."""
    sleeps = Sleeps() if sleeps is None else sleeps
    fake = FakeVendor(KIND[vendor], [final("ok")], faults={m: list(faults) for m in models or ["m"]})
    with fake:
        policy = retrier(vendor, sleeps, **{"model": "m", **options})

        async def go():
            try:
                return await policy.run(sender(client(vendor, fake.transport())))
            except BackendError as error:
                return error

        outcome = anyio.run(go)
    return policy, fake, outcome


RETRIED = ("rate_limit", "overloaded", "server", "timeout")  # transient: retried after a wait
# (vendor, fault, error kind, the wait the server asked for, or None)
CASES = [
    ("anthropic", "auth", "auth", None), ("openai", "auth", "auth", None), ("gemini", "auth", "auth", None),
    ("anthropic", "permission", "permission", None), ("openai", "permission", "permission", None),
    ("gemini", "permission", "permission", None), ("gemini", "location", "permission", None),
    ("anthropic", "not_found", "not_found", None), ("openai", "not_found", "not_found", None),
    ("gemini", "not_found", "not_found", None),
    ("anthropic", "ratelimit", "rate_limit", 0.0), ("openai", "ratelimit", "rate_limit", 0.0),
    ("gemini", "ratelimit", "rate_limit", 0.0), ("anthropic", "slowdown", "rate_limit", 3600.0),
    ("openai", "slowdown", "rate_limit", 3600.0), ("gemini", "slowdown", "rate_limit", 3600.0),
    ("anthropic", "ratelimit_bare", "rate_limit", None), ("openai", "ratelimit_bare", "rate_limit", None),
    ("gemini", "ratelimit_bare", "rate_limit", None),
    ("anthropic", "daily_quota", "quota", None), ("openai", "daily_quota", "quota", None),
    ("gemini", "daily_quota", "quota", None), ("gemini", "quota", "quota", None),
    ("anthropic", "monthly_quota", "quota", None), ("openai", "monthly_quota", "credit", None),
    ("anthropic", "monthly_spend_429", "quota", None), ("openai", "not_found_400", "not_found", None),
    ("anthropic", "credit_400", "credit", None), ("anthropic", "quota", "credit", None),
    ("openai", "credit_400", "credit", None), ("openai", "credit_429", "credit", None),
    ("gemini", "credit_429", "credit", None),
    ("anthropic", "overloaded", "overloaded", None), ("openai", "overloaded", "overloaded", None),
    ("gemini", "overloaded", "overloaded", None),
    ("anthropic", "server_error", "server", None), ("openai", "server_error", "server", None),
    ("gemini", "server_error", "server", None),
    ("anthropic", "timeout", "timeout", None), ("gemini", "timeout", "timeout", None),
    ("anthropic", "bad_request", "invalid_request", None), ("openai", "bad_request", "invalid_request", None),
    ("gemini", "bad_request", "invalid_request", None),
]


@pytest.mark.parametrize(("vendor", "fault", "kind", "asked"), CASES, ids=[f"{v}-{f}" for v, f, _, _ in CASES])
def test_each_vendor_error_is_read_as_its_kind_with_the_wait_the_server_asked(vendor, fault, kind, asked):
    async def caught() -> BaseException:
        with FakeVendor(KIND[vendor], faults={"m": [fault]}) as fake:
            try:
                await sender(client(vendor, fake.transport()))("m")
            except Exception as exc:  # the SDK's own exception for that body
                return exc
        raise AssertionError("the fake answered")

    failure = classify(vendor)(anyio.run(caught))
    action = "retry" if kind in RETRIED else "switch" if kind in ("quota", "credit") else "fatal"
    assert (failure.kind, failure.action, failure.retry_after) == (kind, action, asked)
    status = str(fake_status(vendor, fault))
    assert failure.reason.startswith(status), "the reason starts with the HTTP status the vendor sent"


def fake_status(vendor: str, fault: str) -> int:
    return ERROR_BODIES[vendor][fault]()[0]


@pytest.mark.parametrize(("vendor", "fault", "reason"), [
    ("anthropic", "overloaded", "529 overloaded_error: Overloaded"),
    ("openai", "overloaded", "503 server_error: The engine is currently overloaded, please try again later."),
    ("openai", "ratelimit", "429 rate_limit_exceeded: Rate limit reached"),
    ("gemini", "server_error", "500 INTERNAL: An internal error has occurred.")])
def test_a_retry_is_noted_with_the_status_the_vendors_code_and_its_message(vendor, fault, reason):
    _, _, (_, notes) = run(vendor, [fault], max_retries=1)
    assert notes["retries"][0]["reason"] == reason


def answering(status: int, **body) -> httpx2.MockTransport:
    """A transport that answers every request with this status and body (`json=` or `text=`)."""
    return httpx2.MockTransport(lambda request: httpx2.Response(status, **body))


@pytest.mark.parametrize(("status", "body", "kind", "reason"), [
    (502, {"text": "<html><body>502 Bad Gateway</body></html>"}, "server", "502"),  # a proxy's own error page
    (500, {"json": {"error": "Internal Server Error"}}, "server", "500"),  # a gateway's bare error string
    # the AWS-style bare error object some Anthropic-compatible gateways pass on (Bedrock: {"message": ...})
    (429, {"json": {"message": "Too many requests, please wait before trying again."}}, "rate_limit",
     "429: Too many requests, please wait before trying again.")])
def test_an_error_from_a_proxy_in_front_of_anthropic_is_read_by_its_status(status, body, kind, reason):
    sleeps = Sleeps()
    policy = retrier("anthropic", sleeps, model="m", max_retries=1)
    with pytest.raises(BackendError) as info:
        anyio.run(policy.run, sender(client("anthropic", answering(status, **body))))
    assert info.value.kind == kind and len(sleeps) == 1
    assert str(info.value).startswith(f"{WHERE}: m: {kind}: still failing after 2 attempts: {reason} (")


def test_an_openai_compatible_server_with_a_bare_error_string_is_read_by_its_status():
    """LM Studio answers an endpoint it lacks with {"error": "Unexpected endpoint or method. (POST /v1/...)"}."""
    sleeps = Sleeps()
    policy = retrier("openai", sleeps, model="m", max_retries=1)
    transport = answering(404, json={"error": "Unexpected endpoint or method. (POST /v1/responses)"})
    with pytest.raises(BackendError) as info:
        anyio.run(policy.run, sender(client("openai", transport)))
    assert info.value.kind == "not_found" and sleeps == []
    assert str(info.value).startswith(f"{WHERE}: m: not_found: 404: ") and "Unexpected endpoint" in str(info.value)


def test_gemini_honours_a_retry_after_header_when_the_body_names_no_delay():
    """Google's front end may send the standard header (RFC 9110 Retry-After) on a 429 without a RetryInfo."""
    status, _, body = ERROR_BODIES["gemini"]["ratelimit_bare"]()
    sleeps = Sleeps()
    policy = retrier("gemini", sleeps, model="m", max_retries=1)
    with pytest.raises(BackendError):
        anyio.run(policy.run, sender(client("gemini", answering(status, json=body, headers={"retry-after": "2"}))))
    assert sleeps == [2.0]


def test_the_reason_quotes_the_vendors_type_and_message():
    assert run("anthropic", ["auth"])[2].args[0] == (
        f"{WHERE}: m: auth: 401 authentication_error: invalid x-api-key "
        "(check the API key (the vendor's variable or --api-key-env))")
    assert str(run("openai", ["not_found"])[2]) == (
        f"{WHERE}: m: not_found: 404 model_not_found: The model `gpt-nonexistent` does not exist or you do not "
        "have access to it. (check --model and --base-url (the URL path))")
    assert str(run("gemini", ["bad_request"])[2]) == (
        f"{WHERE}: m: invalid_request: 400 INVALID_ARGUMENT: messages: at least one message is required")


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini"])
def test_a_rate_limit_waits_what_the_server_asks_and_notes_the_retry(vendor):
    sleeps = Sleeps()
    policy, fake, (text, notes) = run(vendor, ["ratelimit", "ratelimit"], sleeps, max_retries=2)
    assert text == "ok" and len(fake.requests) == 3 and sleeps == [0.0, 0.0]
    assert [r["wait_s"] for r in notes["retries"]] == [0, 0] and set(notes) == {"retries"}
    assert notes["retries"][0]["model"] == "m" and notes["retries"][0]["reason"].startswith("429")


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini"])
def test_without_a_named_delay_waits_grow_exponentially_with_jitter_up_to_the_cap(vendor):
    sleeps = Sleeps()
    _, fake, (text, notes) = run(vendor, ["server_error"] * 4, sleeps, max_retries=4, retry_cap=5.0)
    assert text == "ok" and len(fake.requests) == 5
    assert sleeps == [0.75, 1.5, 3.0, 3.75], "base 1 s doubling, capped at 5 s, times 0.5 + jitter/2"
    assert [r["wait_s"] for r in notes["retries"]] == sleeps


def test_the_noted_wait_is_rounded_to_milliseconds():
    sleeps = Sleeps()
    _, _, (_, notes) = run("anthropic", ["overloaded"], sleeps, jitter=1 / 3, max_retries=1)
    assert sleeps == [pytest.approx(2 / 3)] and notes["retries"][0]["wait_s"] == 0.667


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini"])
def test_a_transient_failure_is_retried_max_retries_times_then_the_fallback_model_gets_as_many(vendor):
    sleeps = Sleeps()
    policy, fake, outcome = run(vendor, ["server_error"] * 3, sleeps, models=["m", "second"], max_retries=2,
                                fallback_models=["second"])
    assert [r.model for r in fake.requests] == ["m"] * 3 + ["second"] * 3 and len(sleeps) == 4
    assert isinstance(outcome, BackendError) and not isinstance(outcome, QuotaExhausted)
    assert outcome.kind == "server" and policy.model == "second"
    assert str(outcome).startswith(f"{WHERE}: second: server: still failing after 3 attempts: 500")
    assert "--fallback-model" not in str(outcome), "there was a fallback model; it failed too"


def test_the_model_switch_is_noted_and_kept_for_later_requests():
    sleeps = Sleeps()
    with FakeVendor("anthropic", [final("ok")], faults={"m": ["server_error"] * 2}) as fake:
        policy = retrier("anthropic", sleeps, model="m", max_retries=1, fallback_models=["backup"])
        call = sender(client("anthropic", fake.transport()))
        first = anyio.run(policy.run, call)
        second = anyio.run(policy.run, call)
    assert first == ("ok", {"retries": [{"model": "m", "reason": first[1]["retries"][0]["reason"], "wait_s": 0.75}],
                            "model_switch": [{"from": "m", "to": "backup", "reason": first[1]["model_switch"][0]
                                              ["reason"]}]})
    assert first[1]["model_switch"][0]["reason"].startswith("server: still failing after 2 attempts: 500 api_error")
    assert second == ("ok", {}) and [r.model for r in fake.requests] == ["m", "m", "backup", "backup"]


@pytest.mark.parametrize(("vendor", "fault", "kind"), [("anthropic", "quota", "credit"),
                                                        ("openai", "daily_quota", "quota"),
                                                        ("gemini", "credit_429", "credit")])
def test_an_empty_quota_switches_model_at_once_without_waiting(vendor, fault, kind):
    sleeps = Sleeps()
    policy, fake, (text, notes) = run(vendor, [fault], sleeps, max_retries=3, fallback_models=["backup"])
    assert text == "ok" and sleeps == [] and [r.model for r in fake.requests] == ["m", "backup"]
    [switch] = notes["model_switch"]
    assert switch["reason"].startswith(f"{kind}: ") and "retries" not in notes and policy.model == "backup"


@pytest.mark.parametrize(("vendor", "fault", "kind", "hint"), [
    ("anthropic", "quota", "credit", "out of credit or at its spend limit; add credit"),
    ("gemini", "daily_quota", "quota", "a daily or monthly cap is used up; wait for it to reset")])
def test_an_empty_quota_without_a_fallback_is_quota_exhausted_naming_the_cure(vendor, fault, kind, hint):
    sleeps = Sleeps()
    _, fake, error = run(vendor, [fault] * 3, sleeps, max_retries=3)
    assert isinstance(error, QuotaExhausted) and error.kind == kind and len(fake.requests) == 1 and sleeps == []
    assert str(error).startswith(f"{WHERE}: m: {kind}: 429" if vendor == "gemini" else f"{WHERE}: m: {kind}: 402")
    assert str(error).endswith(f"{hint}, or add --fallback-model to switch models)")


def test_fallback_models_are_tried_in_the_order_given():
    _, fake, (text, notes) = run("gemini", ["quota"], models=["m", "b1"], fallback_models=["b1", "b2"])
    assert text == "ok" and [r.model for r in fake.requests] == ["m", "b1", "b2"]
    assert [(s["from"], s["to"]) for s in notes["model_switch"]] == [("m", "b1"), ("b1", "b2")]


def test_when_every_model_is_out_of_quota_the_last_one_is_named_without_the_fallback_hint():
    _, fake, error = run("openai", ["quota"], models=["m", "backup"], fallback_models=["backup"])
    assert isinstance(error, QuotaExhausted) and [r.model for r in fake.requests] == ["m", "backup"]
    assert str(error).startswith(f"{WHERE}: backup: credit: 429 insufficient_quota")
    assert str(error).endswith("(the account is out of credit or at its spend limit; add credit)")


@pytest.mark.parametrize(("vendor", "fault", "words"), [
    ("anthropic", "auth", "check the API key (the vendor's variable or --api-key-env)"),
    ("openai", "permission", "the key may not use this model or region; check the account's access"),
    ("gemini", "location", "the key may not use this model or region"),
    ("gemini", "not_found", "check --model and --base-url (the URL path)"),
    ("anthropic", "bad_request", "messages: at least one message is required")])
def test_a_fatal_error_is_neither_retried_nor_switched(vendor, fault, words):
    sleeps = Sleeps()
    policy, fake, error = run(vendor, [fault] * 3, sleeps, max_retries=3, fallback_models=["other"])
    assert type(error) is BackendError and len(fake.requests) == 1 and sleeps == [] and policy.model == "m"
    assert words in str(error) and "--fallback-model" not in str(error)


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini"])
def test_a_retry_after_at_the_cap_is_waited_and_above_it_the_model_is_switched(vendor):
    sleeps = Sleeps()
    _, _, (text, _) = run(vendor, ["slowdown"], sleeps, max_retries=1, retry_cap=3600)
    assert text == "ok" and sleeps == [3600.0]
    _, fake, (text, notes) = run(vendor, ["slowdown"], sleeps, max_retries=1, retry_cap=60,
                                 fallback_models=["quick"])
    assert sleeps == [3600.0] and [r.model for r in fake.requests] == ["m", "quick"]
    assert notes["model_switch"][0]["reason"] == "rate_limit: asked to wait 3600s, more than the retry cap 60s"
    _, _, error = run(vendor, ["slowdown"], sleeps, max_retries=1, retry_cap=60)
    assert str(error).startswith(f"{WHERE}: m: rate_limit: asked to wait 3600s, more than the retry cap 60s (")
    assert str(error).endswith("lower --concurrency or set --rate-limit, or add --fallback-model to switch models)")


@pytest.mark.parametrize(("retries", "requests"), [(0, 1), (-2, 1), (1, 2)])
def test_max_retries_counts_retries_after_the_first_attempt(retries, requests):
    sleeps = Sleeps()
    _, fake, error = run("gemini", ["overloaded"] * 3, sleeps, max_retries=retries)
    assert len(fake.requests) == requests and len(sleeps) == requests - 1
    assert str(error).startswith(f"{WHERE}: m: overloaded: still failing after {requests} attempts: 503 UNAVAILABLE")
    assert "rerun later with --retry-errors, or add --fallback-model" in str(error)


def test_without_a_model_the_backend_default_is_used_and_the_server_delay_really_is_slept():
    with FakeVendor("anthropic", [final("ok")], faults={"default": ["ratelimit"]}) as fake:
        policy = Retrier(BackendOptions(), classify("anthropic"), "default")  # anyio's sleep, for the 0 s asked
        text, notes = anyio.run(policy.run, sender(client("anthropic", fake.transport())))
    assert text == "ok" and [r.model for r in fake.requests] == ["default", "default"] and notes["retries"]


def test_an_error_the_backend_cannot_read_fails_at_once_as_a_backend_error():
    async def broken(model: str) -> str:
        raise ValueError("the SDK's reply could not be parsed")

    sleeps = Sleeps()
    policy = retrier("anthropic", sleeps, model="m", max_retries=3, fallback_models=["other"])
    with pytest.raises(BackendError) as info:
        anyio.run(policy.run, broken)
    assert str(info.value) == f"{WHERE}: m: backend: the SDK's reply could not be parsed" and sleeps == []
    assert info.value.kind == "backend" and policy.model == "m"
    nowhere = Retrier(BackendOptions(model="m"), classify("anthropic"), "default", sleep=sleeps)
    with pytest.raises(BackendError, match="^m: backend: the SDK"):  # no place to name: the line starts at the model
        anyio.run(nowhere.run, broken)



@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini"])
def test_a_refused_connection_fails_at_once_naming_the_cause(vendor):
    sleeps = Sleeps()
    policy = retrier(vendor, sleeps, model="m", max_retries=3, fallback_models=["other"])
    with pytest.raises(BackendError) as info:
        anyio.run(policy.run, sender(client(vendor, base_url=f"http://127.0.0.1:{free_port()}")))
    assert info.value.kind == "connection" and sleeps == [] and policy.model == "m"
    assert "m: connection: cannot connect ([Errno 111] " in str(info.value)  # the OS's words, not the SDK's
    assert str(info.value).endswith("(nothing answers there; check --base-url and that the server is running)")


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini"])
def test_each_backend_reports_a_refused_connection_without_a_retry_of_its_sdk(vendor):
    """The backend's own client, not the test's: google-genai on its default aiohttp session retries a failed
    connect itself after sleeping 1 to 10 s, so a wrong --base-url would take that long to be reported."""
    backend = BACKEND[vendor](BackendOptions(model="m", base_url=f"http://127.0.0.1:{free_port()}", api_key="k"))

    async def ask():
        try:
            await backend.complete([Message("user", [TextPart("hi")])], [])
        finally:
            await backend.aclose()

    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        anyio.run(ask)
    assert info.value.kind == "connection", info.value
    assert time.monotonic() - started < 1.0, "a refused connection was retried before it was reported"


class Drops(httpx2.AsyncBaseTransport):
    """A transport that fails every request with a transport error (as httpx raises them), counting them."""

    def __init__(self, error: type[Exception], message: str):
        self.error, self.message, self.count = error, message, 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.count += 1
        raise self.error(self.message, request=request)


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini"])
@pytest.mark.parametrize(("error", "message", "kind", "retried"), [
    (httpx2.ReadTimeout, "timed out", "timeout", True),
    (httpx2.RemoteProtocolError, "Server disconnected without sending a response.", "server", True),
    (httpx2.RemoteProtocolError, "", "server", True),
    (httpx2.ConnectError, "All connection attempts failed", "connection", False)])
def test_transport_errors_retry_timeouts_and_drops_but_not_a_failed_connect(vendor, error, message, kind, retried):
    sleeps, drops = Sleeps(), Drops(error, message)
    policy = retrier(vendor, sleeps, model="m", max_retries=2)
    with pytest.raises(BackendError) as info:
        anyio.run(policy.run, sender(client(vendor, drops)))
    assert info.value.kind == kind and drops.count == (3 if retried else 1) and len(sleeps) == drops.count - 1


def test_transport_failure_reasons_name_the_exception_and_its_message():
    timeout = transport_failure(httpx2.ReadTimeout("timed   out\n"))
    assert (timeout.kind, timeout.action, timeout.reason) == ("timeout", "retry", "ReadTimeout: timed out")
    assert transport_failure(TimeoutError()).reason == "TimeoutError: connection failed"
    assert transport_failure(TimeoutError()).kind == "timeout"
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except OSError as exc:
            raise RuntimeError("lookup failed") from exc
    except RuntimeError as exc:
        unknown = transport_failure(exc)
    assert (unknown.kind, unknown.action) == ("connection", "fatal")
    assert unknown.reason == "cannot connect ([Errno -2] Name or service not known)"
    bare = transport_failure(httpx2.ConnectError(""))
    assert bare.reason == "cannot connect (ConnectError: connection failed)"
    try:
        try:
            raise ConnectionRefusedError()  # some event loops raise it without a message
        except OSError as exc:
            raise httpx2.ConnectError("All connection attempts failed") from exc
    except httpx2.ConnectError as exc:
        silent = transport_failure(exc)
    assert silent.reason == "cannot connect (ConnectError: All connection attempts failed)"


@pytest.mark.parametrize(("status", "kind"), [
    (400, "invalid_request"), (401, "auth"), (402, "invalid_request"), (403, "permission"), (404, "not_found"),
    (408, "timeout"), (409, "server"), (413, "invalid_request"), (422, "invalid_request"), (429, "rate_limit"),
    (499, "invalid_request"), (500, "server"), (502, "server"), (503, "overloaded"), (504, "server"),
    (529, "overloaded"), (None, "invalid_request")])
def test_a_bare_status_means_what_the_sdks_retry_policy_says(status, kind):
    """408, 409, 429 and 5xx are what the vendor SDKs retry themselves (anthropic/openai `_should_retry`)."""
    assert status_kind(status) == kind


@given(st.floats(0, 1e6, allow_nan=False), st.integers(0, 10**7))
def test_retry_after_reads_seconds_and_prefers_milliseconds(seconds, ms):
    assert retry_after({"retry-after": repr(seconds)}) == pytest.approx(seconds)
    assert retry_after({"retry-after": repr(seconds), "retry-after-ms": str(ms)}) == pytest.approx(ms / 1000)


def test_retry_after_never_negative_and_unreadable_falls_back():
    assert retry_after({"retry-after-ms": "-5", "retry-after": "9"}) == 0.0
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({"retry-after-ms": "soon", "retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "soon"}) is None
    assert retry_after({"retry-after": "-3"}) == 0.0
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None and retry_after(None) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after({"retry-after": later}) <= 30
    assert retry_after({"retry-after": email.utils.formatdate(time.time() - 60, usegmt=True)}) == 0.0


def test_gemini_retry_delays_are_protobuf_durations():
    assert [parse_duration(t) for t in ("1.5s", "0s", " 47s ", "1m", "s", None)] == [1.5, 0.0, 47.0, None, None, None]
