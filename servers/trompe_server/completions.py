"""MCP completions for the ids a person types into a client: session ids and image ids.

Session ids are completed only for a server's one local client (stdio, in-process): over HTTP a session id is a
capability (app.client_key), so listing the ids would hand one client another's sessions. Image ids are completed
for the session the request names, which the caller already holds.
"""

from __future__ import annotations

from mcp.types import CompleteRequestParams, Completion, PromptReference, ResourceTemplateReference

from .errors import SessionGone, ToolInputError
from .registry import Registry

IMAGE_TEMPLATE = "image://{session}/{image}"
SESSION_PROMPTS = {"illusion_rescue"}  # prompts with a `session` argument
MAX_VALUES = 100  # the protocol's most values in one completion


def complete(registry: Registry, params: CompleteRequestParams, local: bool) -> Completion:
    """The ids starting with what was typed, for the image resource template and the prompts that take a session."""
    ref, argument = params.ref, params.argument
    image_template = isinstance(ref, ResourceTemplateReference) and ref.uri == IMAGE_TEMPLATE
    session_prompt = isinstance(ref, PromptReference) and ref.name in SESSION_PROMPTS
    if argument.name == "session" and (image_template or session_prompt):
        known = registry.session_ids() if local else []
    elif argument.name == "image" and image_template:
        session = ((params.context.arguments if params.context else None) or {}).get("session", "")
        try:
            known = [record.id for record in registry.records(session)]
        except (ToolInputError, SessionGone):  # no such session (gone, or a typo): nothing to offer
            known = []
    else:
        known = []
    values = sorted(value for value in known if value.startswith(argument.value))
    return Completion(values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES)
