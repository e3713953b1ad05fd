"""Pillow's cache of freed pixel blocks in a server process (pixel_blocks.py): a 12 MP preview's temporaries reuse
the last call's pages, and closing a session hands them back."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import resource
from pathlib import Path
from PIL import Image
from trompe_server.admission import return_freed_pixels_to_the_os
from trompe_server.encode import preview
from trompe_server.pixel_blocks import drop_freed_blocks, keep_freed_blocks

return_freed_pixels_to_the_os()  # as trompe-server starts (cli.execute)
if KEEP:
    keep_freed_blocks()
def faults(): return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def rss(): return int(Path("/proc/self/statm").read_text().split()[1]) * 4096
im = Image.new("RGB", (4000, 3000), (1, 2, 3))
for _ in range(2):  # the first calls allocate, and grow the cached blocks to the sizes asked for
    preview(im, 1568)
before = faults()
preview(im, 1568)
per_call = faults() - before
held = rss()
drop_freed_blocks()
print(per_call, held - rss())
"""


def probe(keep: bool) -> tuple[int, int]:
    done = subprocess.run([sys.executable, "-c", f"KEEP = {keep}\n" + PROBE], capture_output=True, text=True,
                          check=True)
    per_call, given_back = (int(v) for v in done.stdout.split())
    return per_call, given_back


def test_a_12_mp_previews_temporaries_reuse_the_last_calls_pages():
    """Without the cache each of the preview's 7-12 MB temporaries is a fresh mmap: ~4,800 page faults a call."""
    cold, _ = probe(keep=False)
    warm, given_back = probe(keep=True)
    assert cold > 4000 and warm < cold // 3, (cold, warm)
    assert given_back > 20 << 20, given_back  # close_session's drop_freed_blocks: the cached blocks leave RSS
