"""stopping.run_stoppable: a stop signal cancels the command's main task (its cleanup runs) and ends it with
128 + the signal; a signal the process was started ignoring stays ignored. Real signals sent to this process."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from trompe_agents.stopping import Interrupted, exit_status, run_stoppable


@pytest.fixture
def signals_restored():
    """The test changes this process's dispositions; put them back as they were."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stop_signal_cancels_the_main_task_runs_its_cleanup_and_says_which(signals_restored, signum):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    cleaned = []

    async def command() -> None:
        try:
            os.kill(os.getpid(), signum)  # as `kill PID` from elsewhere: delivered to the main thread's loop
            await asyncio.Event().wait()  # a vendor call that never answers
        finally:
            cleaned.append(True)

    with pytest.raises(Interrupted) as stopped:
        run_stoppable(command())
    assert cleaned == [True] and exit_status(stopped.value) == 128 + signum
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)] == [
        signal.default_int_handler, signal.SIG_DFL, signal.SIG_DFL]  # as the command found them


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
def test_sigint_and_sighup_the_process_was_started_ignoring_stay_ignored(signals_restored, signum):
    """A script's background job starts with SIGINT ignored, nohup with SIGHUP: that is the caller's choice."""
    signal.signal(signum, signal.SIG_IGN)

    async def command() -> str:
        os.kill(os.getpid(), signum)
        await asyncio.sleep(0.2)  # time for the signal to be delivered, had it been watched
        return "finished"

    assert run_stoppable(command()) == "finished"
    assert signal.getsignal(signum) is signal.SIG_IGN


def test_ctrl_c_outside_a_command_is_130():
    assert exit_status(KeyboardInterrupt()) == 130
