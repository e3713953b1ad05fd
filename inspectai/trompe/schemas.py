"""trompe's tool schemas (JSON Schema from the MCP server) as Inspect's ToolInfo, which has no `$ref`."""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import ToolInfo, ToolParams

from trompe_agents.messages import ToolSchema


def inline_refs(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """The schema with every local `$ref` replaced by its definition (pydantic puts nested models in `$defs`)."""
    if isinstance(schema, list):
        return [inline_refs(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    defs = {**(defs or {}), **schema.get("$defs", {})}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name not in defs:
            raise ValueError(f"tool schema: $ref {ref!r} has no definition")
        merged = {**defs[name], **{k: v for k, v in schema.items() if k != "$ref"}}
        return inline_refs(merged, defs)
    return {k: inline_refs(v, defs) for k, v in schema.items() if k != "$defs"}


def tool_params(parameters: dict[str, Any]) -> ToolParams:
    """Inspect's parameter model of one tool; a parameter without a description is described by its name."""
    params = ToolParams.model_validate(inline_refs(parameters))
    for name, param in params.properties.items():
        param.description = param.description or name
    return params


def tool_info(schema: ToolSchema) -> ToolInfo:
    return ToolInfo(name=schema.name, description=schema.description, parameters=tool_params(schema.parameters))
