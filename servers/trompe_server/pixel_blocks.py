"""Pillow's cache of freed pixel blocks, so a call's temporaries reuse the last call's pages.

A 12 MP draw frees three Pillow images of 7-12 MB each (the preview's box reduction, its resize pass and the
preview itself); above glibc's 8 MiB mmap threshold each was unmapped and the next call faulted fresh pages
in (about 11,000 page faults, a third of a 12 MP draw's server CPU: bench/README.md). Pillow keeps up to
BLOCKS freed blocks (each at most its 16 MiB block size) for reuse; closing a session gives them back.
"""

from __future__ import annotations

from PIL import Image

BLOCKS = 3  # a 12 MP call's three freed temporaries: at most 3 x 16 MiB held between calls


def keep_freed_blocks() -> None:
    """Let Pillow keep freed pixel blocks for the next images (a server's process only: it holds memory)."""
    Image.core.set_blocks_max(BLOCKS)


def drop_freed_blocks() -> None:
    """Hand the cached blocks back (a session closed: RSS returns to its idle level)."""
    Image.core.clear_cache()
