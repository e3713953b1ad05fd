"""Each vendor's real error bodies (testing/fake_vendors.py cites them) read as the right kind, through the real SDKs.

One test per error class and vendor: a retried class is retried once and then answers; any other class fails
after one request with its kind and a hint that fits it.
"""

from __future__ import annotations

import pytest
from test_retry import Sleeps, ask, make
from test_retry_policy import CASES as ALL_CASES
from test_vendor_roundtrip import VENDORS
from trompe_agents.backends.base import BackendError, QuotaExhausted
from trompe_agents.failures import Action, ErrorKind
from trompe_agents.backends.retry import BASE_DELAY
from trompe_agents.testing import FakeVendor, final
from trompe_agents.testing.fake_vendors import ERROR_BODIES

LABEL = {"anthropic": "claude", "openai": "openai", "gemini": "gemini-3"}

# (vendor, fault, error kind, the wait the server asked for: a number, or None for our own backoff); the table is
# shared with the in-memory test_retry_policy.py; a wait beyond the retry cap is tested there
CASES = [case for case in ALL_CASES if case[1] != "slowdown"]


@pytest.mark.parametrize(("vendor", "fault", "kind", "asked"), CASES, ids=[f"{v}-{f}" for v, f, _, _ in CASES])
async def test_vendor_error_body_is_read_as_its_kind(vendor, fault, kind, asked):
    label = LABEL[vendor]
    sleeps = Sleeps()
    with FakeVendor(VENDORS[label][1], [final("ok")], faults={"m": [fault]}) as fake:
        async with make(label, fake.base_url, "m", sleeps, max_retries=1) as backend:
            if ErrorKind(kind).action is Action.RETRY:
                turn = await ask(backend)
                assert turn.message.text == "ok" and len(fake.requests) == 2
                [wait] = sleeps
                if asked is not None:
                    assert wait == asked  # the server's delay, not our backoff
                else:
                    assert BASE_DELAY / 2 <= wait <= BASE_DELAY  # no delay named: our jittered backoff
                return
            with pytest.raises(BackendError) as info:
                await ask(backend)
    error = info.value
    assert error.kind == kind and len(fake.requests) == 1 and sleeps == []
    assert isinstance(error, QuotaExhausted) == (kind in ("quota", "credit"))
    assert ErrorKind(kind).hint in str(error) and fake.base_url.removesuffix("/v1") in str(error)
    assert ("--fallback-model" in str(error)) == (kind in ("quota", "credit"))


def test_every_vendor_has_a_body_for_every_class():
    classes = {"auth", "permission", "not_found", "ratelimit", "ratelimit_bare", "daily_quota", "overloaded",
               "server_error", "bad_request"}
    for vendor, bodies in ERROR_BODIES.items():
        assert classes <= set(bodies), vendor
        assert classes <= {f for v, f, _, _ in CASES if v == vendor}, vendor  # and each is tested
