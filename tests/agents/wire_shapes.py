"""The request bodies the vendors document, as JSON Schemas that refuse every field, type or value the page does not
list (`additionalProperties: false` at each level), so a captured request is compared with the page field by field.

Only the parts of each API trompe can send are written out; free-form values (a tool's JSON Schema, tool-call
arguments) are checked as objects. Sources, as of the API versions the pinned SDKs speak:

- Anthropic Messages, `anthropic-version: 2026-10-21`: platform.claude.com/docs/en/api/messages/create (content
  blocks, `tool_result` with image blocks, `thinking` configs, `output_config.effort` / `.format`, `cache_control`),
  platform.claude.com/docs/en/build-with-claude/extended-thinking and .../preserved-thinking (thinking blocks sent
  back with their `signature`).
- OpenAI Responses: developers.openai.com/api/reference/resources/responses/methods/create (input items
  `function_call` / `function_call_output` whose `output` may hold `input_image`, `reasoning.effort`,
  `text.format` json_schema, flat function tools).
- OpenAI Chat Completions: developers.openai.com/api/reference/resources/chat/subresources/completions/methods/create
  (message roles, `tool` messages of text only, `image_url` parts, `reasoning_effort`, `response_format`).
- Gemini generateContent: ai.google.dev/api/generate-content#request-body and ai.google.dev/api/caching#Content
  (Part's one data field, `functionResponse.parts[].inlineData` for Gemini 3, `thoughtSignature`,
  `generationConfig.thinkingConfig.thinkingLevel`, `responseJsonSchema`). The API parses proto JSON, whose parsers
  accept the lowerCamelCase name and the original snake_case name alike (protobuf.dev/programming-guides/json),
  and google-genai sends both styles: Gemini's schema takes either name.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema

Schema = dict[str, Any]
STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
NUM: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
OBJECT: Schema = {"type": "object"}  # free-form: a JSON Schema, tool arguments, metadata
STATUS: Schema = {"enum": ["in_progress", "completed", "incomplete"]}


def const(value: Any) -> Schema:
    return {"const": value}


def enum(*values: Any) -> Schema:
    return {"enum": list(values)}


def array(items: Schema, least: int = 0) -> Schema:
    return {"type": "array", "items": items, "minItems": least}


def either(*schemas: Schema) -> Schema:
    return {"anyOf": list(schemas)}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def obj(required: dict[str, Schema], optional: dict[str, Schema] | None = None, *, proto: bool = False,
        one_of: tuple[str, ...] = ()) -> Schema:
    """An object with exactly these fields (`proto`: each also under its snake_case name; `one_of`: exactly one of
    these optional fields, as a protobuf `oneof`)."""
    names = (lambda n: sorted({n, snake(n)})) if proto else (lambda n: [n])
    fields = {**required, **(optional or {})}
    schema: Schema = {"type": "object", "additionalProperties": False,
                      "properties": {alias: s for name, s in fields.items() for alias in names(name)},
                      "allOf": [{"anyOf": [{"required": [alias]} for alias in names(name)]} for name in required]}
    if one_of:
        schema["oneOf"] = [{"required": [alias]} for name in one_of for alias in names(name)]
    return schema


# Anthropic Messages
CACHE = obj({"type": const("ephemeral")}, {"ttl": enum("5m", "1h")})
A_TEXT = obj({"type": const("text"), "text": STR}, {"cache_control": CACHE, "citations": {"type": ["array", "null"]}})
A_IMAGE = obj({"type": const("image"),
               "source": either(obj({"type": const("base64"), "data": STR,
                                     "media_type": enum("image/jpeg", "image/png", "image/gif", "image/webp")}),
                                obj({"type": const("url"), "url": STR}))}, {"cache_control": CACHE})
A_TOOL_USE = obj({"type": const("tool_use"), "id": STR, "name": STR, "input": OBJECT}, {"cache_control": CACHE})
A_TOOL_RESULT = obj({"type": const("tool_result"), "tool_use_id": STR},
                    {"content": either(STR, array(either(A_TEXT, A_IMAGE))), "is_error": BOOL, "cache_control": CACHE})
A_THINKING = obj({"type": const("thinking"), "thinking": STR, "signature": STR})
A_REDACTED = obj({"type": const("redacted_thinking"), "data": STR})
DISPLAY = enum("summarized", "omitted")
ANTHROPIC = obj(
    {"model": STR, "max_tokens": {"type": "integer", "minimum": 1},
     "messages": array(either(
         obj({"role": const("user"), "content": either(STR, array(either(A_TEXT, A_IMAGE, A_TOOL_RESULT), 1))}),
         obj({"role": const("assistant"),
              "content": either(STR, array(either(A_TEXT, A_TOOL_USE, A_THINKING, A_REDACTED), 1))})), 1)},
    {"system": either(STR, array(A_TEXT)),
     "tools": array(obj({"name": STR, "input_schema": {"type": "object", "properties": {"type": const("object")},
                                                        "required": ["type"]}},
                        {"description": STR, "cache_control": CACHE, "strict": BOOL})),
     "tool_choice": obj({"type": enum("auto", "any", "none", "tool")},
                        {"name": STR, "disable_parallel_tool_use": BOOL}),
     "thinking": either(obj({"type": const("enabled"), "budget_tokens": {"type": "integer", "minimum": 1024}},
                            {"display": DISPLAY}),
                        obj({"type": const("adaptive")}, {"display": DISPLAY}),
                        obj({"type": const("disabled")}), obj({"type": const("between_tools")})),
     "output_config": obj({}, {"effort": enum("low", "medium", "high", "xhigh", "max"),
                               "format": obj({"type": const("json_schema"), "schema": OBJECT})}),
     "cache_control": CACHE, "temperature": NUM, "top_p": NUM, "top_k": INT, "stop_sequences": array(STR),
     "metadata": OBJECT, "service_tier": enum("auto", "standard_only"), "stream": BOOL})

# OpenAI Responses
R_TEXT = obj({"type": const("input_text"), "text": STR})
R_IMAGE = obj({"type": const("input_image")}, {"image_url": {"type": "string", "pattern": r"^(data:image/|https?://)"},
                                               "file_id": STR, "detail": enum("low", "high", "auto", "original")})
R_CONTENT = either(STR, array(either(R_TEXT, R_IMAGE)))
RESPONSES = obj(
    {"model": STR,
     "input": either(STR, array(either(
         obj({"role": enum("user", "system", "developer", "assistant"), "content": R_CONTENT},
             {"type": const("message")}),
         obj({"type": const("message"), "role": const("assistant"),
              "content": array(either(obj({"type": const("output_text"), "text": STR},
                                          {"annotations": array(OBJECT), "logprobs": array(OBJECT)}),
                                      obj({"type": const("refusal"), "refusal": STR})))},
             {"id": STR, "status": STATUS}),
         obj({"type": const("function_call"), "call_id": STR, "name": STR, "arguments": STR},
             {"id": STR, "status": STATUS, "async": BOOL, "namespace": STR, "caller": OBJECT}),
         obj({"type": const("function_call_output"), "call_id": STR, "output": R_CONTENT},
             {"id": STR, "status": STATUS}),
         obj({"type": const("reasoning"), "summary": array(obj({"type": const("summary_text"), "text": STR}))},
             {"id": STR, "encrypted_content": {"type": ["string", "null"]}, "status": STATUS,
              "content": array(obj({"type": const("reasoning_text"), "text": STR}))}))))},
    {"instructions": STR, "max_output_tokens": INT,
     "reasoning": obj({}, {"effort": enum("none", "minimal", "low", "medium", "high", "xhigh", "max"),
                           "summary": enum("auto", "concise", "detailed")}),
     "text": obj({}, {"format": either(obj({"type": const("json_schema"), "name": STR, "schema": OBJECT},
                                           {"strict": BOOL, "description": STR}),
                                       obj({"type": const("text")}), obj({"type": const("json_object")})),
                      "verbosity": enum("low", "medium", "high")}),
     "tools": array(obj({"type": const("function"), "name": STR, "parameters": {"type": ["object", "null"]},
                         "strict": {"type": ["boolean", "null"]}}, {"description": STR})),
     "tool_choice": either(enum("auto", "required", "none"), obj({"type": const("function"), "name": STR})),
     "parallel_tool_calls": BOOL, "prompt_cache_key": STR, "prompt_cache_retention": enum("in-memory", "24h"),
     "service_tier": enum("auto", "default", "flex", "scale", "priority"), "store": BOOL, "temperature": NUM,
     "top_p": NUM, "include": array(STR), "metadata": OBJECT, "previous_response_id": STR})

# OpenAI Chat Completions
C_TEXT = obj({"type": const("text"), "text": STR})
C_IMAGE = obj({"type": const("image_url"),
               "image_url": obj({"url": STR}, {"detail": enum("auto", "low", "high")})})
CHAT = obj(
    {"model": STR,
     "messages": array(either(
         obj({"role": enum("system", "developer"), "content": either(STR, array(C_TEXT))}, {"name": STR}),
         obj({"role": const("user"), "content": either(STR, array(either(C_TEXT, C_IMAGE)))}, {"name": STR}),
         obj({"role": const("assistant")},
             {"content": either(STR, {"type": "null"}, array(C_TEXT)), "name": STR,
              "refusal": {"type": ["string", "null"]},
              "tool_calls": array(obj({"id": STR, "type": const("function"),
                                       "function": obj({"name": STR, "arguments": STR})}))}),
         obj({"role": const("tool"), "content": either(STR, array(C_TEXT)), "tool_call_id": STR})), 1)},
    {"max_completion_tokens": INT, "max_tokens": INT,
     "reasoning_effort": enum("none", "minimal", "low", "medium", "high", "xhigh", "max"),
     "response_format": either(obj({"type": const("json_schema"),
                                    "json_schema": obj({"name": STR}, {"schema": OBJECT, "strict": BOOL,
                                                                        "description": STR})}),
                               obj({"type": const("text")}), obj({"type": const("json_object")})),
     "tools": array(obj({"type": const("function"),
                         "function": obj({"name": STR}, {"description": STR, "parameters": OBJECT,
                                                         "strict": {"type": ["boolean", "null"]}})})),
     "tool_choice": either(enum("auto", "required", "none"),
                           obj({"type": const("function"), "function": obj({"name": STR})})),
     "parallel_tool_calls": BOOL, "temperature": NUM, "top_p": NUM, "prompt_cache_key": STR,
     "service_tier": enum("auto", "default", "flex", "scale", "priority"), "seed": INT, "stop": either(STR, array(STR)),
     "store": BOOL, "metadata": OBJECT, "n": INT})

# Gemini generateContent
G_BLOB = obj({"mimeType": STR, "data": STR}, proto=True)
G_PART = obj({}, {"text": STR, "inlineData": G_BLOB, "fileData": obj({"fileUri": STR}, {"mimeType": STR}, proto=True),
                  "functionCall": obj({"name": STR}, {"id": STR, "args": OBJECT}, proto=True),
                  "functionResponse": obj({"name": STR, "response": OBJECT},
                                          {"id": STR, "willContinue": BOOL,
                                           "parts": array(obj({}, {"inlineData": G_BLOB}, proto=True,
                                                              one_of=("inlineData",)))}, proto=True),
                  "thought": BOOL, "thoughtSignature": STR},
             proto=True, one_of=("text", "inlineData", "fileData", "functionCall", "functionResponse"))
G_CONTENT = obj({"parts": array(G_PART, 1)}, {"role": enum("user", "model")}, proto=True)
GEMINI = obj(
    {"contents": array(G_CONTENT, 1)},
    {"systemInstruction": G_CONTENT,
     "tools": array(obj({}, {"functionDeclarations": array(obj(
         {"name": STR}, {"description": STR, "parameters": OBJECT, "parametersJsonSchema": OBJECT,
                         "response": OBJECT, "responseJsonSchema": OBJECT}, proto=True))}, proto=True)),
     "toolConfig": obj({}, {"functionCallingConfig": obj({}, {"mode": enum("AUTO", "ANY", "NONE", "VALIDATED"),
                                                             "allowedFunctionNames": array(STR)}, proto=True)},
                       proto=True),
     "generationConfig": obj({}, {
         "maxOutputTokens": INT, "temperature": NUM, "topP": NUM, "topK": INT, "seed": INT, "candidateCount": INT,
         "stopSequences": array(STR), "responseMimeType": STR, "responseSchema": OBJECT, "responseJsonSchema": OBJECT,
         "thinkingConfig": obj({}, {"includeThoughts": BOOL, "thinkingBudget": INT,
                                    "thinkingLevel": enum("MINIMAL", "LOW", "MEDIUM", "HIGH")}, proto=True)},
         proto=True),
     "safetySettings": array(OBJECT), "cachedContent": STR}, proto=True)

DOCUMENTED = {"anthropic": ANTHROPIC, "responses": RESPONSES, "chat": CHAT, "gemini": GEMINI}


def undocumented(kind: str, body: dict[str, Any]) -> str | None:
    """Where `body` departs from the vendor's documented request (the deepest mismatch), or None if it matches."""
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(DOCUMENTED[kind]).iter_errors(body))
    if error is None:
        return None
    return f"{'/'.join(map(str, error.absolute_path)) or '(body)'}: {error.message[:300]}"
