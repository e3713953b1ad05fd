"""Built-in plugin: core drawing, cropping and comparison tools (tag `core`)."""

from trompe_server import hookimpl

from . import images, regions, shapes

TOOLS = [*shapes.TOOLS, *regions.TOOLS, *images.TOOLS]


@hookimpl
def register_tools(register):
    for fn in TOOLS:
        register(fn, tags=("core",))
