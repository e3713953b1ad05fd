"""Without --root, `trompe-server` never makes `/`, the home folder or a system folder its root (desktop clients
start it in `/`): it says so in one line and serves images sent inline only.

No rerun as `nobody`: the refusal is decided from the paths (working directory, HOME) before any file is opened,
and root, who may read every file, is the case where a permission error could not hide a missing refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from imagekit import data_url, gradient, png_bytes
from serverkit import SERVER, env_with
from trompe_server.roots import implicit_root

HOME = Path("/home/ada")


@pytest.mark.parametrize("cwd, root", [
    ("/", None),
    ("/home", None),  # above the home folder: every user's files
    ("/home/ada", None),
    ("/home/ada/project", "/home/ada/project"),
    ("/etc", None),
    ("/usr/share/icons", None),
    ("/var/lib", None),
    ("/root", None),  # another user's home is a system folder too
    ("/tmp/work", "/tmp/work"),
    ("/srv/data/photos", "/srv/data/photos"),
    ("/mnt/disk/project", "/mnt/disk/project"),
])
def test_the_working_directory_is_a_root_only_where_a_person_works(cwd, root):
    found, why = implicit_root(Path(cwd), HOME)
    assert found == (Path(root) if root else None) and bool(why) == (root is None)


def test_roots_home_folder_holds_its_projects():
    """As root, /root is the home folder: a project under it is a root, /root itself is not."""
    assert implicit_root(Path("/root/project"), Path("/root"))[0] == Path("/root/project")
    assert implicit_root(Path("/root"), Path("/root"))[0] is None


@pytest.mark.parametrize("where", ["/", "home"])
async def test_started_in_the_root_or_home_folder_it_serves_inline_images_only(tmp_path, where):
    """The attack: a client that opened the server in `/` could open any image the user can read by path."""
    home = tmp_path / "home"
    home.mkdir()
    photo = home / "private.png"
    photo.write_bytes(png_bytes(gradient()))
    cwd = "/" if where == "/" else str(home)
    params = StdioServerParameters(command=SERVER, cwd=cwd, env=env_with(HOME=str(home)))
    async with Client(params) as client:
        refused = await client.call_tool("open_session", {"source": str(photo)})
        assert refused.is_error and "this server opens no files by path" in refused.content[0].text
        assert "start the server with --root FOLDER" in refused.content[0].text
        inline = await client.call_tool("open_session", {"source": data_url(gradient())})
        assert not inline.is_error, inline.content[0].text


def test_the_start_up_line_says_how_to_pass_root(tmp_path, capfd, monkeypatch):
    from trompe_server.cli import build_parser, config_from_args

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert config_from_args(build_parser().parse_args([])).roots == []
    err = capfd.readouterr().err
    assert err == (f"trompe-server: no --root given and the working directory {tmp_path} is the home folder or "
                   "above it: serving images sent inline only; to open files by path, start it with --root FOLDER "
                   "(repeatable), e.g. --root ~/Pictures\n")
    assert config_from_args(build_parser().parse_args(["--root", str(tmp_path)])).roots == [tmp_path.resolve()]
    assert capfd.readouterr().err == ""
