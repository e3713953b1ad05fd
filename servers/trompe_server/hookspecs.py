"""The hooks a trompe plugin can implement."""

from pluggy import HookimplMarker, HookspecMarker

hookspec = HookspecMarker("trompe")
hookimpl = HookimplMarker("trompe")


@hookspec
def register_tools(register):
    """Register image tools: call register(fn, tags=(...), name=None) once per tool."""
