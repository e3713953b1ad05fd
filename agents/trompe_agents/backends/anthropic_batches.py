"""Anthropic Message Batches for `claude --service-tier batch`: half price, answered within 24 hours.

Requests made within `window` seconds of one another (the run's concurrent samples) go out as one batch; the batch
is polled every `poll` seconds until it ends, and each caller gets its own result by `custom_id`
(platform.claude.com/docs/en/build-with-claude/batch-processing). A result that errored is raised as the HTTP error
it stands for, so the retry policy reads it like any other; an expired or canceled one is retried as overloaded.
Only requests without tools are batched: a request with tools is refused (`BATCH_WITH_TOOLS`), and the illusion
agent refuses a run with tools up front, before its router's batch.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

# Batches suit work of one request per answer; a ReAct round with tools would wait for its own batch, every round.
BATCH_WITH_TOOLS = ("--service-tier batch fits single-request work (--no-tools baselines, router classification, "
                    "SEVEX target inference); with tools every round would wait up to 24 hours for its own batch: "
                    "add --no-tools, or use --service-tier standard")
BATCH_WAIT = 24 * 3600.0  # a batch ends within 24 hours (then its unprocessed requests expire)
MAX_REQUESTS = 10_000  # requests per batch (more go out in the next one)
# the HTTP status each documented error type stands for (docs.claude.com/en/api/errors)
ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                "permission_error": 403, "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429,
                "api_error": 500, "timeout_error": 504, "overloaded_error": 529}


class BatchResultError(RuntimeError):
    """A batched request that did not succeed, as the status and error body a direct request would have had."""

    def __init__(self, status_code: int, body: dict[str, Any]):
        error = body.get("error", {}) if isinstance(body, dict) else {}
        super().__init__(f"{status_code} {error.get('type', 'error')}: {error.get('message', '')} (Message Batch)")
        self.status_code, self.body = status_code, body


def result_error(result: Any) -> BatchResultError:
    """The error of a result that is not `succeeded`: `errored` as its own status, `expired`/`canceled` as 529."""
    if result.type == "errored":
        body = result.error.model_dump(mode="json")
        return BatchResultError(ERROR_STATUS.get(str(body.get("error", {}).get("type")), 500), body)
    return BatchResultError(529, {"type": "error", "error": {"type": "overloaded_error",
                                                             "message": f"the batched request {result.type}"}})


@dataclass
class Batcher:
    """Gathers Messages requests into batches; one per backend (its event loop's client sends them)."""

    window: float = 2.0  # seconds a batch stays open for more requests
    poll: float = 30.0  # seconds between status checks
    pending: list[tuple[str, dict[str, Any], asyncio.Future]] = field(default_factory=list)
    ids: itertools.count = field(default_factory=itertools.count)
    opened: asyncio.Task | None = None

    async def create(self, client: Any, params: dict[str, Any]) -> Any:
        """The Message for `params`, once the batch it joined has ended."""
        future = asyncio.get_running_loop().create_future()
        self.pending.append((f"r{next(self.ids)}", params, future))
        if self.opened is None or self.opened.done():
            self.opened = asyncio.create_task(self._send_after_window(client))
        return await future

    async def _send_after_window(self, client: Any) -> None:
        await asyncio.sleep(self.window)
        while self.pending:
            taken, self.pending = self.pending[:MAX_REQUESTS], self.pending[MAX_REQUESTS:]
            try:
                results = await self._run(client, taken)
            except Exception as exc:  # noqa: BLE001 -- creating or polling failed: every caller gets that error
                results = {}
                for _, _, future in taken:
                    if not future.done():
                        future.set_exception(exc)
            for custom_id, _, future in taken:
                if future.done():
                    continue
                result = results.get(custom_id)
                if result is None:
                    future.set_exception(BatchResultError(500, {"type": "error", "error": {
                        "type": "api_error", "message": "the batch ended without this request's result"}}))
                elif result.type == "succeeded":
                    future.set_result(result.message)
                else:
                    future.set_exception(result_error(result))

    async def _run(self, client: Any, taken: list[tuple[str, dict[str, Any], asyncio.Future]]) -> dict[str, Any]:
        """Create one batch, poll it until it ends, read its results by custom_id."""
        batch = await client.messages.batches.create(
            requests=[{"custom_id": custom_id, "params": params} for custom_id, params, _ in taken])
        while batch.processing_status != "ended":
            await asyncio.sleep(self.poll)
            batch = await client.messages.batches.retrieve(batch.id)
        return {line.custom_id: line.result async for line in await client.messages.batches.results(batch.id)}
