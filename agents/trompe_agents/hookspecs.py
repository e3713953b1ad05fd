"""The hooks an agent-side plugin can implement."""

from pluggy import HookimplMarker, HookspecMarker

hookspec = HookspecMarker("trompe_agents")
hookimpl = HookimplMarker("trompe_agents")


@hookspec
def register_backends(register):
    """Register model backends: call register(name, factory) where factory(BackendOptions) -> Backend."""
