"""Image paths as an unprivileged user: what file permissions decide, which root never sees (it reads every file).

Of the server's attack tests, only reading image paths depends on who runs the server: tokenless HTTP, session
quotas, tool-name rules and damaged Redis records are the same for every uid. So the cases here run directly
when the suite runs as a user, and, run as root (as CI runs), again as user `nobody` together with the
path attacks from test_inputs.py and test_tool_names.py (a link out of the root, loops of links).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from unprivileged import run_as_nobody, site_prelude

from imagekit import data_url, gradient, png_bytes

ROOT_SKIP = "root reads every file; test_as_nobody_too runs this again as user nobody"
PROJECT = Path(__file__).resolve().parents[2]
PATH_ATTACKS = ["tests/server/test_unprivileged_paths.py",  # with the path attacks whose files a user owns
                "tests/server/test_inputs.py::test_symlink_leading_out_of_root_is_refused",
                "tests/server/test_tool_names.py::test_a_loop_of_symbolic_links_under_the_root_is_a_clear_input_error"]


async def opened(client, source: str) -> str:
    """'opened', or the error the server gave for `source`."""
    result = await client.call_tool("open_session", {"source": source})
    return result.content[0].text if result.is_error else "opened"


@pytest.mark.skipif(os.getuid() == 0, reason=ROOT_SKIP)
async def test_files_and_folders_the_user_cannot_read_are_clear_input_errors(client, tmp_path):
    """Never 'failed unexpectedly': a locked file, a file, link or loop in a folder that may not be crossed."""
    (tmp_path / "locked.png").write_bytes(png_bytes(gradient()))
    (tmp_path / "locked.png").chmod(0)
    shut = tmp_path / "shut"
    shut.mkdir()
    (shut / "in.png").write_bytes(png_bytes(gradient()))
    os.symlink("loop", shut / "loop")
    os.symlink(shut / "in.png", tmp_path / "via.png")
    shut.chmod(0)
    try:
        for source in ("locked.png", "shut/in.png", "shut/loop", "via.png", str(shut / "in.png")):
            assert await opened(client, source) == f"Error executing tool open_session: source: cannot read " \
                                                   f"{source!r}: Permission denied"
    finally:
        shut.chmod(0o700)


@pytest.mark.skipif(os.getuid() == 0, reason=ROOT_SKIP)
async def test_a_folder_that_may_be_crossed_but_not_listed_is_crossed(make_app, tmp_path):
    """A root and a folder under it with search but no read permission (0311, like a 0711 home): the file is
    readable by this user, so the server reads it."""
    from mcp import Client

    root = tmp_path / "root"
    (root / "inner").mkdir(parents=True)
    (root / "inner" / "x.png").write_bytes(png_bytes(gradient()))
    for folder in (root / "inner", root):
        folder.chmod(0o311)
    try:
        async with Client(make_app(roots=[root]).mcp) as client:
            assert await opened(client, "inner/x.png") == "opened"
            assert await opened(client, data_url(gradient())) == "opened"
    finally:
        for folder in (root, root / "inner"):
            folder.chmod(0o700)


@pytest.mark.slow
def test_as_nobody_too():
    """Run as root, these cases and the path attacks again, under pytest as user `nobody`."""
    prelude = site_prelude()
    # -n 0: in this one process, which alone has the prelude's packages (a worker would start without them)
    done = run_as_nobody(["-c", prelude + "import pytest\nsys.exit(pytest.main(sys.argv[1:]))", "-q", "-n", "0",
                          "-p", "no:cacheprovider", "-p", "no:randomly", "-k", "not as_nobody_too", *PATH_ATTACKS],
                         timeout=240, cwd=str(PROJECT))
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]
