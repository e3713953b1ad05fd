"""Built-in plugin: grid, channels, colour sampling and isolation, blur (tag `analysis`)."""

from trompe_server import hookimpl

from . import channels, colors, grid

TOOLS = [*grid.TOOLS, *channels.TOOLS, *colors.TOOLS]


@hookimpl
def register_tools(register):
    for fn in TOOLS:
        register(fn, tags=("analysis",))
