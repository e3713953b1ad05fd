"""`hf` backend: a local transformers VLM (folder or hub id) that calls tools as `<tool_call>{json}</tool_call>`.

torch and transformers are imported only when a model is loaded (extras `local`/`vision`). A model whose chat
template knows tools (Qwen3-VL) gets them natively; any other gets trompe's own template
(templates/tool_chat.j2), which lists the tools in the system turn and shows tool results as user turns, in the
family's own turn format: ChatML with `<|vision_start|><|image_pad|><|vision_end|>` (Qwen2/2.5-VL), `User:` /
`<end_of_utterance>` / `Assistant:` (SmolVLM, Idefics3), or Gemma 3's turns with the system text folded into the
first user turn. Images of rounds older than `--keep-images` become a stub, as with the hosted backends.
A tokenizer that ships its own `response_template` (Gemma 4: `<|tool_call>call:NAME{...}<tool_call|>`) has its
replies read by transformers' `parse_response` with it; the `<tool_call>` parser reads every other model's.
A model's own template that writes only the text of a tool result (Gemma 4's) gets the result's images in a user
turn after it, and one that writes the text beside a call after its results (Gemma 4's) gets that text as the
call's reasoning. A processor that cannot be built here (Gemma 4's needs torchvision) leaves the tokenizer: text and
tools work, a conversation with images fails in one line.
GPU with bfloat16 when CUDA is present, CPU with float32 otherwise; greedy decoding.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import anyio

from trompe_kernel.hookspecs import hookimpl

from ..messages import Message, TextPart, ToolCall, ToolSchema, Turn, Usage
from .model_images import ImagePolicy, prepare_messages
from .base import BackendError, BackendOptions
from .catalogue import DEFAULT_KEEP_ROUNDS, LOCAL_IMAGES
from .settings import JSON_OBJECT, BackendSettings, number, setting, text

TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')


def parse_tool_calls(text: str, first_id: int = 1) -> tuple[str, list[ToolCall]]:
    """Split generated text into prose and tool calls; a call whose JSON is broken keeps its raw text."""
    calls = []
    for n, match in enumerate(TOOL_CALL.finditer(text), start=first_id):
        raw = match.group(1).strip()
        try:
            data = json.loads(raw)
            name, arguments = data["name"], data.get("arguments", data.get("parameters", {}))
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise ValueError(raw)
        except (ValueError, KeyError, TypeError):
            found = NAME.search(raw)
            calls.append(ToolCall(f"call_{n}", found.group(1) if found else "", None, raw))
            continue
        calls.append(ToolCall(f"call_{n}", name, arguments, json.dumps(arguments)))
    return TOOL_CALL.sub("", text).strip(), calls


def template_calls(tokenizer: Any, generated: list[int], prompt: str, specs: list[dict[str, Any]],
                   first_id: int = 1) -> tuple[str, list[ToolCall]] | None:
    """The reply read by the tokenizer's own `response_template` through transformers' `parse_response` (Gemma 4
    writes `<|tool_call>call:NAME{...}<tool_call|>`, which only its template describes); None where the tokenizer
    has no template, or the template cannot read this reply (the tolerant parser then tries)."""
    if getattr(tokenizer, "response_template", None) is None:
        return None
    ends = {tokenizer.eos_token_id, tokenizer.pad_token_id} - {None}
    while generated and generated[-1] in ends:
        generated = generated[:-1]
    try:
        parsed = tokenizer.parse_response(generated, prefix=prompt, tools=specs or None)
    except (ValueError, KeyError):
        return None
    calls = []
    for n, entry in enumerate(parsed.get("tool_calls") or [], start=first_id):
        function = entry.get("function", entry) if isinstance(entry, dict) else {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        raw = json.dumps(arguments) if isinstance(arguments, dict) else str(arguments)
        calls.append(ToolCall(f"call_{n}", str(function.get("name", "")),
                              arguments if isinstance(arguments, dict) else None, raw))
    return str(parsed.get("content") or "").strip(), calls


def tool_specs(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    """Tools as chat templates and response parsers take them."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in tools]


def tool_template() -> str:
    return resources.files(__package__).joinpath("templates/tool_chat.j2").read_text(encoding="utf-8")


# Processors that expand their image token into bare `<|image_pad|>` runs: the prompt must frame each image with
# <|vision_start|> ... <|vision_end|> itself. Others (InternVL: <img>...</img>) frame it on their own, even where the
# tokenizer has Qwen2.5's vocabulary.
QWEN_VL_PROCESSORS = ("Qwen2VLProcessor", "Qwen2_5_VLProcessor", "Qwen3VLProcessor", "Qwen2_5OmniProcessor")


def template_variables(tokenizer: Any, processor: Any) -> dict[str, Any]:
    """Turn style (from the tokenizer's vocabulary) and image marker (from the processor) of the model's family."""
    vocab = tokenizer.get_vocab()
    if "<start_of_turn>" in vocab:  # Gemma 3: the processor expands its begin-of-image marker
        style, image = "gemma", getattr(processor, "boi_token", None) or "<start_of_image>"
    elif "<end_of_utterance>" in vocab:  # SmolVLM / Idefics3
        style, image = "idefics", getattr(processor, "image_token", None) or "<image>"
    else:  # ChatML (Qwen2/2.5/3-VL, InternVL and most others)
        style, image = "chatml", getattr(processor, "image_token", None) or "<image>"
        if type(processor).__name__ in QWEN_VL_PROCESSORS:
            image = f"<|vision_start|>{image}<|vision_end|>"
    return {"style": style, "image_placeholder": image, "bos": tokenizer.bos_token or ""}


def short(exc: BaseException) -> str:
    """An error's text on one line, cut to what a message can carry (transformers' run to pages)."""
    return " ".join(str(exc).split())[:300]


def load_processor(model: str, local: bool) -> tuple[Any, str | None]:
    """The model's processor; else (it cannot be built here: Gemma 4's needs torchvision for its video part) its
    tokenizer alone, with the reason its images cannot be read: text and tools still work, images fail closed."""
    from transformers import AutoProcessor, AutoTokenizer

    try:
        return AutoProcessor.from_pretrained(model, local_files_only=local), None
    except (OSError, ValueError, ImportError) as exc:
        tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=local)
        return tokenizer, f"hf: {model!r} has no image processor here, so its images cannot be read ({short(exc)})"


def probe(processor: Any, said: str, result: list[dict[str, Any]]) -> str:
    """The model's own template on one round: a question, a call with `said` beside it, its `result`."""
    call = {"role": "assistant", "content": said,
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}]}
    return processor.apply_chat_template([{"role": "user", "content": [{"type": "text", "text": "q"}]}, call,
                                          {"role": "tool", "name": "f", "content": result}], tokenize=False)


def template_habits(processor: Any) -> tuple[bool, bool]:
    """How the model's own template writes a tool round: whether it writes a tool result's images (Qwen3-VL's does;
    Gemma 4's writes only the text of `role: tool` messages), and whether it writes the text beside a call after
    the call's results (Gemma 4's, which takes that text as what the model said next and closes its turn)."""
    from jinja2 import TemplateError

    text = [{"type": "text", "text": "RESULT"}]
    try:
        images = probe(processor, "", text) != probe(processor, "", [*text, {"type": "image"}])
        said = probe(processor, "SAID", text)
    except (TemplateError, ValueError, TypeError, KeyError):  # a template that cannot render the probe: as before
        return True, False
    return images, "SAID" in said and said.index("SAID") > said.index("RESULT")


def to_chat(messages: list[Message], tool_images: bool = True, system_text: bool = False,
            said_as_reasoning: bool = False) -> list[dict[str, Any]]:
    """Neutral messages in the transformers chat format; images as PIL images. Where the model's template keeps
    only the text of a tool result (`tool_images` false: Gemma 4), its images follow the tool results as a user
    turn, each after its id, so the model still sees what the tool drew; `system_text` gives the system turn as one
    string (the models' own templates read it so: Gemma 4's would print a list of parts as it is). Where the
    template writes the text beside a call after the call's results (`said_as_reasoning`: Gemma 4), that text goes
    back as the call's reasoning, which it writes before the call, so the next prompt still opens a model turn."""
    from PIL import Image

    def content(parts: list[Any]) -> list[dict[str, Any]]:
        return [{"type": "text", "text": p.text} if isinstance(p, TextPart)
                else {"type": "image", "image": Image.open(io.BytesIO(p.data)).convert("RGB")} for p in parts]

    chat: list[dict[str, Any]] = []
    held: list[Any] = []  # tool images the template would drop, for the user turn after the tool results
    for m in messages:
        if held and m.role != "tool":
            chat.append({"role": "user", "content": content(held)})
            held = []
        parts = m.parts
        if m.role == "tool" and not tool_images:
            parts = [p for p in m.parts if isinstance(p, TextPart)]
            held += [q for p in m.images for q in (TextPart(f"{p.id}:"), p)]
        entry: dict[str, Any] = {"role": m.role, "content": m.text if system_text and m.role == "system"
                                 else content(parts)}
        if m.tool_calls and said_as_reasoning and m.text:
            entry.update(content=[], reasoning_content=m.text)
        if m.tool_calls:
            entry["tool_calls"] = [{"type": "function", "function": {"name": c.name, "arguments":
                                    c.arguments if c.arguments is not None else c.raw_arguments}}
                                   for c in m.tool_calls]
        if m.role == "tool":
            entry["name"] = m.tool_name
        chat.append(entry)
    if held:
        chat.append({"role": "user", "content": content(held)})
    if chat and chat[0]["role"] != "system":
        chat.insert(0, {"role": "system", "content": "" if system_text else []})
    return chat


@dataclass(frozen=True)
class HFSettings(BackendSettings):
    """What a local model takes: where it runs and how long it may write."""

    device: str | None = setting(None, text(what="cpu, mps, cuda or cuda:N, xpu or xpu:N",
                                            pattern=r"cpu|mps|(cuda|xpu)(:\d+)?"), "the torch device the model runs on",
                                 shown="cuda where present")
    max_new_tokens: int = setting(512, number(1, whole=True, unit="tokens"),
                                  "most tokens one reply may have (and at most the agent's output budget)")
    generate_kwargs: dict[str, Any] | None = setting(None, JSON_OBJECT, "more keyword arguments to `generate` (greedy "
                                                                 "decoding stays)", shown="none")


class HFBackend:
    """A transformers image-text-to-text model run in this process."""

    name = "hf"

    def __init__(self, model: str, device: str | None = None, max_new_tokens: int = 512,
                 generate_kwargs: dict[str, Any] | None = None, images: ImagePolicy | None = None):
        try:
            import torch
            from transformers import AutoModelForImageTextToText
        except ImportError as exc:
            raise BackendError(f"the hf backend needs torch and transformers: pip install 'trompe[local]' "
                               f"({exc})") from None
        self.model = model
        local = Path(model).expanduser().is_dir()
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        try:
            self.processor, self.no_images = load_processor(model, local)
            self.net = AutoModelForImageTextToText.from_pretrained(model, dtype=dtype, local_files_only=local)
        except (OSError, ValueError) as exc:
            raise BackendError(f"hf: cannot load model {model!r}: {short(exc)}") from None
        self.net.to(self.device).eval()
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        own = getattr(self.processor, "chat_template", None) or getattr(self.tokenizer, "chat_template", None)
        self.native_tools = bool(own) and "tools" in own
        self.template = None if self.native_tools else tool_template()
        self.tool_images, self.said_as_reasoning = template_habits(self.processor) if self.native_tools \
            else (True, False)
        self.max_new_tokens = max_new_tokens
        self.generate_kwargs = dict(generate_kwargs or {})  # a copy: the settings it came from stay as given
        self.calls = 0
        self.images = images or ImagePolicy(LOCAL_IMAGES, "png", DEFAULT_KEEP_ROUNDS)
        self._lock = anyio.Lock()

    @classmethod
    def from_options(cls, options: BackendOptions) -> HFBackend:
        if not options.model:
            raise BackendError("the hf backend needs --model: a local model folder or a hub id")
        fmt = "png" if options.image_format == "auto" else options.image_format  # decoded here: nothing to save
        images = ImagePolicy(LOCAL_IMAGES, fmt, options.keep_images)
        settings = HFSettings.of(options)
        return cls(options.model, settings.device, settings.max_new_tokens, settings.generate_kwargs, images)

    def chat(self, messages: list[Message]) -> list[dict[str, Any]]:
        return to_chat(messages, self.tool_images, system_text=self.native_tools,
                       said_as_reasoning=self.said_as_reasoning)

    def encode(self, messages: list[Message], tools: list[ToolSchema]) -> Any:
        extra = {} if self.native_tools else {"chat_template": self.template,
                                              **template_variables(self.tokenizer, self.processor)}
        return self.processor.apply_chat_template(self.chat(messages), tools=tool_specs(tools) or None,
                                                  add_generation_prompt=True, tokenize=True, return_dict=True,
                                                  return_tensors="pt", **extra).to(self.device)

    def generate(self, messages: list[Message], tools: list[ToolSchema], max_output_tokens: int) -> Turn:
        import torch

        messages, _ = prepare_messages(messages, self.images)
        if self.no_images and any(m.images for m in messages):
            raise BackendError(self.no_images)
        inputs = self.encode(messages, tools)
        prompt = inputs["input_ids"].shape[1]
        with torch.inference_mode():
            out = self.net.generate(**inputs, max_new_tokens=min(max_output_tokens, self.max_new_tokens),
                                    do_sample=False, **self.generate_kwargs)
        generated = out[0, prompt:]
        text = self.tokenizer.decode(generated, skip_special_tokens=True)
        own = template_calls(self.tokenizer, generated.tolist(), self.tokenizer.decode(inputs["input_ids"][0]),
                             tool_specs(tools), self.calls + 1)
        prose, calls = own if own is not None else parse_tool_calls(text, self.calls + 1)
        self.calls += len(calls)
        image_id = getattr(self.tokenizer, "image_token_id", None)
        image_tokens = int((inputs["input_ids"] == image_id).sum()) if image_id is not None else None
        message = Message("assistant", [TextPart(prose)] if prose else [], calls)
        return Turn(message, Usage(prompt, len(generated), image_tokens=image_tokens), self.model,
                    "tool_use" if calls else "end_turn", {"do_sample": False, "device": self.device,
                                                          "template": "model" if self.native_tools else "trompe"})

    async def complete(self, messages: list[Message], tools: list[ToolSchema], *,
                       final_schema: dict[str, Any] | None = None, max_output_tokens: int = 4096) -> Turn:
        async with self._lock:  # one generation at a time on one model
            return await anyio.to_thread.run_sync(self.generate, messages, tools, max_output_tokens)


@hookimpl
def register_backends(register):
    register("hf", HFBackend.from_options, settings=HFSettings)

