"""The built-in plugins, in one list: each is an ordinary plugin module, registered by the manager as a third-party
one is, and imported only when one of its hooks is first asked for (a vendor SDK takes a second to import).

They arrive by module name, as entry points do, so this bottom layer names the modules above it without importing
them; tests/test_kernel.py checks that each module implements exactly the hooks listed here.
"""

from __future__ import annotations

from dataclasses import dataclass

DISTRIBUTION = "trompe"  # the built-ins' distribution; its own entry points are not read (they would be these)


@dataclass(frozen=True)
class Builtin:
    """A built-in plugin: its name (in messages, listings, TROMPE_PLUGINS), its module and the hooks it implements."""

    name: str
    module: str
    hooks: tuple[str, ...]

    @property
    def tools(self) -> bool:
        """A tool plugin: the allow-list (--plugins, TROMPE_PLUGINS) picks among these and the third-party ones."""
        return "register_tools" in self.hooks


def _backend(name: str, module: str) -> Builtin:
    return Builtin(name, f"trompe_agents.backends.{module}", ("register_backends",))


BUILTINS: tuple[Builtin, ...] = (
    Builtin("draw", "trompe_draw", ("register_tools",)),
    Builtin("analysis", "trompe_analysis", ("register_tools",)),
    Builtin("vision", "trompe_vision", ("register_tools",)),
    Builtin("storages", "trompe_server.storages", ("register_storages",)),
    _backend("claude", "claude"),
    _backend("openai", "openai_responses"),
    _backend("openai-chat", "openai_chat"),
    _backend("gemini", "gemini"),
    _backend("hf", "hf"),
    _backend("function", "function"),
    _backend("replay", "replay"),
    Builtin("executors", "trompe_agents.executors", ("register_executors",)),
    Builtin("sandboxes", "trompe_agents.sevex.isolation", ("register_sandboxes",)),
    Builtin("strategies", "trompe_agents.sevex.strategies", ("register_strategies",)),
    Builtin("probes", "trompe_agents.probes.base", ("register_probe_families",)),
    Builtin("benchmarks", "trompe_agents.datasets.benchmarks", ("register_benchmarks",)),
    Builtin("datasets", "trompe_agents.datasets.load", ("register_dataset_formats",)),
    Builtin("scorers", "trompe_agents.datasets.scorers", ("register_scorers",)),
    Builtin("commands", "trompe_agents.cli", ("register_commands",)),
)
