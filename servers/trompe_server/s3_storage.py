"""The `redis+s3` registry storage: sessions, records and lineage in Redis, the pixels as objects in an S3 bucket.

`--registry redis+s3://HOST:PORT/DB?bucket=NAME[&endpoint=URL][&region=R][&key_prefix=P][&s3_timeout=S]
[&s3_attempts=N][&sweep=S]`: the Redis part is a `redis://` URL as the `redis` storage takes it (`rediss+s3://`
for TLS); the S3 options are taken out of the query before it reaches Redis. Credentials come from the usual
AWS chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an instance role), never from the URL.

Every image is one object, KEY_PREFIX + `trompe/<session id>/<digest>`, holding what the Redis storage would have held
(PNG's Up filter then deflate); Redis keeps its record and a 2-byte marker in place of the pixels, so every
Lua script, quota and TTL works as on the `redis` storage. Keys are per image and per session, so deleting
one never races with another session storing equal pixels. Objects go when their session goes: a close
deletes them at once; a session evicted by a quota or expired by Redis is found by the sweep, which one
replica at a time runs every `sweep` seconds (default 60): it lists the bucket's session folders and deletes
those whose session Redis no longer holds. No bucket lifecycle rule is needed. An object written for a call that
Redis then failed is deleted at once, unless the record may have been stored after all (the APPEND was sent and
its reply lost) and Redis cannot say; such an object, or one left by a replica killed between the two writes,
goes with its session.
"""

from __future__ import annotations

import functools
import logging
import math
import re
import secrets
import threading
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from PIL import Image

from .errors import RegistryUnavailable
from .records import ImageRecord
from .redis_storage import PREFIX, TIMEOUT, RedisStorage
from .storage import Bounds, redacted

logger = logging.getLogger(__name__)

MARKER = b"s3"  # what P:px:DIGEST holds in Redis: the pixels are in the bucket
OPTIONS = ("bucket", "endpoint", "region", "key_prefix", "s3_timeout", "s3_attempts", "sweep")
BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")  # S3's bucket naming rules
SWEEP = 60.0  # seconds between sweeps for objects of sessions Redis has dropped


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """(the Redis URL, the S3 options) of a `redis+s3://` or `rediss+s3://` URL; a bad option is a ValueError."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    options = {key: value for key, value in query if key in OPTIONS}
    rest = [(key, value) for key, value in query if key not in OPTIONS]
    scheme = parts.scheme.lower().removesuffix("+s3")
    shown = redacted(url)
    if not BUCKET.fullmatch(options.get("bucket", "")):
        given = f"bucket={options['bucket']!r} is not" if "bucket" in options else "bucket= is required,"
        raise ValueError(f"--registry {shown}: {given} an S3 bucket name (3 to 63 of a-z, 0-9, '.', '-'), e.g. "
                         "redis+s3://127.0.0.1:6379/0?bucket=trompe-pixels")
    endpoint = options.get("endpoint", "")
    if endpoint and urlsplit(endpoint).scheme not in ("http", "https"):
        raise ValueError(f"--registry {shown}: endpoint={endpoint!r} is not an http:// or https:// URL "
                         "(leave it out for AWS itself)")
    for name, low, kind in (("s3_timeout", 0.1, float), ("s3_attempts", 1, int), ("sweep", 1.0, float)):
        if name in options:
            try:
                value = kind(options[name])
            except ValueError:
                value = math.nan
            if not value >= low or not math.isfinite(value):
                raise ValueError(f"--registry {shown}: {name}={options[name]!r}; accepted: a number from {low:g}")
    return urlunsplit(parts._replace(scheme=scheme, query=urlencode(rest))), options


_SESSION_LOCK = threading.Lock()


@functools.cache
def _session(boto3):
    """One boto3 session for the process: its loader reads the S3 API model once, not at every storage (0.5 s)."""
    return boto3.session.Session()


def _answer(exc: Exception) -> dict[str, str]:
    """The error S3 answered with ({'Code': ..., 'Message': ...}), or {} when no answer came."""
    return (getattr(exc, "response", None) or {}).get("Error", {})


def _detail(exc: Exception) -> str:
    """An S3 error in one short phrase: its code and message for an answer, the client's text otherwise."""
    error = _answer(exc)
    return f"{error.get('Code')}: {error.get('Message', '')}".strip(": ") if error else str(exc)[:200]


class S3Storage(RedisStorage):
    """The Redis storage with each image's pixels as an object in S3 (boto3), and a sweep of dropped sessions'."""

    def __init__(self, url: str, memory_budget: int, prefix: str = PREFIX):
        try:
            import boto3
            import botocore.config
            import botocore.exceptions
        except ImportError:
            raise ValueError("--registry redis+s3: the S3 client is not installed; pip install 'trompe[s3]'") from None
        redis_url, options = split_url(url)
        super().__init__(redis_url, memory_budget, prefix)
        self.url = redacted(url)
        self.bucket = options["bucket"]
        self.endpoint = options.get("endpoint") or "AWS S3"
        self.root = f"{options.get('key_prefix', '')}{prefix}/"  # then <session id>/<digest>
        self.errors = (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError)
        config = botocore.config.Config(
            connect_timeout=2, read_timeout=float(options.get("s3_timeout", TIMEOUT)), max_pool_connections=32,
            retries={"mode": "standard", "total_max_attempts": int(options.get("s3_attempts", 3))},
            # checksums only where the API requires them: what S3-compatible servers other than AWS accept
            request_checksum_calculation="when_required", response_checksum_validation="when_required",
            s3={"addressing_style": "path"} if options.get("endpoint") else None)
        with _SESSION_LOCK:  # a boto3 session is not thread-safe; its clients are
            self.s3 = _session(boto3).client("s3", endpoint_url=options.get("endpoint") or None,
                                             region_name=options.get("region") or None, config=config)
        try:
            self.s3.head_bucket(Bucket=self.bucket)
        except self.errors as exc:
            self.s3.close()
            self.client.close()
            raise ValueError(f"--registry {self.url}: cannot use S3 bucket {self.bucket!r} at {self.endpoint} "
                             f"({_detail(exc)}); create the bucket, or fix the endpoint or the credentials "
                             "(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE)") from None
        self._put = threading.local()  # this thread's append: the object it wrote, and whether Redis may use it
        self.sweep_every = float(options.get("sweep", SWEEP))
        self._stop = threading.Event()
        self._sweeper = threading.Thread(target=self._sweep_forever, name="trompe-s3-sweep", daemon=True)
        self._sweeper.start()

    def _object(self, session_id: str, digest: str) -> str:
        return f"{self.root}{session_id}/{digest}"

    def _unavailable(self, exc: Exception, what: str, advice: str = "retry when it is back") -> RegistryUnavailable:
        return RegistryUnavailable(f"the object storage (S3 bucket {self.bucket!r} at {self.endpoint}) "
                                   f"{what} ({_detail(exc)}); {advice}")

    def _pixel_name(self, content: str) -> str:
        """A name of this image's own: deleting its object never takes equal pixels another session stored."""
        return f"{content[:32]}-{secrets.token_hex(8)}"

    def append(self, session_id: str, record: ImageRecord, im: Image.Image, bounds: Bounds,
               request: str | None = None) -> ImageRecord:
        """As the Redis storage's; when Redis then fails, the object this call wrote goes too, not left behind."""
        self._put.written, self._put.in_doubt = None, False
        try:
            return super().append(session_id, record, im, bounds, request)
        except RegistryUnavailable:
            if self._put.written is not None:
                self._discard(session_id, self._put.written, self._put.in_doubt)
            raise
        finally:
            self._put.written = None

    def _write_pixels(self, session_id: str, digest: str, data: bytes) -> bytes:
        try:
            self.s3.put_object(Bucket=self.bucket, Key=self._object(session_id, digest), Body=data)
        except self.errors as exc:
            raise self._unavailable(exc, "did not store the image; nothing was changed") from None
        self._put.written = digest
        return MARKER

    def _run(self, script: str, *args) -> object:
        """An APPEND sent but not answered (the connection lost, a timeout) may have stored its record."""
        import redis

        try:
            return super()._run(script, *args)
        except (redis.ConnectionError, redis.TimeoutError):
            if script == "APPEND":
                self._put.in_doubt = True
            raise

    def _discard(self, session_id: str, digest: str, in_doubt: bool) -> None:
        """Delete the object of a record Redis did not store; when Redis cannot say whether it did, the object
        stays for its session's close or the sweep (deleting it could take a stored record's pixels)."""
        import redis

        try:
            if in_doubt:
                self._run("UNUSED", digest)  # frees the pixel key unless a record holds it: no APPEND takes it after
                if self.client.exists(f"{self.prefix}:ref:{digest}"):
                    return  # the record was stored, only its reply was lost: these are its pixels
            self.s3.delete_object(Bucket=self.bucket, Key=self._object(session_id, digest))
        except (*self.errors, redis.RedisError) as exc:
            logger.warning("S3 bucket %r: an object written for an image Redis did not store is left for its "
                           "session's close (%s)", self.bucket, _detail(exc))

    def _read_pixels(self, session_id: str, digest: str) -> bytes | None:
        key = self._object(session_id, digest)
        try:
            return self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except self.errors as exc:
            missing = _answer(exc).get("Code") in ("NoSuchKey", "404")
            if missing and not self.client.exists(self._key(session_id, "meta")):
                return None  # closed, its objects deleted, since its record was read
            if missing:
                raise self._unavailable(exc, f"no longer holds object {key!r}, these pixels", "something deleted "
                                        "it behind the server's back; open the image again in a new session") from None
            raise self._unavailable(exc, "could not give back these pixels") from None

    def _forget_pixels(self, session_id: str, digest: str) -> None:
        super()._forget_pixels(session_id, digest)
        try:
            self.s3.delete_object(Bucket=self.bucket, Key=self._object(session_id, digest))
        except self.errors as exc:  # left for the sweep, which takes it with its session
            logger.warning("S3 bucket %r: could not delete an unused object (%s)", self.bucket, _detail(exc))

    def drop_session(self, session_id: str) -> int:
        """Forget the session in Redis, then delete its objects (the sweep does, if S3 fails now)."""
        count = super().drop_session(session_id)
        try:
            self._delete_objects(session_id)
        except self.errors as exc:
            logger.warning("S3 bucket %r: the objects of closed session %s are left for the sweep (%s)",
                           self.bucket, session_id, _detail(exc))
        return count

    def _delete_objects(self, session_id: str) -> int:
        """Delete every object of one session; returns how many there were."""
        deleted = 0
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                      Prefix=f"{self.root}{session_id}/"):
            keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
            if keys:
                self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
                deleted += len(keys)
        return deleted

    def sweep(self) -> int:
        """Delete the objects of every session Redis no longer holds (evicted, expired, or closed while S3 was
        down); returns how many objects went. A session's objects are written only while it lives in Redis,
        and ids are never reused, so a folder whose session is gone stays garbage."""
        deleted = 0
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.root,
                                                                      Delimiter="/"):
            sessions = [p["Prefix"][len(self.root):-1] for p in page.get("CommonPrefixes", [])]
            pipe = self.client.pipeline(transaction=False)
            for session_id in sessions:
                pipe.exists(self._key(session_id, "meta"))  # a live session's meta key outlives its idle time
            for session_id, alive in zip(sessions, pipe.execute(), strict=True):
                if not alive:
                    deleted += self._delete_objects(session_id)
        return deleted

    def _sweep_forever(self) -> None:
        """Every `sweep` seconds, one replica of those sharing the Redis (whichever takes the lock) sweeps."""
        import redis

        while not self._stop.wait(self.sweep_every):
            try:
                if self.client.set(f"{self.prefix}:s3sweep", "1", nx=True, ex=max(1, int(self.sweep_every))):
                    self.sweep()
            except (*self.errors, redis.RedisError) as exc:  # the next round tries again
                logger.warning("S3 bucket %r: sweep failed (%s)", self.bucket, _detail(exc))

    def close(self) -> None:
        self._stop.set()
        self._sweeper.join(timeout=5)
        super().close()
        self.s3.close()
