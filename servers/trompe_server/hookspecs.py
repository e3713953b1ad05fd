"""The hooks a trompe plugin can implement."""

from pluggy import HookimplMarker, HookspecMarker

hookspec = HookspecMarker("trompe")
hookimpl = HookimplMarker("trompe")


@hookspec
def register_tools(register):
    """Register image tools: call register(fn, tags=(...), name=None, copies=2) once per tool.

    `copies` is how many full-size working copies (4 bytes a pixel) the tool holds at its peak for each image
    it reads: its input and its result make 2; a tool holding more declares it, so the memory budget counts it.
    """


@hookspec
def register_storages(register):
    """Register registry storages by URL scheme: call register(scheme, factory) where factory(url, limits) returns
    a `storage.Storage` for `--registry SCHEME://...` (a start-up problem is a ValueError naming the URL).

    A scheme another plugin registers too (a built-in's included) is refused with an error naming both plugins.
    """
