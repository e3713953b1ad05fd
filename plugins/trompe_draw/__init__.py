"""Built-in plugin: core drawing, cropping and comparison tools (tag `core`)."""

from trompe_server import hookimpl

from .tools import TOOLS


@hookimpl
def register_tools(register):
    for fn in TOOLS:
        register(fn, tags=("core",))
