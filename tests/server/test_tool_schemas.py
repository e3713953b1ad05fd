"""Tool descriptions are made once per signature and shared by every app (tool_schemas.py): each app's tools
must still call that app's own registry, describe themselves exactly as the SDK would, and keep no app alive.

Each test starts from an empty cache (`cold`): the first app of a process is the one that makes them."""

from __future__ import annotations

import gc
import weakref

import pytest
from imagekit import data_url, gradient
from mcp import Client
from mcp.server.mcpserver import MCPServer

from trompe_server import hookimpl, tool_schemas
from trompe_server.app import ServerConfig, create_app


@pytest.fixture(autouse=True)
def cold(monkeypatch):
    monkeypatch.setattr(tool_schemas, "_MADE", {})


async def listed(server: MCPServer) -> list[dict]:
    async with Client(server) as client:
        return [tool.model_dump() for tool in (await client.list_tools()).tools]


async def test_apps_made_one_after_another_share_descriptions_but_each_calls_its_own_registry():
    first, second = create_app(), create_app()
    async with Client(first.mcp) as a, Client(second.mcp) as b:
        assert [t.model_dump() for t in (await a.list_tools()).tools] == \
            [t.model_dump() for t in (await b.list_tools()).tools]
        opened = await a.call_tool("open_session", {"source": data_url(gradient(32, 24))})
        session = opened.structured_content["session"]
        cropped = await a.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 8, 8]})
        assert not cropped.is_error and cropped.structured_content["image"] == "img_001"
        elsewhere = await b.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 8, 8]})
        assert elsewhere.is_error and session in elsewhere.content[0].text
    assert [r.id for r in first.registry.records(session)] == ["original", "img_001"]
    first.registry.close()
    second.registry.close()


async def test_the_listing_is_what_the_sdk_makes_and_a_second_app_makes_nothing_again(monkeypatch):
    """Every tool listed exactly as the SDK's own Tool.from_function describes it, given the same handler and
    details; a second app calls it not once, which is the point of the cache."""
    made = []
    sdk = tool_schemas.Tool.from_function

    def counting(fn, **details):
        made.append((fn, details))
        return sdk(fn, **details)

    monkeypatch.setattr(tool_schemas.Tool, "from_function", counting)
    first = create_app(ServerConfig(plugins=["draw", "analysis"]))
    tools = await listed(first.mcp)
    assert tools == await listed(MCPServer("sdk", tools=[sdk(fn, **details) for fn, details in made]))
    assert len(made) == len(tools) > 5  # one description per tool: the session tools and the plugins'
    second = create_app(ServerConfig(plugins=["draw", "analysis"]))
    assert len(made) == len(tools) and await listed(second.mcp) == tools
    first.registry.close()
    second.registry.close()


async def test_one_function_registered_under_two_names_is_two_tools_each_with_its_own_details():
    def stamp(ctx, image: str) -> str:
        """Say which image it was given."""
        return f"got {image}"

    class Twice:
        @hookimpl
        def register_tools(self, register):
            register(stamp, tags=["first"], name="stamp_a")
            register(stamp, tags=["second"], name="stamp_b")

    app = create_app(ServerConfig(plugins=[], extra_plugins={"twice": Twice()}))
    tools = {tool["name"]: tool for tool in await listed(app.mcp)}
    assert (tools["stamp_a"]["meta"]["tags"], tools["stamp_b"]["meta"]["tags"]) == (["first"], ["second"])
    app.registry.close()


def test_an_app_let_go_is_freed_though_its_descriptions_stay():
    """The cache keeps descriptions, never a handler: a handler holds its app, registry and images."""
    app = create_app()
    gone = weakref.ref(app)
    app.registry.close()
    del app
    gc.collect()
    assert gone() is None and tool_schemas._MADE


async def test_a_plugin_tool_tells_clients_it_adds_an_image_and_reaches_nothing_outside():
    """The MCP annotations clients act on (whether to ask before a call): a plugin tool is neither read-only (it
    adds an image) nor destructive (it changes none), not idempotent (each call adds another), not open-world."""
    app = create_app(ServerConfig(plugins=["draw", "analysis"]))
    hints = {"read_only_hint": False, "destructive_hint": False, "idempotent_hint": False, "open_world_hint": False}
    tools = [tool for tool in await listed(app.mcp) if tool["meta"]["plugin"] != "trompe_server"]
    assert len(tools) > 5 and all(
        {key: value for key, value in (tool["annotations"] or {}).items() if value is not None} == hints
        for tool in tools)
    app.registry.close()


async def test_two_apps_whose_plugins_give_one_tool_name_different_arguments_each_describe_their_own():
    def tool_with(argument: str):
        namespace: dict = {}
        exec(f"def probe(ctx, image: str, {argument}: int = 1) -> str:\n    'Probe.'\n    return image", namespace)

        class Plugin:
            @hookimpl
            def register_tools(self, register):
                register(namespace["probe"], tags=["probe"])
        return Plugin()

    schemas = []
    for argument in ("left", "right"):
        app = create_app(ServerConfig(plugins=[], extra_plugins={"p": tool_with(argument)}))
        schemas.append(next(t["input_schema"] for t in await listed(app.mcp) if t["name"] == "probe"))
        app.registry.close()
    assert [sorted(schema["properties"]) for schema in schemas] == [["image", "left", "session"],
                                                                    ["image", "right", "session"]]
