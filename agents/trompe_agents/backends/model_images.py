"""Images as a model should receive them: a preview within the vendor's limits, encoded to suit the picture,
and only the recent rounds' images re-sent (older ones become a stub naming the id).

The registry always keeps full resolution; what is sent is a preview, and the text says which coordinates apply.
Synthetic pictures (few colours, or small) go as lossless PNG so their pixels stay exact; photographs as
high-quality JPEG or WebP. Nothing sent ever exceeds a documented limit: an image that cannot fit is refused
with one line naming it.
"""

from __future__ import annotations

import hashlib
import io
import math
from collections import OrderedDict
from dataclasses import dataclass, replace

from PIL import Image, UnidentifiedImageError

from ..messages import ImagePart, Message, TextPart
from .base import BackendError
from .catalogue import DEFAULT_KEEP_ROUNDS, ImageLimits

FORMATS = ("auto", "png", "jpeg", "webp")
MIME = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}
LOSSLESS_MAX_COLOURS = 4096  # fewer distinct colours: a drawing, not a photograph
SMALL_PIXELS = 256 * 256  # small images cost little either way: keep them exact
QUALITIES = (90, 80, 70)
MIN_SIDE = 64


class ImageTooLarge(BackendError):
    """An image (or a request's images) cannot be made to fit the vendor's documented limits."""


@dataclass(frozen=True)
class ImagePolicy:
    """How a backend sends images: the vendor's limits, the encoding, and how many rounds keep theirs."""

    limits: ImageLimits
    format: str = "auto"
    keep_rounds: int | None = DEFAULT_KEEP_ROUNDS  # None: re-send every image every round

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"image format must be one of {', '.join(FORMATS)}; got {self.format!r}")
        if self.keep_rounds is not None and self.keep_rounds < 1:
            raise ValueError(f"keep images must be a whole number of rounds >= 1, or 'all'; got {self.keep_rounds}")


def keep_rounds_option(value: object) -> int | None:
    """The `--keep-images` option: a number of rounds >= 1, or 'all' (None)."""
    if value is None or str(value).lower() == "all":
        return None
    try:
        rounds = int(str(value))
    except ValueError:
        rounds = 0
    if rounds < 1:
        raise ValueError(f"keep images must be a whole number of rounds >= 1, or 'all'; got {value!r}")
    return rounds


@dataclass
class Encoded:
    """One image as it will be sent, and what was done to it."""

    part: ImagePart
    note: str | None  # the text that goes before it when the preview is smaller than the original
    size: tuple[int, int]
    full: tuple[int, int]


_cache: OrderedDict[tuple, Encoded] = OrderedDict()
_CACHE_SIZE = 256


def encode_for_model(image: ImagePart, limits: ImageLimits, fmt: str = "auto") -> Encoded:
    """The image as a preview within `limits`; unchanged bytes when they already fit (exact pixels kept)."""
    key = (hashlib.sha256(image.data).digest(), image.id, limits, fmt)
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    encoded = _encode(image, limits, fmt)
    _cache[key] = encoded
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return encoded


def _encode(image: ImagePart, limits: ImageLimits, fmt: str) -> Encoded:
    try:
        with Image.open(io.BytesIO(image.data)) as opened:
            opened.load()
            source_format = (opened.format or "").lower()
            im = opened.copy()
    except (UnidentifiedImageError, OSError):  # not ours to judge: the vendor says what it thinks of it
        if len(image.data) > limits.max_bytes:
            raise ImageTooLarge(f"image {image.id} ({len(image.data) / 2**20:.1f} MB, not decodable) exceeds the "
                                f"vendor's {limits.max_bytes / 2**20:.1f} MB per-image limit") from None
        return Encoded(image, None, (0, 0), (0, 0))
    full = im.size
    scale = min(1.0, limits.preview_side / max(full), math.sqrt(limits.max_pixels / (full[0] * full[1])))
    chosen = fmt if fmt != "auto" else ("png" if wants_lossless(im) else "jpeg")
    if chosen not in limits.formats:
        chosen = "png"
    if scale == 1.0 and source_format == chosen and len(image.data) <= limits.max_bytes:
        return Encoded(image, None, full, full)  # already fits: the exact bytes go
    size = full
    while True:
        size = (max(1, int(full[0] * scale)), max(1, int(full[1] * scale)))
        shown = im if size == full else im.resize(size, Image.Resampling.LANCZOS)
        for quality in (QUALITIES if chosen != "png" else (None,)):
            data = _save(shown, chosen, quality)
            if len(data) <= limits.max_bytes:
                note = None if size == full else (
                    f"[{image.id} is shown as a {size[0]}x{size[1]} preview of the full {full[0]}x{full[1]} image; "
                    "coordinates refer to the full-size image kept in the registry]")
                return Encoded(ImagePart(image.id, data, MIME[chosen]), note, size, full)
        if min(size) <= MIN_SIDE:
            raise ImageTooLarge(f"image {image.id} ({full[0]}x{full[1]}) cannot fit the vendor's "
                                f"{limits.max_bytes / 2**20:.1f} MB per-image limit even at {size[0]}x{size[1]}")
        scale *= 0.75


def wants_lossless(im: Image.Image) -> bool:
    """PNG for drawings, small images and transparency; a lossy format only for photographs."""
    if im.width * im.height <= SMALL_PIXELS or "A" in im.getbands() or "transparency" in im.info:
        return True
    return im.convert("RGB").getcolors(LOSSLESS_MAX_COLOURS) is not None


def _save(im: Image.Image, fmt: str, quality: int | None) -> bytes:
    buf = io.BytesIO()
    if fmt == "png":
        im.save(buf, format="PNG", optimize=False, compress_level=6)
    else:
        rgb = im if im.mode == "RGB" else im.convert("RGB")
        rgb.save(buf, format=fmt.upper(), quality=quality, **({"subsampling": 0} if fmt == "jpeg" else {}))
    return buf.getvalue()


def rounds_of(messages: list[Message]) -> list[int]:
    """For each message, the round it belongs to: 0 before the first assistant turn, then 1, 2, ..."""
    rounds, current = [], 0
    for m in messages:
        if m.role == "assistant":
            current += 1
        rounds.append(current)
    return rounds


def stub(image_id: str) -> TextPart:
    return TextPart(f"[image {image_id} from an earlier round is not repeated here; "
                    f"call view_image with image '{image_id}' to see it again]")


def prepare_messages(messages: list[Message], policy: ImagePolicy) -> tuple[list[Message], dict]:
    """Messages as sent: old rounds' images stubbed, the rest encoded within the limits; plus what was done."""
    rounds = rounds_of(messages)
    latest = rounds[-1] if rounds else 0
    keep_from = -1 if policy.keep_rounds is None else latest - policy.keep_rounds + 1
    out: list[Message] = []
    elided: list[str] = []
    for message, r in zip(messages, rounds):
        if not message.images:
            out.append(message)
            continue
        parts = []
        for part in message.parts:
            if not isinstance(part, ImagePart):
                parts.append(part)
            elif r > 0 and r < keep_from:
                parts.append(stub(part.id))
                elided.append(part.id)
            else:
                encoded = encode_for_model(part, policy.limits, policy.format)
                parts += [TextPart(encoded.note), encoded.part] if encoded.note else [encoded.part]
        out.append(replace(message, parts=parts))
    out, dropped = _within_request_limits(out, rounds, policy.limits)
    sent = [p for m in out for p in m.images]
    return out, {"images_sent": len(sent), "image_bytes": sum(len(p.data) for p in sent),
                 "images_elided": elided + dropped,
                 "image_formats": sorted({p.mime_type.removeprefix("image/") for p in sent})}


def _within_request_limits(messages: list[Message], rounds: list[int],
                           limits: ImageLimits) -> tuple[list[Message], list[str]]:
    """Stub the oldest tool-round images until the request's image count and bytes fit; refuse if they cannot."""
    dropped: list[str] = []

    def totals() -> tuple[int, int]:
        images = [p for m in messages for p in m.images]
        return len(images), sum(len(p.data) for p in images)

    count, size = totals()
    while count > limits.max_images or size > limits.max_request_bytes:
        index = next((i for i, (m, r) in enumerate(zip(messages, rounds)) if r > 0 and m.images), None)
        if index is None:
            raise ImageTooLarge(f"the question's own images ({count}, {size / 2**20:.1f} MB) exceed the vendor's "
                                f"limit of {limits.max_images} images and {limits.max_request_bytes / 2**20:.0f} MB "
                                "per request; send fewer or smaller images")
        message = messages[index]
        first = next(p for p in message.parts if isinstance(p, ImagePart))
        parts = [stub(first.id) if p is first else p for p in message.parts]
        messages = [*messages[:index], replace(message, parts=parts), *messages[index + 1:]]
        dropped.append(first.id)
        count, size = totals()
    return messages, dropped
