"""An image's PNG made once per call: a storage that keeps the reply's encoding hands it to the reply.

The Redis registry stores each new image as the very PNG the reply sends (redis_storage.py); encoding the pixels
a second time for the reply was 22-30 ms of a 1 MP draw (bench/README.md, "Issue 40's goals")."""

from __future__ import annotations

from PIL import Image

from .encode import encode_png

ATTRIBUTE = "_trompe_png"  # on the Image object itself: crops and copies are new objects and never carry it


def stored_png(im: Image.Image) -> bytes:
    """encode_png(im), remembered on `im` for the reply that follows (the caller never changes `im` again)."""
    png = encode_png(im)
    setattr(im, ATTRIBUTE, (im.im, png))
    return png


def reply_png(im: Image.Image) -> bytes:
    """The PNG a storage made of these very pixels in this call, else a new encoding."""
    made = im.__dict__.pop(ATTRIBUTE, None)
    if made is not None and made[0] is im.im:  # the same pixel buffer it was made from
        return made[1]
    return encode_png(im)
