"""A real S3-compatible HTTP server on a free loopback port, for the `redis+s3` registry storage.

The server is moto's standalone one (`python -m moto.server`, the `moto` package in the dev extra,
https://docs.getmoto.org/en/latest/docs/server_mode.html): it speaks the S3 REST API over HTTP, so boto3 talks
to it exactly as to AWS, through its signing, retries and connection pool. It keeps objects in memory: a
restart starts it empty, as a replaced bucket would be.
"""

from __future__ import annotations

import functools
import importlib.util
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import needs
from netkit import free_port
from serverkit import stop

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "trompe-test", "AWS_SECRET_ACCESS_KEY": "trompe-test-secret",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}  # and no instance lookups


class S3Server:
    """One moto S3 server; `start()` again after `kill()` brings it back on the same port, empty."""

    def __init__(self):
        if importlib.util.find_spec("moto") is None or importlib.util.find_spec("flask") is None:
            needs.missing("moto's S3 server", "pip install -e '.[dev]' (moto[s3], flask, flask-cors)")
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).close()
                return
            except (urllib.error.URLError, OSError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    stop(self.proc)
                    raise AssertionError(f"moto's S3 server did not start: {self.proc.stderr.read()}") from None
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: the server dies mid-whatever, as a crashed object store would."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.communicate()
            self.proc = None

    def pause(self) -> None:
        """SIGSTOP: connections are accepted by the kernel and never answered, as a hung server's."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if "client" in self.__dict__:
            self.client.close()
        if self.proc is not None:
            self.resume()
            stop(self.proc)
            self.proc = None

    @functools.cached_property
    def client(self):
        """A boto3 client of the test's own, to look into the bucket behind the storage's back."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])

    def bucket(self, name: str) -> str:
        """Create a bucket (as an operator does before pointing trompe at it); returns its name."""
        self.client.create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str) -> list[str]:
        """Every object key in the bucket."""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


def registry_url(redis_url: str, s3: S3Server, bucket: str, **options: str) -> str:
    """The `--registry` URL of a Redis at `redis_url` with the pixels in `bucket` on `s3`."""
    query = "&".join(f"{key}={value}" for key, value in {"bucket": bucket, "endpoint": s3.endpoint, **options}.items())
    return f"redis+s3{redis_url.removeprefix('redis')}?{query}"
