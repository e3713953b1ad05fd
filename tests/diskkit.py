"""A write that fails half-way, for tests of state files: the kernel's own EFBIG, as a full disk gives ENOSPC."""

from __future__ import annotations

import contextlib
import resource


@contextlib.contextmanager
def no_file_may_grow():
    """Every write to a regular file fails with EFBIG until the block ends (Python ignores SIGXFSZ)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
