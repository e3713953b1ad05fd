"""The `redis` registry storage: sessions shared by every replica, pixels content-addressed, a local cache."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import secrets
import struct
import threading
from collections import OrderedDict

import numpy as np
from isal import isal_zlib
from PIL import Image
from zlib_ng import zlib_ng

from . import redis_scripts
from .encode import COLOUR_TYPES, SIGNATURE, UP
from .errors import RegistryUnavailable
from .records import ImageRecord
from .reply_png import stored_png
from .storage import EVICTED_BY, OUTPUT_FORMAT, Bounds, Quota, Refused, redacted

PREFIX = "trompe"
TIMEOUT = 15.0  # seconds one Redis command may take before the call fails (?socket_timeout=S in the URL)


class PixelCache:
    """Decoded pixels this replica used recently, by digest, within its memory budget (they never change)."""

    def __init__(self, budget: int):
        self.budget, self.in_memory = budget, 0
        self._items: OrderedDict[str, tuple[str, tuple[int, int], bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, digest: str, mode: str, size: tuple[int, int], raw: bytes) -> None:
        with self._lock:
            if digest in self._items or len(raw) > self.budget:
                return
            self._items[digest] = (mode, size, raw)
            self.in_memory += len(raw)
        self.resize(self.budget)

    def get(self, digest: str) -> tuple[str, tuple[int, int], bytes] | None:
        with self._lock:
            item = self._items.get(digest)
            if item is not None:
                self._items.move_to_end(digest)
            return item

    def resize(self, budget: int) -> None:
        with self._lock:
            self.budget = budget
            while self.in_memory > self.budget and self._items:
                self.in_memory -= len(self._items.popitem(last=False)[1][2])

    def clear(self) -> None:
        self.resize(0)


def digest_of(mode: str, size: tuple[int, int], raw: bytes) -> str:
    """Content address of decoded pixels: equal images share one copy in Redis."""
    h = hashlib.sha256(f"{mode} {size[0]}x{size[1]}\n".encode())
    h.update(raw)
    return h.hexdigest()


# A stored digest with this prefix keeps its pixels as PNG's "Up" row filter then deflate (zlib-ng level 3):
# lossless, about the size of a PNG (0.9-1.5x Pillow's default on the measured images) at a few ms for 256x256.
# A bare digest (stored by earlier versions) keeps raw pixels.
PACKED = "up3-"
LEVEL = 3


def packed(height: int, raw: bytes, digest: str) -> tuple[str, bytes]:
    """(stored digest, bytes for Redis) of raw pixels laid out as Image.tobytes() does, `height` rows."""
    rows = np.frombuffer(raw, np.uint8).reshape(height, -1)
    up = rows.copy()
    np.subtract(rows[1:], rows[:-1], out=up[1:])  # uint8 wraps modulo 256, as PNG's filter does
    return PACKED + digest, zlib_ng.compress(up, LEVEL)


def unpacked(digest: str, height: int, data: bytes) -> bytes:
    """The raw pixels of what packed() or stored_png() stored (or of a raw value from an earlier version)."""
    if digest.startswith(PNG):
        return png_pixels(height, data)
    if not digest.startswith(PACKED):
        return data
    up = np.frombuffer(zlib_ng.decompress(data), np.uint8).reshape(height, -1)
    return np.cumsum(up, axis=0, dtype=np.uint8).tobytes()


# A stored digest with this prefix keeps its pixels as the PNG a tool's reply sends (encode.encode_png): made
# once for both (reply_png.py). Only what that encoder writes is read back: "Up"-filtered rows in IDAT chunks.
PNG = "png-"


def png_pixels(height: int, data: bytes) -> bytes:
    """Raw pixels (as Image.tobytes() lays them out) of a PNG encode_png wrote, `height` rows."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG")
    idat, at = [], len(SIGNATURE)
    while at + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, at)
        if kind == b"IDAT":
            idat.append(data[at + 8:at + 8 + length])
        at += 12 + length
    rows = np.frombuffer(isal_zlib.decompress(b"".join(idat)), np.uint8).reshape(height, -1)
    if (rows[:, 0] != UP).any():
        raise ValueError("a row is not Up-filtered")
    return np.cumsum(rows[:, 1:], axis=0, dtype=np.uint8).tobytes()


def stored_form(im: Image.Image, raw: bytes, digest: str) -> tuple[str, bytes]:
    """(stored digest, bytes for Redis) of an image whose raw pixels are `raw`: the reply's PNG where the
    encoder writes the mode as it is, else packed()."""
    if im.mode in COLOUR_TYPES:
        return PNG + digest, stored_png(im)
    return packed(im.height, raw, digest)


def reported(method):
    """Redis being down, or refusing a write, becomes an error for this one call; the server carries on."""
    import redis

    @functools.wraps(method)
    def wrapper(self: RedisStorage, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except redis.OutOfMemoryError:
            raise RegistryUnavailable(f"the shared registry (Redis at {self.url}) is full (over its "
                                      "maxmemory): new sessions and images are refused until sessions are "
                                      "closed or expire; reading images and close_session still work. Nothing "
                                      "was changed") from None
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise RegistryUnavailable(f"the shared registry (Redis at {self.url}) is unreachable "
                                      f"({exc}); nothing was changed, retry when it is back") from None
        except redis.RedisError as exc:
            raise RegistryUnavailable(f"the shared registry (Redis at {self.url}) refused the "
                                      f"request ({exc}); nothing was changed") from None
    return wrapper


class RedisStorage:
    """Registry storage in one Redis (standalone or behind Sentinel): every change is one Lua script."""

    def __init__(self, url: str, memory_budget: int, prefix: str = PREFIX):
        try:
            import redis
            from redis.backoff import ExponentialBackoff
            from redis.retry import Retry
        except ImportError:
            raise ValueError("--registry redis: the Redis client is not installed; "
                             "pip install 'trompe[redis]'") from None
        self.url, self.prefix = redacted(url), prefix
        # A lost connection is retried (a restart takes a moment; every script is safe to send twice), a
        # timeout is not: a hung Redis fails the call within socket_timeout, the URL's or TIMEOUT.
        self.client = redis.Redis.from_url(
            url, socket_connect_timeout=2, socket_timeout=TIMEOUT, retry_on_error=[redis.ConnectionError],
            retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 4, supported_errors=(redis.ConnectionError,)))
        try:
            self.client.ping()
        except redis.RedisError as exc:
            raise ValueError(f"--registry {self.url}: cannot reach Redis ({exc}); start it or fix the URL") from None
        self.cache = PixelCache(memory_budget)
        self._scripts = {name: self.client.register_script(getattr(redis_scripts, name))
                         for name in ("CREATE", "TOUCH", "DROP", "APPEND", "UNUSED")}

    def _key(self, session_id: str, part: str) -> str:
        return f"{self.prefix}:s:{session_id}:{part}"

    def _run(self, script: str, *args) -> object:
        return self._scripts[script](args=[self.prefix, *args])

    @staticmethod
    def _ttl(idle_timeout: float) -> int:
        """Keys outlive the idle timeout a little: TTLs are refreshed at most idle/4 late."""
        return math.ceil(idle_timeout * 1.25) + 1

    @reported
    def create_session(self, session_id: str, client: str, quota: Quota, request: str | None = None) -> str:
        per_client = "" if quota.per_client is None else quota.per_client
        made = self._run("CREATE", session_id, client, quota.max_sessions, per_client, quota.idle_timeout,
                         self._ttl(quota.idle_timeout), request or "")
        return made.decode()

    @reported
    def touch(self, session_id: str, idle_timeout: float) -> None:
        if not self._run("TOUCH", session_id, idle_timeout, self._ttl(idle_timeout)):
            raise self._gone(session_id)

    def _gone(self, session_id: str) -> Refused:
        """The refusal for a session that is not there, naming the quota that evicted it if one did: a session
        evicted while a call on it ran is found gone by that call's write or read, not only by its touch."""
        quota = (self.client.get(f"{self.prefix}:gone:{session_id}") or b"").decode(errors="replace")
        return Refused("session", evicted_by=quota if quota in EVICTED_BY else "")

    @reported
    def drop_session(self, session_id: str) -> int:
        count = int(self._run("DROP", session_id))
        if count < 0:
            raise self._gone(session_id)
        return count

    @reported
    def session_ids(self) -> list[str]:
        return [s.decode() for s in self.client.zrange(f"{self.prefix}:sessions", 0, -1)]

    @reported
    def records(self, session_id: str) -> list[ImageRecord]:
        pipe = self.client.pipeline(transaction=False)  # Redis refuses MULTI over maxmemory, reads included
        pipe.lrange(self._key(session_id, "order"), 0, -1)
        pipe.hgetall(self._key(session_id, "records"))
        order, stored = pipe.execute()  # records are only ever added: all of order's are there, unless dropped
        dropped = not set(order) <= stored.keys()
        if dropped or not order and not self.client.zscore(f"{self.prefix}:sessions", session_id):
            raise self._gone(session_id)
        return [self._decode(i.decode(), stored[i])[0] for i in order]

    @reported
    def record(self, session_id: str, image_id: str) -> ImageRecord | None:
        raw = self.client.hget(self._key(session_id, "records"), image_id)
        return None if raw is None else self._decode(image_id, raw)[0]

    @reported
    def pixels(self, session_id: str, image_id: str) -> Image.Image:
        raw = self.client.hget(self._key(session_id, "records"), image_id)
        if raw is None:
            raise self._gone(session_id)
        record, digest = self._decode(image_id, raw)
        cached = self.cache.get(digest)
        if cached is None:
            data = self._read_pixels(session_id, digest)
            if data is None:
                raise self._gone(session_id)
            try:
                cached = (record.mode, (record.width, record.height), unpacked(digest, record.height, data))
                image = Image.frombytes(*cached)
            except (ValueError, TypeError, OSError, zlib_ng.error, isal_zlib.error) as exc:
                raise self._damaged(image_id, exc) from None
            self.cache.put(digest, *cached)
            return image
        return Image.frombytes(*cached)

    @reported
    def append(self, session_id: str, record: ImageRecord, im: Image.Image, bounds: Bounds,
               request: str | None = None) -> ImageRecord:
        """The pixels are written first (SET NX), the record by APPEND: no script holds pixels in its arguments."""
        raw = im.tobytes()
        digest, data = stored_form(im, raw, self._pixel_name(digest_of(im.mode, im.size, raw)))
        stored = json.dumps({k: v for k, v in record.describe().items() if k != "id"} | {"digest": digest},
                            default=str)
        ttl = self._ttl(bounds.idle_timeout)
        nonce = request or secrets.token_hex(12)  # a random one still makes redis-py's own resend safe
        held = self._write_pixels(session_id, digest, data)
        for _ in range(3):  # 'pixels': another session freed the same pixels between the SET and the script
            self.client.set(f"{self.prefix}:px:{digest}", held, nx=True, ex=ttl)
            reason, value = self._run("APPEND", session_id, record.id, stored, record.nbytes, digest,
                                      bounds.max_images, bounds.max_session_bytes, bounds.idle_timeout, ttl,
                                      OUTPUT_FORMAT, nonce)
            if reason != b"pixels":
                break
        if reason != b"ok":
            self._forget_pixels(session_id, digest)
        if reason == b"again":  # this request was stored before (its reply was lost): the stored version
            earlier = self.record(session_id, value.decode())
            if earlier is None:
                raise self._gone(session_id)
            return earlier
        if reason == b"session":
            raise self._gone(session_id)
        if reason != b"ok":
            raise Refused(reason.decode(), int(value))
        self.cache.put(digest, im.mode, im.size, raw)
        return dataclasses.replace(record, id=value.decode())

    def _pixel_name(self, content: str) -> str:
        """The digest a new image's pixels are kept under: their content address, so equal pixels share a copy."""
        return content

    def _write_pixels(self, session_id: str, digest: str, data: bytes) -> bytes:
        """What P:px:DIGEST holds for these pixels: here the pixels themselves."""
        return data

    def _read_pixels(self, session_id: str, digest: str) -> bytes | None:
        """The stored pixels, or None when they are gone with their session."""
        return self.client.get(f"{self.prefix}:px:{digest}")

    def _forget_pixels(self, session_id: str, digest: str) -> None:
        """Free pixels written for an APPEND that stored nothing, unless a record uses them."""
        self._run("UNUSED", digest)

    def _decode(self, image_id: str, raw: bytes) -> tuple[ImageRecord, str]:
        """A stored record; one that is not what this server writes (another program wrote to the keys) is a
        clear error for this call, never a traceback."""
        try:
            data = json.loads(raw)
            digest = data.pop("digest")
            if not isinstance(digest, str):
                raise TypeError(f"digest is {type(digest).__name__}")
            return ImageRecord.from_dict(data | {"id": image_id}), digest
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            raise self._damaged(image_id, exc) from None

    def _damaged(self, image_id: str, exc: Exception) -> RegistryUnavailable:
        return RegistryUnavailable(f"the shared registry (Redis at {self.url}) holds a damaged entry "
                                   f"for image {image_id[:64]!r} ({type(exc).__name__}: {str(exc)[:120]}); "
                                   "only trompe-server should write under its key prefix")

    def set_ram_budget(self, budget: int) -> None:
        """Keep fewer cached pixels while tool calls have work in flight (they share the memory budget)."""
        self.cache.resize(budget)

    @property
    def bytes_in_memory(self) -> int:
        return self.cache.in_memory

    def close(self) -> None:
        self.cache.clear()
        self.client.close()

    def remove_spill(self) -> None:
        """Nothing is kept on local disk."""
