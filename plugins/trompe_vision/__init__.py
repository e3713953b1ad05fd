"""Built-in plugin: detector, depth and segmenter tools backed by transformers models (tag `vision`).

torch and transformers are imported on a tool's first call, so the server starts without them."""

from trompe_server import hookimpl

from .depth import estimate_depth
from .detect import detect_objects, sliding_window_detection
from .segment import segment_and_mark

TOOLS = [detect_objects, sliding_window_detection, estimate_depth, segment_and_mark]


@hookimpl
def register_tools(register):
    for fn in TOOLS:
        register(fn, tags=("vision",))
