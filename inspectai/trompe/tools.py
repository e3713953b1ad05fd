"""trompe's image tools as Inspect tools, for any Inspect agent: each call goes to trompe's MCP server with the
sample's session filled in (the model sees image ids only), and each result image comes back as Inspect image
content after its id."""

from __future__ import annotations

import base64
from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, Content, ContentImage, ContentText
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolError

from trompe_agents.illusion.agent import TASK_TAGS, answer_schema, prepare_images
from trompe_agents.illusion.router import TASK_TOOLS
from trompe_agents.loop import answer_instruction, introduction
from trompe_agents.messages import ToolSchema
from trompe_agents.toolclient import ToolClient

from .names import registered
from .samples import KEY, answer_type, prompt_content, trompe_sample
from .schemas import tool_params
from .solvers import name_list, server_choice

SYSTEM = ("You answer questions about images. You can call image tools: they never change an image, each "
          "result is a new image with its own id, and you see every result.")


def result_content(text: str, images: list[tuple[str, bytes, str]]) -> list[Content]:
    """A tool result as Inspect content: its text line, then each image after its id."""
    content: list[Content] = [ContentText(text=text or "(no output)")]
    for image_id, data, mime in images:
        content += [ContentText(text=f"{image_id}:"),
                    ContentImage(image=f"data:{mime};base64,{base64.b64encode(data).decode()}")]
    return content


def image_tool(client: ToolClient, session: str, schema: ToolSchema) -> Tool:
    """One trompe tool bound to one session; a refused call is a ToolError, which the model reads."""

    async def execute(**arguments: Any) -> list[Content]:
        result = await client.call(session, schema.name, arguments)
        if result.is_error:
            raise ToolError(result.text)
        return result_content(result.text, [(i.id, i.data, i.mime_type) for i in result.images])

    return ToolDef(execute, name=schema.name, description=schema.description,
                   parameters=tool_params(schema.parameters)).as_tool()


async def image_tools(client: ToolClient, session: str, tags: list[str] | None = None,
                      allow: list[str] | None = None) -> list[Tool]:
    """The server's tools with one of `tags` (and list/view), limited to `allow`, bound to `session`."""
    return [image_tool(client, session, s) for s in await client.list_tools(tags, allow)]


@solver(name=registered("tool_loop"))
def tool_loop(max_rounds: int = 10, tools: str | list[str] | None = None, allow: str | list[str] | None = None,
              system: str | None = None, server_url: str | None = None, server_cmd: str | None = None,
              token: str | None = None) -> Solver:
    """Inspect's own generate loop with trompe's tools on the sample's images, for up to `max_rounds` rounds.

    The model is asked for the illusion agent's JSON answer; the scorer also reads free text the benchmark's way.
    tools/allow: as the illusion agent's (default: the task's tags and the paper's tool table).
    """
    choice = server_choice(server_url, server_cmd, token)
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = trompe_sample(state.metadata)
        task = state.metadata[KEY]["task"]
        tags = name_list(tools) or TASK_TAGS[task]
        offered = name_list(allow) or (None if tools else list(TASK_TOOLS[task]))
        schema = answer_schema(task, sample.choices, answer_type(state.metadata[KEY]))
        async with choice.client() as client:
            images, _ = prepare_images(sample.images, normalize=False) if not sample.error else ({}, [])
            info = await client.open_session(images) if images else None
            try:
                state.tools = await image_tools(client, info.id, tags, offered) if info else []
                intro = ContentText(text=introduction(info.sizes if info else {}))
                state.messages = [ChatMessageSystem(content=f"{system or SYSTEM}\n\n{answer_instruction(schema)}"),
                                  ChatMessageUser(content=[intro, *prompt_content(sample, inline=True)])]
                for _ in range(max_rounds):
                    state = await generate(state, tool_calls="single")
                    if not state.output.message.tool_calls or state.completed:
                        break
            finally:
                if info:
                    await client.close_session(info.id)
        return state

    return solve
