"""Tool descriptions are made once per signature and shared by every app (tool_schemas.py): each app's tools
must still call that app's own registry, and describe themselves exactly as a freshly made app's do."""

from __future__ import annotations

from imagekit import data_url, gradient
from mcp import Client

from trompe_server.app import create_app


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
