"""The illusion agent's job on an executor: what a worker process (or Ray actor) needs to answer samples alone."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ..backends.base import BackendOptions
from ..backends.ratelimit import RateLimited, RateLimiter
from ..executors.base import Item, Record
from ..plugins import create_backend
from ..toolserver import ServerChoice
from .agent import AgentConfig, IllusionAgent
from .pricing import standard_prices
from .answering import answer_one


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker process (local or on another machine) needs; plain data, so it pickles."""

    backend: str
    options: BackendOptions
    config: AgentConfig
    out: Path  # absolute: workers may run in another folder or on another machine
    server: ServerChoice = field(default_factory=ServerChoice)
    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(standard_prices()))
    rate_limit: float | None = None  # requests per minute for the whole run; each worker gets its share

    def worker(self, share: int) -> Worker:
        return Worker(self, share)


class Worker:
    """One worker's backend, tool server and agent, opened once and reused for every sample it answers."""

    def __init__(self, spec: WorkerSpec, share: int = 1):
        self.spec, self.share = spec, share
        self._stack = AsyncExitStack()
        self.agent: IllusionAgent | None = None

    async def __aenter__(self) -> Worker:
        spec = self.spec
        backend = create_backend(spec.backend, spec.options)
        if spec.rate_limit is not None:
            backend = RateLimited(backend, RateLimiter(spec.rate_limit / self.share))
        tools = await self._stack.enter_async_context(spec.server.client())
        self.agent = IllusionAgent(backend, tools, spec.config)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def answer(self, item: Item) -> Record:
        position, sample = item
        return await answer_one(self.agent, sample, position, self.spec.out, self.spec.config.task, self.spec.prices)
