"""The MCP App (MCP Apps extension, spec 2026-01-26) through the official `mcp` client and as a browser draws it:
`list_images` names the `ui://` view in `_meta.ui.resourceUri`, the view is a listed resource of the MCP App mime
type, a host without Apps gets `list_images` as before, and in headless Chromium, inside a small host page that
speaks the extension's postMessage protocol, the view shows a session's three-step lineage and opens an image at
full size; docs/server.md's screenshot of it is that render (TROMPE_UPDATE_SCREENSHOTS=1 refreshes it)."""

from __future__ import annotations

import json
import os
import re
from html import escape, unescape
from pathlib import Path
from typing import Any

import numpy as np
from mcp import Client
from PIL import Image

from browserkit import dom_after_scripts, screenshot
from imagekit import data_url, gradient
from trompe_server.lineage_app import APP_MIME_TYPE, LINEAGE_URI, lineage_view

DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "mcp-app-lineage.png"
LAYOUT_TOLERANCE = 2.0  # mean grey difference (of 255) at 1/10 scale: a fresh render 0.3, a 20 px shift 13, the
#                         last image blank 4.3

# A host as the spec has one: answers ui/initialize, sends the tool's input and result once the view says it is
# initialized, serves the view's resources/read from what the test read through the MCP client, and sizes the
# frame as the view asks. Once every picture has loaded it writes what the view shows onto its own <body> (the
# test reads it with --dump-dom); with #open=ID it then clicks that image and records the full-size view.
HOST = """<!doctype html><html><head><meta charset="utf-8"><title>test host</title></head>
<body style="margin:0;font-family:sans-serif">
<iframe id="view" sandbox="allow-scripts allow-same-origin" style="border:1px solid #ccc;width:780px;height:300px"
 srcdoc="{view}"></iframe>
<script>
const RESULT = {result}, RESOURCES = {resources}, TOOL = {tool};
const frame = document.getElementById("view");
const send = message => frame.contentWindow.postMessage(Object.assign({{jsonrpc: "2.0"}}, message), "*");
window.addEventListener("message", event => {{
  if (event.source !== frame.contentWindow) return;
  const m = event.data;
  if (m.method === "ui/initialize") send({{id: m.id, result: {{protocolVersion: "2026-01-26",
      hostInfo: {{name: "trompe-test-host", version: "1"}}, hostCapabilities: {{serverResources: {{}}}},
      hostContext: {{theme: "light", displayMode: "inline", toolInfo: {{tool: TOOL}}}}}}}});
  else if (m.method === "ui/notifications/initialized") {{
    const session = RESULT.structuredContent.session;
    send({{method: "ui/notifications/tool-input", params: {{arguments: {{session: session}}}}}});
    send({{method: "ui/notifications/tool-result", params: RESULT}});
  }} else if (m.method === "resources/read") {{
    const found = RESOURCES[m.params.uri];
    send(found ? {{id: m.id, result: found}} : {{id: m.id, error: {{code: -32002, message: "not found"}}}});
  }} else if (m.method === "ui/notifications/size-changed") frame.style.height = m.params.height + "px";
}});
function report() {{
  const view = frame.contentDocument, body = document.body.dataset;
  const pictures = view ? [...view.querySelectorAll(".step img")] : [];
  if (pictures.length < RESULT.structuredContent.images.length || !pictures.every(p => p.complete)) {{
    setTimeout(report, 50);
    return;
  }}
  body.steps = JSON.stringify([...view.querySelectorAll(".step")].map(step => ({{
    image: step.dataset.image, caption: step.querySelector("figcaption").innerText.split("\\n"),
    shown: [step.querySelector("img").naturalWidth, step.querySelector("img").naturalHeight]}})));
  body.status = view.getElementById("status").textContent;
  const open = location.hash.startsWith("#open=") && location.hash.slice(6);
  if (open) {{
    view.querySelector(`.step[data-image="${{open}}"] button`).click();
    const full = view.getElementById("full-image");
    const done = () => full.complete ? (body.full = JSON.stringify({{image: full.dataset.image,
        size: [full.naturalWidth, full.naturalHeight], drawn: [full.width, full.height],
        visible: !view.getElementById("full").hidden, caption: view.getElementById("full-caption").textContent}}))
      : setTimeout(done, 50);
    done();
  }}
}}
report();
</script></body></html>"""


def wire(model: Any) -> dict[str, Any]:
    """A result as it travels in JSON-RPC (camelCase, no nulls), which is what a host hands the view."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def three_steps(client: Client) -> tuple[str, Any]:
    """A session with a three-step lineage: a line drawn on the original, a crop of that, a box on the crop."""
    opened = await client.call_tool("open_session", {"source": data_url(gradient(240, 160))})
    session = opened.structured_content["session"]
    for name, arguments in (("draw_line", {"image": "original", "start": [10, 150], "end": [230, 10]}),
                            ("crop", {"image": "img_001", "box": [40, 20, 200, 140]}),
                            ("draw_rectangle", {"image": "img_002", "box": [30, 30, 120, 90]})):
        result = await client.call_tool(name, {"session": session, **arguments})
        assert not result.is_error, result.content[0].text
    return session, await client.call_tool("list_images", {"session": session})


async def host_page(client: Client, folder: Path) -> tuple[Path, dict[str, Any]]:
    """The test host page around the view, holding list_images' result and every image as resources/read gave
    it; and that result's structured content."""
    session, listed = await three_steps(client)
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    view = (await client.read_resource(LINEAGE_URI)).contents[0].text
    resources = {}
    for image in listed.structured_content["images"]:
        uri = f"image://{session}/{image['id']}"
        resources[uri] = wire(await client.read_resource(uri))
    page = folder / "host.html"
    page.write_text(HOST.format(view=escape(view, quote=True), result=json.dumps(wire(listed)),
                                resources=json.dumps(resources), tool=json.dumps(wire(tools["list_images"]))))
    return page, listed.structured_content


def shown(page: Path, fragment: str = "") -> dict[str, Any]:
    """What the host page (opened at `#fragment`) recorded of the view, its <body> data-* attributes, after
    Chromium ran it."""
    body = re.search(r"<body[^>]*>", dom_after_scripts(page.as_uri() + fragment)).group(0)
    return {key: json.loads(unescape(value)) if value[:1] in "[{" else unescape(value)
            for key, value in re.findall(r'data-(\w+)="([^"]*)"', body)}


async def test_list_images_names_the_app_and_the_app_is_a_listed_mcp_app_resource(client):
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["list_images"].meta["ui"] == {"resourceUri": LINEAGE_URI}
    assert [name for name, tool in tools.items() if tool.meta and "ui" in tool.meta] == ["list_images"]
    listed = {str(resource.uri): resource for resource in (await client.list_resources()).resources}
    assert listed[LINEAGE_URI].mime_type == APP_MIME_TYPE == "text/html;profile=mcp-app"
    assert listed[LINEAGE_URI].meta == {"ui": {"prefersBorder": True}}
    [content] = (await client.read_resource(LINEAGE_URI)).contents
    assert content.mime_type == APP_MIME_TYPE and content.text == lineage_view()
    assert content.text.startswith("<!DOCTYPE html>") and "ui/initialize" in content.text
    assert not re.search(r"(?:src|href)=['\"]https?:", content.text)  # nothing from the network: default CSP holds


async def test_a_host_without_apps_gets_list_images_as_before(client):
    session, listed = await three_steps(client)
    assert [content.type for content in listed.content] == ["text"]
    assert listed.content[0].text.splitlines() == [
        "original 240x160 input", "img_001 240x160 draw_line of original", "img_002 160x120 crop of img_001",
        "img_003 160x120 draw_rectangle of img_002"]
    assert [image["parents"] for image in listed.structured_content["images"]] == [[], ["original"], ["img_001"],
                                                                                   ["img_002"]]
    assert listed.structured_content["session"] == session


async def test_the_app_shows_a_three_step_lineage_and_opens_an_image_full_size(client, tmp_path):
    page, listing = await host_page(client, tmp_path)
    seen = shown(page)
    assert seen["status"].startswith("4 images")
    steps = seen["steps"]
    assert [step["image"] for step in steps] == ["original", "img_001", "img_002", "img_003"]
    for step, image in zip(steps, listing["images"]):
        assert step["shown"] == [image["width"], image["height"]]  # the picture read through the host
        assert step["caption"][:3] == [image["id"], f"{image['width']}\u00d7{image['height']}", image["operation"]]
        *arguments, parents = step["caption"][3:]
        assert dict((name, json.loads(value)) for name, value in (line.split(" = ", 1) for line in arguments)) == {
            name: value for name, value in image["arguments"].items() if value is not None}  # as recorded
        assert parents == (f"from {', '.join(image['parents'])}" if image["parents"] else "input image")
    assert "box = [40,20,200,140]" in steps[2]["caption"] and "from img_001" in steps[2]["caption"]

    opened = shown(page, "#open=img_003")["full"]
    assert opened == {"image": "img_003", "size": [160, 120], "drawn": [160, 120], "visible": True,
                      "caption": "img_003 (160\u00d7120): draw_rectangle of img_002"}

    picture = Image.open(screenshot(page, tmp_path / "lineage.png", 800, 420)).convert("RGB")
    assert len(picture.getcolors(1 << 20)) > 50  # the gradients and captions are drawn, not a blank frame
    keep_docs_screenshot_fresh(picture)


def keep_docs_screenshot_fresh(picture: Image.Image) -> None:
    """docs/server.md's screenshot is this render: the same layout (compared at 1/10 scale in grey, where font
    hinting and a session id's letters vanish); TROMPE_UPDATE_SCREENSHOTS=1 writes the fresh one in its place."""
    if os.environ.get("TROMPE_UPDATE_SCREENSHOTS") == "1":
        picture.save(DOCS_SCREENSHOT, optimize=True)
    documented = Image.open(DOCS_SCREENSHOT).convert("RGB")
    assert documented.size == picture.size
    small = [np.asarray(each.convert("L").resize((80, 42), Image.Resampling.BOX), dtype=float)
             for each in (documented, picture)]
    differs = np.abs(small[0] - small[1]).mean()
    assert differs < LAYOUT_TOLERANCE, (f"{DOCS_SCREENSHOT} no longer shows what the app draws (differs by "
                                        f"{differs:.1f}); rerun this test with TROMPE_UPDATE_SCREENSHOTS=1")
