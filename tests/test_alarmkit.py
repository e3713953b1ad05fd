"""The test-body alarm and pytest-timeout share SIGALRM: using one must not switch the other off."""

import signal
import time

import pytest
from alarmkit import alarm


@pytest.fixture(autouse=True)
def pytest_timeout_timer():
    """These tests replace the real timer; pytest-timeout's own is put back after each."""
    handler, (left, _) = signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)
    yield
    signal.signal(signal.SIGALRM, handler)
    if left:
        signal.setitimer(signal.ITIMER_REAL, left)


def test_a_looser_outer_timer_is_put_back_with_its_time_left():
    signal.setitimer(signal.ITIMER_REAL, 100)
    try:
        with alarm(5):
            pass
        left = signal.getitimer(signal.ITIMER_REAL)[0]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    assert 99 < left <= 100


def test_a_tighter_outer_timer_is_left_to_fire():
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(True))
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with alarm(5):
            time.sleep(0.5)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert fired


def test_the_body_is_interrupted_at_its_bound():
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="after 1 s"):
        with alarm(1):
            time.sleep(5)
    assert time.monotonic() - started < 2
