"""Built-in plugin: grid, channels, colour sampling and isolation, blur (tag `analysis`)."""

from trompe_server import hookimpl

from . import channels, colors, grid

TOOLS = [*grid.TOOLS, *channels.TOOLS, *colors.TOOLS]
# Working copies (4 bytes a pixel each) held per image read, where more than the input and result: peak RSS
# above the input's, measured on a 49 MP RGB image (bench/memory_formats.py): isolate_color holds a mask and the
# dimmed copy besides its input and result (overlay_grid and sample_color blend only their labels' boxes).
COPIES = {"isolate_color": 2.5}


@hookimpl
def register_tools(register):
    for fn in TOOLS:
        register(fn, tags=("analysis",), copies=COPIES.get(fn.__name__, 2))
