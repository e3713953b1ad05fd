"""bench/proctree.py: the CPU the throughput benches report is that of the processes they start, no more.

A busy-looping child stands for a worker: its time counts while it runs and, once reaped, through the parent's
children's time, once; another process's time (a job outside the tree) does not count at all.
"""

from __future__ import annotations

import subprocess
import sys


from proctree import ProcessTree  # noqa: E402

SPIN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"


def spin(seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SPIN.format(seconds=seconds)])


def test_a_child_s_cpu_counts_once_while_alive_and_after_it_is_reaped():
    tree = ProcessTree()
    before = tree.cpu_seconds()
    child = spin(0.6)
    tree.refresh()
    assert child.pid in tree.pids
    child.wait()  # reaped: its time moves into this process's children's time
    spent = tree.cpu_seconds() - before
    assert 0.55 <= spent <= 1.2  # the child's 0.6 s plus this process's own little work, not twice 0.6 s


def test_a_process_outside_the_tree_does_not_count():
    """A tree rooted at one child (a bench's run) does not count its busy sibling (another job's process)."""
    run = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        tree = ProcessTree(root=run.pid)
        before = tree.cpu_seconds()
        other = spin(0.6)
        tree.refresh()
        other.wait()
        assert other.pid not in tree.pids
        assert tree.cpu_seconds() - before < 0.2
    finally:
        run.stdin.close()
        run.wait()
