"""trompe's agent side: MCP tool client, vendor backends, agent loop, and the apps built on them."""

__all__ = ["__version__"]


def __getattr__(name: str):
    """`__version__` on first use: one version for the whole `trompe` distribution (trompe_kernel), without
    importing it for every `import trompe_agents`."""
    if name == "__version__":
        from trompe_kernel.version import __version__

        return __version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
