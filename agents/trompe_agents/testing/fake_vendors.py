"""Loopback HTTP servers that speak the vendors' wire formats, so the real SDKs can be tested offline.

One `FakeVendor` answers like Anthropic Messages (`"anthropic"`), OpenAI Responses (`"responses"`), OpenAI Chat
Completions (`"chat"`) or Gemini generateContent (`"gemini"`). A *script* says what the model does; the server
renders it in the vendor's format, records every request, and can inject faults::

    from trompe_agents.testing import FakeVendor, call, final

    # a list: reply n is script[n] (the last one repeats)
    with FakeVendor("anthropic", [call("crop", image="original", box=[0, 0, 8, 8]), final('{"answer": "yes"}')]) as fv:
        backend = ClaudeBackend(BackendOptions(model="m", base_url=fv.base_url, api_key="test"))
        ...
        fv.requests[1].json         # the second request body, as the SDK sent it
        fv.requests[1].headers      # lower-case header names

    # a callable: script(request_json, n) -> Reply or list of Reply; n counts the requests that reached the script
    def script(body, n):
        return final("done") if tool_results(fv.kind, body) else call("crop", image="original", box=[0, 0, 8, 8])

Replies: `call(name, **args)` (one tool call; `call(name, raw='{"bad')` sends malformed arguments),
`final(text)`, or `Reply(text=..., calls=[Call(...), ...], usage=Tokens(...), thought_signature=...,
thinking=...)` (Anthropic: a thinking block first, as Sonnet 5.5 narrates between tool calls).
Token numbers are neutral (`input`, `output` excluding reasoning, `reasoning`, `cached`, `image`, `cache_write`)
and are written in each vendor's own fields (Anthropic: `input_tokens` excludes cache reads and writes, as its
prompt-caching docs say: platform.claude.com/docs/en/build-with-claude/prompt-caching). Gemini replies carry
`thoughtSignature` on the first function call (as Gemini 3 does).

Faults by model name (Gemini: from the URL path; others: the body's "model"), checked before the script:
- a model containing "ratelimit": the first request gets 429 with `retry-after: 0` (Gemini: RetryInfo 0s);
- "quota": every request gets the vendor's quota error (OpenAI `insufficient_quota`, Anthropic 402
  `billing_error`, Gemini RESOURCE_EXHAUSTED with a per-day QuotaFailure and no RetryInfo);
- "flaky": the first request gets a 500;
- "notemp": any request that sets a temperature gets a 400 naming it (as models without temperature do).
`faults={"model-x": ["ratelimit", "server_error", "quota"]}` scripts faults per model explicitly (consumed in
order). Every vendor speaks these, each in its own documented or publicly reported error body (`ERROR_BODIES`,
sources cited there): auth, permission, not_found, ratelimit (with retry-after / retry delay 0), ratelimit_bare
(none), daily_quota, monthly_quota, credit_400, credit_429, quota, overloaded, server_error, bad_request,
slowdown (429 asking for a 3600 s wait), temperature; some only one vendor has: timeout (504: Anthropic, Gemini),
location (Gemini), monthly_spend_429 (Anthropic), not_found_400 (OpenAI). A fault a vendor has no body for is a
readable 500.
A model named "fault-<fault>" (e.g. "fault-auth") gets that fault on every request.
Requests the real model refuses get the vendor's 400 (`refusal`): function tools on Chat Completions without
`reasoning_effort: "none"` for GPT-5.6+ / GPT-6 models, more than 4 Anthropic cache breakpoints (the top-level
automatic one included), `thinking: disabled` (or `between_tools` at xhigh/max
effort) on claude-sonnet-5-5, thinking level MINIMAL on gemini-3.8-*. `.responses` holds every 200 body sent.
The Anthropic fake also speaks Message Batches: POST `/v1/messages/batches` answers each request at once (script,
faults and refusals as above), GET `/v1/messages/batches/{id}` says `in_progress` `batch_polls` times (default 1),
then `ended` with a `results_url` serving the JSONL results; `.batches` holds them.
`latency=0.05` delays every reply (for benchmarks); `drip=0.2` sends each reply body one byte at a time, 0.2 s
apart. `.base_url` is what each SDK wants as its base URL (OpenAI: `.../v1`); `.url` is the bare server address;
`.transport()` gives the same answers in memory, for an SDK client built with an `http_client` (fast tests). Use
it as a context manager, or call `close()`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KINDS = ("anthropic", "responses", "chat", "gemini")


@dataclass
class Call:
    """A scripted tool call; `raw` overrides the JSON-encoded `args` (to send malformed arguments)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    raw: str | None = None
    id: str | None = None

    @property
    def arguments(self) -> str:
        return self.raw if self.raw is not None else json.dumps(self.args)


@dataclass
class Tokens:
    """Neutral token counts for a scripted reply; `output` excludes `reasoning`."""

    input: int = 100
    output: int = 20
    reasoning: int = 5
    cached: int = 10
    image: int | None = None
    cache_write: int = 0  # prompt-cache writes: Anthropic cache_creation_input_tokens, OpenAI cache_write_tokens


@dataclass
class Reply:
    """What the scripted model says: text and/or tool calls, with usage."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    usage: Tokens = field(default_factory=Tokens)
    thought_signature: str | None = "c2lnbmF0dXJlLTE="  # Gemini: base64, echoed back by a correct client
    thinking: str = ""  # Anthropic: a thinking block's (summarized) text, before the reply's text; chat: see below
    # chat: the message field a local server puts `thinking` in: vLLM `reasoning_content` (docs.vllm.ai, Reasoning
    # Outputs), Ollama `reasoning` (its OpenAI-compatible API)
    reasoning_field: str = "reasoning_content"
    truncated: bool = False  # cut off at the output limit (max_tokens / length / incomplete / MAX_TOKENS)
    stop_reason: str = ""  # Anthropic: this stop_reason instead (e.g. model_context_window_exceeded)
    refusal: str = ""  # the model declines, in the vendor's own shape (REFUSALS below), with this text
    blocked: str = ""  # Gemini: the prompt itself was blocked (promptFeedback.blockReason, e.g. SAFETY)


def call(name: str, *, raw: str | None = None, **args: Any) -> Reply:
    return Reply(calls=[Call(name, args, raw)])


def final(text: str) -> Reply:
    return Reply(text=text)


Script = Callable[[dict[str, Any], int], "Reply | list[Reply]"] | list[Reply]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    json: dict[str, Any]
    model: str


def tool_results(kind: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results a request carries, in the vendor's own shape (handy in scripts and assertions)."""
    if kind == "anthropic":
        return [b for m in body.get("messages", []) if isinstance(m.get("content"), list)
                for b in m["content"] if b.get("type") == "tool_result"]
    if kind == "responses":
        items = body.get("input", [])
        return [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if kind == "chat":
        return [m for m in body.get("messages", []) if m.get("role") == "tool"]
    return [p.get("functionResponse") or p.get("function_response") for c in body.get("contents", [])
            for p in c.get("parts", []) if p.get("functionResponse") or p.get("function_response")]


class FakeVendor:
    """A scripted vendor API on 127.0.0.1; see the module docstring."""

    def __init__(self, kind: str, script: Script | None = None, *, latency: float = 0.0,
                 faults: dict[str, list[str]] | None = None, drip: float = 0.0, batch_polls: int = 1,
                 redirect: str | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        self.kind = kind
        self.script = script if script is not None else [final('{"answer": "yes"}')]
        self.latency = latency
        self.drip = drip  # seconds between the bytes of a reply body (a server that sends it a byte at a time)
        self.redirect = redirect  # every POST answered 307 to this address + its path (a hijacked endpoint)
        self.faults = {m: list(f) for m, f in (faults or {}).items()}
        self.requests: list[Recorded] = []
        self.responses: list[dict[str, Any]] = []  # every 200 body sent, in order (the usage the vendor bills)
        self.replies = 0  # requests that reached the script
        self.batch_polls = batch_polls  # Anthropic Message Batches: retrievals answered in_progress before ended
        self.batches: dict[str, dict[str, Any]] = {}  # batch id -> {"polls": left, "results": [JSONL objects]}
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        # serve_forever notices shutdown() only between polls: the default 0.5 s poll made every close() cost 0.5 s
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1" if self.kind in ("responses", "chat") else self.url

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def transport(self) -> Any:
        """The same answers in memory: an httpx2 transport for an SDK client's `http_client` (no socket, fast)."""
        import httpx2  # the SDKs' HTTP client; imported here so the loopback server does not need it

        def answer(request: Any) -> Any:
            headers = {k.lower(): v for k, v in request.headers.items()}
            if request.method == "GET":
                status, extra, payload = self.handle_get(request.url.path)
            else:
                status, extra, payload = self.handle(request.url.path, headers, json.loads(request.content or b"{}"))
            if isinstance(payload, bytes):
                return httpx2.Response(status, headers=extra, content=payload)
            return httpx2.Response(status, headers=extra, json=payload)

        return httpx2.MockTransport(answer)

    def __enter__(self) -> FakeVendor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def handle(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict, dict]:
        """Record the request, then answer with a fault or the script's reply: (status, headers, JSON)."""
        if self.kind == "anthropic" and path.rstrip("/").endswith("/messages/batches"):
            return self._create_batch(path, headers, body)
        match = re.search(r"/models/([^/:]+):generateContent", path)
        model = match.group(1) if match else str(body.get("model", ""))
        with self._lock:
            self.requests.append(Recorded(path, headers, body, model))
            fault = self._fault(model, body)
            refused = None if fault else refusal(self.kind, model, body)
            if fault is None and refused is None:
                n, self.replies = self.replies, self.replies + 1
        if self.latency:
            time.sleep(self.latency)
        if self.redirect is not None:  # RFC 9110 section 15.4.8: the client may repeat the POST at Location
            return 307, {"Location": self.redirect + path}, {}
        if fault is not None:
            return error_reply(self.kind, fault)
        if refused is not None:
            return refused
        payload = RENDER[self.kind](self._reply(body, n), model, n)
        if self.kind == "anthropic":
            _bind_thinking(body, payload["content"])
        with self._lock:
            self.responses.append(payload)
        return 200, {}, payload

    def _create_batch(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict, dict]:
        """Anthropic Message Batches, create: each request is answered at once (script, faults and refusals as for
        /v1/messages, recorded with path `.../batches#custom_id`); the batch ends after `batch_polls` retrievals
        (platform.claude.com/docs/en/build-with-claude/batch-processing; wire format: the SDK's MessageBatch)."""
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return _anthropic_error(400, "invalid_request_error", "requests: at least one request is required")
        results = []
        for item in requests:
            status, _, payload = self.handle(f"{path}#{item.get('custom_id')}", headers, item.get("params") or {})
            result = {"type": "succeeded", "message": payload} if status == 200 else {"type": "errored",
                                                                                      "error": payload}
            results.append({"custom_id": item.get("custom_id"), "result": result})
        with self._lock:
            batch_id = f"msgbatch_{len(self.batches):04d}"
            self.batches[batch_id] = {"polls": self.batch_polls, "results": results[::-1]}  # any order is allowed
        return 200, {}, self._batch(batch_id)

    def _batch(self, batch_id: str) -> dict[str, Any]:
        """The MessageBatch object: in_progress until its polls are used up, then ended with a results_url."""
        batch = self.batches[batch_id]
        ended = batch["polls"] <= 0
        counts = {"processing": 0 if ended else len(batch["results"]), "canceled": 0, "expired": 0,
                  "succeeded": sum(r["result"]["type"] == "succeeded" for r in batch["results"]) if ended else 0,
                  "errored": sum(r["result"]["type"] == "errored" for r in batch["results"]) if ended else 0}
        return {"id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts, "created_at": "2026-12-01T00:00:00Z", "expires_at": "2026-12-02T00:00:00Z",
                "ended_at": "2026-12-01T00:01:00Z" if ended else None, "archived_at": None,
                "cancel_initiated_at": None,
                "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None}

    def handle_get(self, path: str) -> tuple[int, dict, dict | bytes]:
        """GET: an Anthropic Message Batch (retrieve) or its results (JSONL); anything else is a 404."""
        match = re.search(r"/messages/batches/([^/]+)(/results)?$", path)
        if self.kind != "anthropic" or not match or match.group(1) not in self.batches:
            return _anthropic_error(404, "not_found_error", f"no such resource: {path}")
        with self._lock:
            self.requests.append(Recorded(path, {}, {}, ""))
            batch = self.batches[match.group(1)]
            if match.group(2):
                if batch["polls"] > 0:
                    return _anthropic_error(400, "invalid_request_error", "the batch has not ended yet")
                lines = "".join(json.dumps(r) + "\n" for r in batch["results"])
                return 200, {"Content-Type": "application/binary"}, lines.encode()
            shown = self._batch(match.group(1))
            batch["polls"] -= 1
        return 200, {}, shown

    def _fault(self, model: str, body: dict[str, Any]) -> str | None:
        if "notemp" in model and "temperature" in json.dumps(body):
            return "temperature"
        if model in self.faults:
            return self.faults[model].pop(0) if self.faults[model] else None
        seen = self._seen[model] = self._seen.get(model, 0) + 1
        if model.startswith("fault-"):
            return model.removeprefix("fault-")
        if "quota" in model:
            return "quota"
        if "ratelimit" in model and seen == 1:
            return "ratelimit"
        if "flaky" in model and seen == 1:
            return "server_error"
        return None

    def _reply(self, body: dict[str, Any], n: int) -> Reply:
        if callable(self.script):
            reply = self.script(body, n)
        else:
            reply = self.script[min(n, len(self.script) - 1)]
        if isinstance(reply, list):  # several steps merged into one turn (parallel calls)
            reply = Reply(text="".join(r.text for r in reply), calls=[c for r in reply for c in r.calls])
        return reply


def _handler(vendor: FakeVendor) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # TCP_NODELAY: without it each keep-alive reply can stall ~40 ms

        def do_POST(self) -> None:  # noqa: N802 (stdlib name)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                return self._send(400, {}, {"error": {"message": "body is not JSON"}})
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                status, extra, payload = vendor.handle(self.path, headers, body)
            except Exception as exc:  # a broken script shows up as a 500 the test can read
                status, extra, payload = 500, {}, {"error": {"message": f"fake vendor script failed: {exc!r}"}}
            self._send(status, extra, payload)

        def do_GET(self) -> None:  # noqa: N802 (stdlib name)
            self._send(*vendor.handle_get(self.path))

        def _send(self, status: int, extra: dict[str, str], payload: dict[str, Any] | bytes) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            extra = dict(extra)
            self.send_response(status)
            self.send_header("Content-Type", extra.pop("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            if not vendor.drip:
                self.wfile.write(data)
                return
            try:
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(vendor.drip)
            except OSError:  # the client gave up: that is what a drip test wants
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


# --- replies in each wire format -------------------------------------------------------------------------
# Refusals, as each API reference documents them (REFUSALS):
REFUSALS = {
    # stop_reason "refusal" with stop_details {type, category, explanation}, the partial text kept:
    # platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals
    "anthropic": "https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals",
    # a message output item whose content is {"type": "refusal", "refusal": text} (Responses), or a message with
    # content null and `refusal` set (Chat Completions): platform.openai.com/docs/guides/structured-outputs#refusals
    "responses": "https://platform.openai.com/docs/guides/structured-outputs#refusals",
    "chat": "https://platform.openai.com/docs/guides/structured-outputs#refusals",
    # a candidate with finishReason SAFETY, no content, its safetyRatings marked blocked (and finishMessage); a
    # blocked prompt: no candidates, promptFeedback.blockReason: ai.google.dev/api/generate-content#FinishReason
    "gemini": "https://ai.google.dev/api/generate-content#FinishReason",
}

def _anthropic(reply: Reply, model: str, n: int) -> dict[str, Any]:
    u = reply.usage
    content: list[dict[str, Any]] = [{"type": "thinking", "thinking": reply.thinking, "signature": "c2ln"}
                                     ] if reply.thinking else []
    content += [{"type": "text", "text": reply.text}] if reply.text else []
    content += [{"type": "tool_use", "id": c.id or f"toolu_{n}_{i}", "name": c.name, "input": c.args}
                for i, c in enumerate(reply.calls)]
    stop = reply.stop_reason or ("refusal" if reply.refusal else "max_tokens" if reply.truncated else
                                 "tool_use" if reply.calls else "end_turn")
    details = {"stop_details": {"type": "refusal", "category": "cyber", "explanation": reply.refusal}
               } if reply.refusal else {}
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop, **details, "stop_sequence": None,
            "usage": {"input_tokens": u.input - u.cached - u.cache_write, "output_tokens": u.output + u.reasoning,
                      "cache_read_input_tokens": u.cached, "cache_creation_input_tokens": u.cache_write,
                      "output_tokens_details": {"thinking_tokens": u.reasoning}}}


def _chat(reply: Reply, model: str, n: int) -> dict[str, Any]:
    u = reply.usage
    calls = [{"id": c.id or f"call_{n}_{i}", "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
             for i, c in enumerate(reply.calls)]
    message = {"role": "assistant", "content": reply.text or None, **({"tool_calls": calls} if calls else {}),
               "refusal": reply.refusal or None, **({reply.reasoning_field: reply.thinking} if reply.thinking else {})}
    prompt_details: dict[str, Any] = {"cached_tokens": u.cached, "cache_write_tokens": u.cache_write}
    if u.image is not None:
        prompt_details["image_tokens"] = u.image
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000, "model": model,
            "choices": [{"index": 0, "logprobs": None,
                         "finish_reason": "length" if reply.truncated else "tool_calls" if calls else "stop",
                         "message": message}],
            "usage": {"prompt_tokens": u.input, "completion_tokens": u.output + u.reasoning,
                      "total_tokens": u.input + u.output + u.reasoning,
                      "completion_tokens_details": {"reasoning_tokens": u.reasoning},
                      "prompt_tokens_details": prompt_details}}


def _responses(reply: Reply, model: str, n: int) -> dict[str, Any]:
    u = reply.usage
    output: list[dict[str, Any]] = []
    if reply.text:
        output.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": reply.text, "annotations": []}]})
    if reply.refusal:
        output.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                       "content": [{"type": "refusal", "refusal": reply.refusal}]})
    # `async` is a wire name the SDK reads into `async_` (openai types/responses/response_function_tool_call.py)
    output += [{"type": "function_call", "id": f"fc_{n}_{i}", "call_id": c.id or f"call_{n}_{i}", "name": c.name,
                "arguments": c.arguments, "status": "completed", "async": False} for i, c in enumerate(reply.calls)]
    return {"id": f"resp_{n}", "object": "response", "created_at": 1700000000,
            "status": "incomplete" if reply.truncated else "completed", "model": model, "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if reply.truncated else None, "output": output,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "temperature": 0, "top_p": None,
            "metadata": {},
            "usage": {"input_tokens": u.input,
                      "input_tokens_details": {"cached_tokens": u.cached, "cache_write_tokens": u.cache_write},
                      "output_tokens": u.output + u.reasoning,
                      "output_tokens_details": {"reasoning_tokens": u.reasoning},
                      "total_tokens": u.input + u.output + u.reasoning}}


def _gemini(reply: Reply, model: str, n: int) -> dict[str, Any]:
    u = reply.usage
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    for i, c in enumerate(reply.calls):
        part: dict[str, Any] = {"functionCall": {"id": c.id or f"fc-{n}-{i}", "name": c.name, "args": c.args}}
        if i == 0 and reply.thought_signature:
            part["thoughtSignature"] = reply.thought_signature
        parts.append(part)
    usage: dict[str, Any] = {"promptTokenCount": u.input, "candidatesTokenCount": u.output,
                             "thoughtsTokenCount": u.reasoning, "cachedContentTokenCount": u.cached,
                             "totalTokenCount": u.input + u.output + u.reasoning}
    if u.image is not None:
        usage["promptTokensDetails"] = [{"modality": "IMAGE", "tokenCount": u.image},
                                        {"modality": "TEXT", "tokenCount": u.input - u.image}]
    if reply.blocked:
        return {"promptFeedback": {"blockReason": reply.blocked, "safetyRatings": [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]},
            "usageMetadata": usage, "modelVersion": model, "responseId": f"r{n}"}
    if reply.refusal:
        candidate = {"index": 0, "finishReason": "SAFETY", "finishMessage": reply.refusal, "safetyRatings": [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]}
    else:
        candidate = {"index": 0, "finishReason": "MAX_TOKENS" if reply.truncated else "STOP",
                     "content": {"role": "model", "parts": parts}}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model, "responseId": f"r{n}"}


RENDER: dict[str, Callable[[Reply, str, int], dict[str, Any]]] = {
    "anthropic": _anthropic, "chat": _chat, "responses": _responses, "gemini": _gemini}


# --- errors in each wire format --------------------------------------------------------------------------
# Bodies follow the vendors' documented error shapes and, where a case is undocumented, bodies users reported
# from the real APIs; each cites its source. `VENDOR` maps a fake kind to the vendor whose errors it speaks.

VENDOR = {"anthropic": "anthropic", "responses": "openai", "chat": "openai", "gemini": "gemini"}
Error = tuple[int, dict[str, str], dict[str, Any]]


def _anthropic_error(status: int, type_: str, message: str, headers: dict[str, str] | None = None) -> Error:
    """docs.claude.com/en/api/errors: {"type": "error", "error": {"type", "message"}, "request_id"}."""
    return status, headers or {}, {"type": "error", "error": {"type": type_, "message": message},
                                   "request_id": "req_011CZ47RMLnx1JoJXRrzzSde"}


def _openai_error(status: int, message: str, type_: str | None, code: str | None,
                  headers: dict[str, str] | None = None, param: str | None = None) -> Error:
    """platform.openai.com/docs/guides/error-codes: {"error": {"message", "type", "param", "code"}}."""
    return status, headers or {}, {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _gemini_error(code: int, status: str, message: str, details: list[dict[str, Any]] | None = None) -> Error:
    """ai.google.dev/gemini-api/docs/troubleshooting: google.rpc.Status {"error": {"code", "message", "status",
    "details"}}."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return code, {}, {"error": error}


def _quota_failure(*quota_ids: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
        {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": q,
         "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"}} for q in quota_ids]}


def _retry_info(delay: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


GEMINI_QUOTA_HELP = {"@type": "type.googleapis.com/google.rpc.Help", "links": [
    {"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]}

ERROR_BODIES: dict[str, dict[str, Callable[[], Error]]] = {
    "anthropic": {
        # documented types (docs.claude.com/en/api/errors); 402 billing_error as the error reference lists it
        "auth": lambda: _anthropic_error(401, "authentication_error", "invalid x-api-key"),
        "permission": lambda: _anthropic_error(
            403, "permission_error", "Your API key does not have permission to use the specified resource."),
        "not_found": lambda: _anthropic_error(404, "not_found_error", "model: claude-nonexistent-1"),
        "ratelimit": lambda: _anthropic_error(429, "rate_limit_error", "slow down", {"retry-after": "0"}),
        # reported without retry-after: anthropics/claude-code#64462
        "ratelimit_bare": lambda: _anthropic_error(
            429, "rate_limit_error", "This request would exceed your account's rate limit. Please try again later."),
        # reported: SakanaAI/AI-Scientist#115, anthropics/claude-quickstarts#116
        "daily_quota": lambda: _anthropic_error(
            429, "rate_limit_error", "Number of request tokens has exceeded your daily rate limit "
            "(https://docs.anthropic.com/en/api/rate-limits); see the response headers for current usage. Please "
            "reduce the prompt length or the maximum tokens requested, or try again later."),
        # the monthly spend limit, reported as a 400: anthropics/claude-code#38035, #2127
        "monthly_quota": lambda: _anthropic_error(
            400, "invalid_request_error",
            "You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC."),
        # a monthly spend limit as a 429: NousResearch/hermes-agent#91106
        "monthly_spend_429": lambda: _anthropic_error(
            429, "rate_limit_error", "This request would exceed your account's monthly spend limit."),
        # no credit, reported as a 400: anthropics/claude-code#4684, anthropics/claude-quickstarts#229
        "credit_400": lambda: _anthropic_error(
            400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go "
            "to Plans & Billing to upgrade or purchase credits."),
        "quota": lambda: _anthropic_error(
            402, "billing_error", "Your credit balance is too low to access the Anthropic API."),
        "overloaded": lambda: _anthropic_error(529, "overloaded_error", "Overloaded"),
        "timeout": lambda: _anthropic_error(504, "timeout_error", "Request timed out while processing"),  # documented
        "server_error": lambda: _anthropic_error(500, "api_error", "Internal server error"),
        "bad_request": lambda: _anthropic_error(400, "invalid_request_error",
                                                "messages: at least one message is required"),
        "slowdown": lambda: _anthropic_error(429, "rate_limit_error", "slow down", {"retry-after": "3600"}),
        "temperature": lambda: _anthropic_error(400, "invalid_request_error",
                                                "temperature is not supported with this model"),
    },
    "openai": {
        # codes from platform.openai.com/docs/guides/error-codes
        "auth": lambda: _openai_error(
            401, "Incorrect API key provided: sk-bad. You can find your API key at "
            "https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"),
        "permission": lambda: _openai_error(403, "Country, region, or territory not supported",
                                            "request_forbidden", "unsupported_country_region_territory"),
        "not_found": lambda: _openai_error(
            404, "The model `gpt-nonexistent` does not exist or you do not have access to it.",
            "invalid_request_error", "model_not_found"),
        # an unknown model as a 400: skorokithakis/sysaidmin#9
        "not_found_400": lambda: _openai_error(400, "The requested model 'gpt-4-1106-preview' does not exist.",
                                               "invalid_request_error", "model_not_found"),
        "ratelimit": lambda: _openai_error(429, "Rate limit reached", "requests", "rate_limit_exceeded",
                                           {"retry-after": "0"}),
        # reported without retry-after (a per-minute limit): mmz-001/knowledge_gpt#5 shape, current wording
        "ratelimit_bare": lambda: _openai_error(
            429, "Rate limit reached for gpt-4o-mini in organization org-x on tokens per min (TPM): Limit 200000, "
            "Used 199000, Requested 2000. Please try again in 300ms.", "tokens", "rate_limit_exceeded"),
        # reported: feder-cr/invisible_playwright_mcp#109
        "daily_quota": lambda: _openai_error(
            429, "Rate limit reached for gpt-4o-mini in organization org-x on requests per day (RPD): Limit 200, "
            "Used 200, Requested 1. Please try again in 7m12s.", "requests", "rate_limit_exceeded"),
        # documented: "You have run out of credits or hit your maximum monthly spend"; body: OpenHands/OpenHands#998
        "monthly_quota": lambda: _openai_error(
            429, "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota", "insufficient_quota"),
        # reported as a 400: dfinke/PowerShellAI#127
        "credit_400": lambda: _openai_error(400, "Billing hard limit has been reached", "invalid_request_error",
                                            "billing_hard_limit_reached"),
        "quota": lambda: _openai_error(429, "You exceeded your current quota, please check your plan and billing.",
                                       "insufficient_quota", "insufficient_quota"),
        "overloaded": lambda: _openai_error(503, "The engine is currently overloaded, please try again later.",
                                            "server_error", None),
        "server_error": lambda: _openai_error(500, "The server had an error while processing your request. Sorry "
                                                   "about that!", "server_error", None),
        "bad_request": lambda: _openai_error(400, "messages: at least one message is required",
                                             "invalid_request_error", "unsupported_parameter"),
        "slowdown": lambda: _openai_error(429, "Rate limit reached", "requests", "rate_limit_exceeded",
                                          {"retry-after": "3600"}),
        "temperature": lambda: _openai_error(400, "temperature is not supported with this model",
                                             "invalid_request_error", "unsupported_parameter"),
    },
    "gemini": {
        # a bad key is a 400 with ErrorInfo API_KEY_INVALID: cequence-io/openai-scala-client#109
        "auth": lambda: _gemini_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
             "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}]),
        "permission": lambda: _gemini_error(403, "PERMISSION_DENIED",
                                            "The caller does not have permission"),
        # reported: wwardaww/gnome-gemini-ai#22
        "not_found": lambda: _gemini_error(
            404, "NOT_FOUND", "models/gemini-pro is not found for API version v1beta, or is not supported for "
            "generateContent. Call ListModels to see the list of available models and their supported methods."),
        "ratelimit": lambda: _gemini_error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted", [
            _quota_failure("GenerateRequestsPerMinutePerProjectPerModel"), _retry_info("0s")]),
        # reported without details: continuedev/continue#10479
        "ratelimit_bare": lambda: _gemini_error(429, "RESOURCE_EXHAUSTED",
                                                "Resource has been exhausted (e.g. check quota)."),
        # a per-day quota that also carries a retry delay: googleapis/python-genai#2044
        "daily_quota": lambda: _gemini_error(
            429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing "
            "details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
            [GEMINI_QUOTA_HELP, _quota_failure("GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                                               "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"),
             _retry_info("47s")]),
        # prepaid credit used up; message reported in dyad-sh/dyad#3626, JeffOtano/roni#125
        "credit_429": lambda: _gemini_error(
            429, "RESOURCE_EXHAUSTED", "Your prepayment credits are depleted. Please go to AI Studio at "
            "https://ai.studio/projects to manage your project and billing."),
        "quota": lambda: _gemini_error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota", [
            _quota_failure("GenerateRequestsPerDayPerProjectPerModel-FreeTier")]),
        # reported: google-gemini/gemini-cli#5191
        "overloaded": lambda: _gemini_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
        # documented in the troubleshooting table (504 DEADLINE_EXCEEDED; 400 FAILED_PRECONDITION for a region);
        # the region message as reported: google-gemini/gemini-cli#1614
        "timeout": lambda: _gemini_error(504, "DEADLINE_EXCEEDED",
                                         "The service is unable to finish processing within the deadline."),
        "location": lambda: _gemini_error(400, "FAILED_PRECONDITION",
                                          "User location is not supported for the API use."),
        "server_error": lambda: _gemini_error(500, "INTERNAL", "An internal error has occurred."),
        "bad_request": lambda: _gemini_error(400, "INVALID_ARGUMENT", "messages: at least one message is required"),
        "slowdown": lambda: _gemini_error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted", [
            _quota_failure("GenerateRequestsPerMinutePerProjectPerModel"), _retry_info("3600s")]),
        "temperature": lambda: _gemini_error(400, "INVALID_ARGUMENT", "temperature is not supported with this model"),
    },
}
ERROR_BODIES["openai"]["credit_429"] = ERROR_BODIES["openai"]["quota"]  # insufficient_quota is the 429 one


def error_reply(kind: str, fault: str) -> Error:
    """The (status, headers, body) a fake of `kind` sends for `fault`; a fault it has no body for is a 500."""
    bodies = ERROR_BODIES[VENDOR[kind]]
    if fault not in bodies:
        return 500, {}, {"error": {"message": f"fake vendor: no {fault!r} error for {kind}"}}
    return bodies[fault]()


# --- requests the real APIs refuse, whatever the script says -------------------------------------------------
# Each rule is the vendor's, found in its documentation or in raw-API captures users published (cited); the
# wording of a message the vendor does not quote is ours.

CHAT_TOOLS_NEED_NO_EFFORT = re.compile(r"gpt-(5\.([6-9]|\d\d)|[6-9])")  # GPT-5.6 and later, GPT-6.x


def _thinking_level(body: dict[str, Any]) -> str | None:
    """Gemini's thinkingConfig.thinkingLevel, whichever key style the SDK used."""
    config = body.get("generationConfig") or body.get("generation_config") or {}
    thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
    level = thinking.get("thinkingLevel") or thinking.get("thinking_level")
    return str(level).upper() if level else None


def _cache_breakpoints(body: dict[str, Any]) -> int:
    """Anthropic cache breakpoints: blocks marked `cache_control` anywhere, plus the top-level (automatic) one."""
    def marked(value: Any) -> int:
        if isinstance(value, dict):
            return ("cache_control" in value) + sum(marked(v) for k, v in value.items() if k != "cache_control")
        return sum(marked(v) for v in value) if isinstance(value, list) else 0
    return ("cache_control" in body) + sum(marked(body.get(k) or []) for k in ("system", "tools", "messages"))


# Preserved thinking (platform.claude.com/docs/en/build-with-claude/preserved-thinking): a thinking block's signature
# binds it to its prefix, the top-level system, tools and every message before it; sent back after any of them
# changed, the request is a 400 (the accounts created from 2026-08-31 by default). The fake signs each thinking block
# it sends with a digest of its prefix (cache_control marks aside: they move every round) and checks it on return.
BOUND = "bound-"


def _prefix(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _prefix(v) for k, v in value.items() if k != "cache_control"}
    return [_prefix(v) for v in value] if isinstance(value, list) else value


def _prefix_digest(body: dict[str, Any], messages: list[Any], before: list[Any]) -> str:
    prefix = {"system": body.get("system"), "tools": body.get("tools"),
              "messages": [*messages, {"role": "assistant", "content": before}]}
    return BOUND + hashlib.sha256(json.dumps(_prefix(prefix), sort_keys=True).encode()).hexdigest()[:32]


def _bind_thinking(body: dict[str, Any], content: list[dict[str, Any]]) -> None:
    """Sign each thinking block of a reply with its prefix: the request's messages and the blocks before it."""
    for j, block in enumerate(content):
        if block["type"] in ("thinking", "redacted_thinking"):
            block["signature"] = _prefix_digest(body, body.get("messages") or [], content[:j])


def _unbound_thinking(body: dict[str, Any]) -> str | None:
    """The path (messages.i.content.j) of the first thinking block sent back with a changed prefix, or None."""
    messages = body.get("messages") or []
    for i, message in enumerate(messages):
        content = message.get("content") if message.get("role") == "assistant" else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            signature = str(block.get("signature") or "")
            if block.get("type") in ("thinking", "redacted_thinking") and signature.startswith(BOUND) \
                    and signature != _prefix_digest(body, messages[:i], content[:j]):
                return f"messages.{i}.content.{j}"
    return None


def refusal(kind: str, model: str, body: dict[str, Any]) -> Error | None:
    """The 400 a vendor answers to a request its model refuses, or None."""
    if kind == "anthropic" and (path := _unbound_thinking(body)):
        # the error as platform.claude.com/docs/en/build-with-claude/preserved-thinking/
        # fix-bound-to-a-different-conversation quotes it
        return _anthropic_error(400, "invalid_request_error", f"{path}: Invalid `signature` in `thinking` block. The "
                                "block is bound to a different conversation. Remove the block, or set "
                                "`thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\".")
    if kind == "anthropic" and (found := _cache_breakpoints(body)) > 4:
        # platform.claude.com/docs/en/build-with-claude/prompt-caching: at most 4 breakpoints (the top-level
        # automatic one counted as one, conservatively); raw message: tghamm/Anthropic.SDK#50, Wei-Shaw/sub2api#176
        return _anthropic_error(400, "invalid_request_error",
                                f"A maximum of 4 blocks with cache_control may be provided. Found {found}.")
    if kind == "chat" and CHAT_TOOLS_NEED_NO_EFFORT.match(model) and body.get("tools") \
            and body.get("reasoning_effort") != "none":
        # raw-API captures: BerriAI/litellm#34569 (also with no reasoning_effort at all), livekit/agents#7169,
        # fazer-ai/agents#66; shape with param "reasoning_effort": pipecat-ai/pipecat#4043
        return _openai_error(400, f"Function tools with reasoning_effort are not supported for {model} in "
                                  "/v1/chat/completions. To use function tools, use /v1/responses or set "
                                  "reasoning_effort to 'none'.", "invalid_request_error", None,
                             param="reasoning_effort")
    if kind == "anthropic" and model.startswith("claude-sonnet-5-5"):
        # platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5: `disabled` is a 400 pointing to
        # between_tools; between_tools at xhigh or max effort is a 400
        thinking = body.get("thinking") or {}
        effort = (body.get("output_config") or {}).get("effort")
        if thinking.get("type") == "disabled":
            return _anthropic_error(400, "invalid_request_error", "thinking.type: 'disabled' is not supported on "
                                    f"{model}; send thinking: {{\"type\": \"between_tools\"}} to turn off up-front "
                                    "thinking")
        if thinking.get("type") == "between_tools" and effort in ("xhigh", "max"):
            return _anthropic_error(400, "invalid_request_error", f"thinking.type: 'between_tools' is not "
                                    f"supported at effort {effort!r}; use adaptive thinking")
    if kind == "gemini" and model.startswith("gemini-3.8") and _thinking_level(body) == "MINIMAL":
        # docs.cloud.google.com/gemini-enterprise-agent-platform/models/guides/gemini-3-8-flash: LOW, MEDIUM, HIGH
        return _gemini_error(400, "INVALID_ARGUMENT", f"Thinking level MINIMAL is not supported by {model}. "
                                                      "Supported levels: LOW, MEDIUM, HIGH.")
    return None
