"""The cgroup v2 lookup and files (isolation/cgroup.py) against a fake /proc/self and a fake v2 tree in a temp folder:
the machines the tests run on may have cgroup v1 only, so this is where the v2 path is read and written.

The file shapes are the kernel's: /proc/self/mountinfo as Documentation/filesystems/proc.rst (3.5,
"/proc/<pid>/mountinfo") gives it (`36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw`, octal
escapes for spaces); /proc/self/cgroup's v2 line `0::$PATH` and the interface files as
Documentation/admin-guide/cgroup-v2.rst gives them: cgroup.subtree_control a space-separated list of
controllers ("cpu memory pids"), memory.events and pids.events flat keyed files ("oom_kill 1", "max 3"), and
the "no internal process" rule (a folder holding processes gives its children no controller), which is why the
lookup walks up from our own folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trompe_agents.sevex.isolation import cgroup

OWN = "/user.slice/user-1000.slice/user@1000.service/app.slice/trompe.scope"
MEMORY_EVENTS = "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 1\n"  # cgroup-v2.rst, memory.events


@pytest.fixture
def v2(tmp_path, monkeypatch):
    """A v2 hierarchy mounted at `cgroup fs` (a space, escaped in mountinfo), our process in OWN; returns a
    function that writes a folder's cgroup.subtree_control."""
    mount = tmp_path / "cgroup fs"
    folder = mount
    for part in OWN.strip("/").split("/"):
        folder = folder / part
        folder.mkdir(parents=True)
    for each in (mount, *[p for p in folder.parents if p.is_relative_to(mount)], folder):
        (each / "cgroup.procs").write_text("")
        (each / "cgroup.subtree_control").write_text("")
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mountinfo").write_text(
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        f"35 22 0:30 / {str(mount).replace(' ', chr(92) + '040')} rw,nosuid,nodev,noexec,relatime shared:9 - "
        "cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n")
    (proc / "cgroup").write_text(f"0::{OWN}\n")
    monkeypatch.setattr(cgroup, "PROC", proc)

    def enable(relative: str, controllers: str) -> Path:
        where = mount / relative.strip("/")
        (where / "cgroup.subtree_control").write_text(controllers + "\n")
        return where

    return enable


def test_the_nearest_folder_that_gives_memory_and_pids_to_its_children_is_used(v2):
    v2("/user.slice/user-1000.slice/user@1000.service", "cpu memory pids")  # systemd delegates the user's manager
    delegated = v2("/user.slice/user-1000.slice/user@1000.service/app.slice", "memory pids")
    found = cgroup._v2()
    assert found == cgroup.Layout(2, delegated, delegated)
    assert found.memory_limit == "memory.max" and found.oom_counter == "memory.events"
    assert found.describe(1280 * 2**20, 16) == (f"cgroup v2 per sandbox under {delegated}: memory.max 1,280 MiB "
                                               "(kernel and socket memory included), pids.max 16")


def test_a_folder_that_gives_only_one_of_them_is_passed_over(v2):
    v2("/user.slice/user-1000.slice/user@1000.service/app.slice", "cpu memory")
    top = v2("/user.slice", "memory pids")
    assert cgroup._v2() == cgroup.Layout(2, top, top)


def test_none_enabled_up_to_the_mount_says_why(v2):
    v2("/user.slice/user-1000.slice", "cpu memory")
    assert cgroup._v2() == ("cgroup v2: no folder at or above "
                            f"{cgroup.PROC.parent / 'cgroup fs' / OWN.strip('/')} enables memory and pids for its "
                            "children")


def test_a_sandbox_group_is_made_with_its_v2_limits_and_its_counts_read(v2):
    delegated = v2("/user.slice/user-1000.slice/user@1000.service/app.slice", "memory pids")
    group = cgroup.SandboxCgroup.make(cgroup._v2(), 1280 * 2**20, 16)
    folder = group.folders[0]
    assert group.folders == (folder,) and folder.parent == delegated and cgroup.NAME.fullmatch(folder.name)
    assert {path.name: path.read_text() for path in folder.iterdir()} == {
        "memory.max": str(1280 * 2**20), "memory.oom.group": "1", "pids.max": "16"}
    assert group.joins == [str(folder / "cgroup.procs")]
    assert group.counters() == cgroup.Counters(oom_kills=0, pids_refused=0)  # not written yet: none counted
    (folder / "memory.events").write_text(MEMORY_EVENTS)
    (folder / "pids.events").write_text("max 3\n")
    assert group.counters() == cgroup.Counters(oom_kills=1, pids_refused=3)


def test_no_v2_mounted_says_so(v2):
    (cgroup.PROC / "mountinfo").write_text("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
    assert cgroup._v2() == "no cgroup v2 mounted"
