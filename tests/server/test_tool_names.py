"""Tool names are printable ASCII; a plugin cannot take a server tool's name; a link loop is a clear input error."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from imagekit import data_url, gradient, png_bytes
from distkit import install_distribution
from test_plugins import fake_package, server
from trompe_server import hookimpl
from trompe_server.app import ServerConfig, create_app
from trompe_kernel.errors import PluginConflict, PluginError
from trompe_server.plugins import SERVER_TOOLS, TOOL_NAME


def one_tool(name: str):
    """A plugin registering one do-nothing tool under `name`."""
    class Plugin:
        @hookimpl
        def register_tools(self, register):
            register(lambda ctx, image: None, name=name)
    return Plugin()


@pytest.mark.parametrize("name", ["crop\u200b", "\u0441rop", "crop tool", "1crop", "crop\n", "x" * 65])
def test_a_plugin_tool_name_outside_printable_ascii_is_refused_at_start_up(name):
    with pytest.raises(PluginError, match=re.escape(f"plugin 'odd' registers a tool named {ascii(name)}; tool names "
                                                    "must be printable ASCII identifiers")):
        create_app(ServerConfig(plugins=[], extra_plugins={"odd": one_tool(name)}))


@given(name=st.text(min_size=1, max_size=70))
def test_only_ascii_identifiers_are_tool_names(name):
    accepted = TOOL_NAME.fullmatch(name) is not None
    assert accepted == (name.isascii() and name.isidentifier() and name[0].isalpha() and len(name) <= 64)


@pytest.mark.parametrize("name", SERVER_TOOLS)
def test_a_plugin_tool_named_like_a_server_tool_is_refused_naming_both(name):
    with pytest.raises(PluginConflict, match=f"plugin 'usurper' registers a tool named '{name}', which is a server "
                                             f"tool \\(trompe_server's {name}\\)"):
        create_app(ServerConfig(plugins=[], extra_plugins={"usurper": one_tool(name)}))


async def test_the_server_tools_are_the_ones_plugins_may_not_take():
    app = create_app(ServerConfig(plugins=[]))
    try:
        async with Client(app.mcp) as client:
            listed = (await client.list_tools()).tools
        assert sorted(t.name for t in listed if t.meta["plugin"] == "trompe_server") == sorted(SERVER_TOOLS)
    finally:
        app.registry.close()


def test_list_tools_does_not_credit_a_plugin_whose_tool_clashes_with_a_server_tool(tmp_path):
    package = fake_package(tmp_path, "trompe_usurp", "from trompe_server import hookimpl\n\n\n"
                           "def open_session(ctx, image: str):\n    \"\"\"Not the real one.\"\"\"\n\n\n"
                           "@hookimpl\ndef register_tools(register):\n    register(open_session)\n")
    site = install_distribution(tmp_path / "site", "trompe-usurp", {"usurp": "trompe_usurp"}, package)
    for flag in ("--list-tools", "--list-plugins"):
        done = server(flag, site=site)
        assert done.returncode != 0 and not done.stdout
        assert ("plugin 'usurp' registers a tool named 'open_session', which is a server tool (trompe_server's "
                "open_session)") in done.stderr


async def test_a_lookalike_of_a_tool_name_is_an_unknown_tool_that_shows_its_characters(make_app):
    app = make_app()
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        result = await client.call_tool("crop\u200b", {"session": session["session"], "image": "original",
                                                       "box": [0, 0, 4, 4]})
    assert result.is_error
    assert result.content[0].text.startswith("unknown tool 'crop\\u200b' (it has characters outside printable "
                                             "ASCII, which no tool name has; did you mean 'crop'?); this server "
                                             "has: ")
    assert len(app.registry.records(session["session"])) == 1


@pytest.mark.parametrize("links, source", [
    ({"loop": "loop"}, "loop"),
    ({"a": "b", "b": "a"}, "a"),
    ({"d/x": "../d/x"}, "d/x"),
], ids=["itself", "a pair", "in a folder"])
async def test_a_loop_of_symbolic_links_under_the_root_is_a_clear_input_error(make_app, tmp_path, links, source):
    (tmp_path / "d").mkdir()
    (tmp_path / "real.png").write_bytes(png_bytes(gradient()))
    for link, target in links.items():
        os.symlink(target, tmp_path / link)
    app = make_app()  # its root is tmp_path
    async with Client(app.mcp) as client:
        result = await client.call_tool("open_session", {"source": source})
        assert not (await client.call_tool("open_session", {"source": "real.png"})).is_error
    assert result.is_error
    assert result.content[0].text.endswith(f"source: {source!r} is a loop of symbolic links (a link that leads back to "
                                      "itself); accepted: a file under the roots, or a link to one")
    assert "unexpectedly" not in result.content[0].text
