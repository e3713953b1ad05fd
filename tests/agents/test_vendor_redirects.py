"""A vendor endpoint answering a redirect never gets the prompt re-sent elsewhere: each SDK's own client is built
with redirects off and a hook that fails the request naming the address, so the sample fails and says why.

A 307 or 308 lets a client repeat a POST, body and all, at the `Location` it names (RFC 9110 sections 15.4.8 and
15.4.9); the SDKs' default httpx clients follow them (anthropic and openai set `follow_redirects=True`).
"""

from __future__ import annotations

import pytest

from test_vendor_rules import BACKENDS, backend, question
from trompe_agents.backends.base import BackendError
from trompe_agents.failures import ErrorKind, failure_kind
from trompe_agents.testing import FakeVendor


@pytest.mark.parametrize("name", sorted(BACKENDS))
async def test_a_redirect_is_not_followed_and_fails_the_request_naming_the_address(name):
    kind = BACKENDS[name][1]
    with FakeVendor(kind) as elsewhere, FakeVendor(kind, redirect=elsewhere.url) as hijacked:
        async with backend(name, hijacked, max_retries=3) as b:
            with pytest.raises(BackendError, match=rf"the vendor answered 307 Temporary Redirect, a redirect to "
                                                   rf"'{elsewhere.url}/.*'; vendor redirects are never followed") as e:
                await b.complete(question(), [])
    assert elsewhere.requests == []  # the prompt went nowhere else
    assert len(hijacked.requests) == 1  # and is not retried: the next answer would redirect too
    assert failure_kind(e.value) is ErrorKind.BACKEND
