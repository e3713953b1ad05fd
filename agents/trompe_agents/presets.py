"""`--preset paper`: each app's settings as its paper states them, what a run really sent, and where they differ.

A preset fills in every option the user did not give; an option given on the command line wins and is named once
("--max-rounds 5 given; the paper uses 10"). What the vendor was really sent is read from the requests themselves
(the `sent` record of every model turn in the traces), so a setting the vendor refuses (a model that fixes its
temperature, a Gemini 3 model that cannot turn thinking off) is said once on the console and kept in the record.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .backends.vendor import TEMPERATURE
from .messages import Message, TextPart

PAPER = "paper"
# The request fields that say what was sent, in the names the backends record them (see each backend's request()).
SENT_FIELDS = ("model", "temperature", "max_tokens", "max_output_tokens", "max_completion_tokens", "thinking",
               "reasoning_effort", "effort", "service_tier", "temperature_rejected")


@dataclass(frozen=True)
class Setting:
    """One option of the preset: the argparse destination, its value, the flag a user types and the paper's words."""

    dest: str
    value: Any
    flag: str
    source: str


@dataclass(frozen=True)
class Preset:
    """An app's settings as one paper states them; `unstated` names what the paper leaves open (our default kept)."""

    app: str
    name: str
    paper: str
    settings: tuple[Setting, ...]
    temperature: float | None = None  # sent as `--backend-option temperature=`; None: the paper states none
    thinking: dict[str, str] | None = None  # role -> the thinking level the paper states
    unstated: tuple[str, ...] = ()

    def record(self, notes: list[str]) -> dict[str, Any]:
        """What run.json and model.json keep: which preset, its settings, and every difference said on the console."""
        return {"name": self.name, "paper": self.paper, "temperature": self.temperature,
                "settings": {s.dest: s.value for s in self.settings}, "unstated": list(self.unstated),
                "notes": list(notes)}


SEED_000 = "Seeing the Evidence, Missing the Answer: Tool-Guided Vision-Language Models on Visual Illusions"
SEED_002 = "Visual Prompt Discovery via Semantic Exploration (SEVEX)"

PRESETS: dict[tuple[str, str], Preset] = {
    ("illusion-agent", PAPER): Preset(
        "illusion-agent", PAPER, SEED_000,
        (Setting("backend", "gemini", "--backend", "a Gemini Flash-family VLM"),
         Setting("model", "gemini-3-flash-preview", "--model", "the default model is gemini-3-flash-preview"),
         Setting("max_rounds", 10, "--max-rounds", "a request limit of 10 tool-call rounds per sample"),
         Setting("router", "model", "--router", "the agent first classifies the question into a category"),
         Setting("no_tools", False, "--no-tools", "the agent calls its tools"),
         Setting("normalize", False, "--normalize", "images as given (normalising is named as future work)")),
        temperature=0.0,
        unstated=("rescue rounds: the paper says only 'a reduced request limit' (3 kept)",
                  "zero-shot: no few-shot examples are injected (trompe's prompts have none)")),
    ("sevex", PAPER): Preset(
        "sevex", PAPER, SEED_002,
        (Setting("target_backend", "gemini", "--target-backend", "Gemini-2.5-flash as our primary backbone LVLM"),
         Setting("target_model", "gemini-2.5-flash", "--target-model", "Gemini-2.5-flash"),
         Setting("target_thinking", "off", "--target-thinking", "disabled the 'thinking' feature during inference"),
         Setting("explorer_thinking", "medium", "--explorer-thinking", "enabled it for idea generation and "
                                                                       "implementation"),
         Setting("iterations", 50, "--iterations", "conducted for 50 iterations"),
         Setting("lambda_expl", 0.5, "--lambda-expl", "lambda_expl = 0.5"),
         Setting("lambda_novel", 0.15, "--lambda-novel", "lambda_novel = 0.15"),
         Setting("lambda_sat", 0.5, "--lambda-sat", "lambda_sat = 0.5"),
         Setting("k", 3, "--k", "k = 3"),
         Setting("dev_size", 30, "--dev-size", "randomly sampled 30 images to construct a development set"),
         Setting("strategy", "sevex", "--strategy", "SEVEX")),
        thinking={"target": "off", "explorer": "on"},
        unstated=("temperature: the paper states none (each backend's default kept)",
                  "explorer model: the paper names the backbone LVLM only (the explorer default kept)",
                  "thinking budget of the explorer: 'enabled', no level (medium kept)")),
}


def names(app: str) -> list[str]:
    """The presets an app offers."""
    return [name for a, name in PRESETS if a == app]


def add_preset_arg(parser: argparse.ArgumentParser | Any, app: str) -> None:
    """`--preset NAME` on a parser or argument group."""
    preset = PRESETS[app, PAPER]
    parser.add_argument("--preset", choices=names(app),
                        help=f"paper: the settings of the paper ({preset.paper}); options given on the command "
                             "line win and are named once; recorded in run.json and model.json")


class _Unset(list):
    """A default no user value can equal, a list so that append actions still work on it."""


def given_dests(build_parser: Callable[[], argparse.ArgumentParser], argv: list[str]) -> set[str]:
    """The options the user typed: parse again with every default replaced by a marker no typed value equals."""
    parser = build_parser()
    marker = _Unset()
    for each in _parsers(parser):
        for action in each._actions:
            if action.option_strings and action.dest not in ("help", "version") \
                    and action.default is not argparse.SUPPRESS:  # a subcommand's copy of a global option
                action.default = marker
    parsed = vars(parser.parse_args(argv))
    return {dest for dest, value in parsed.items() if not (isinstance(value, _Unset) and not value)}


def _parsers(parser: argparse.ArgumentParser) -> Iterable[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def apply(args: argparse.Namespace, preset: Preset, given: set[str]) -> list[str]:
    """Set every option of the preset the user did not give; return one note per option given against it."""
    notes = []
    for setting in preset.settings:
        if not hasattr(args, setting.dest):
            continue  # an option of another subcommand (e.g. explore's --iterations under apply)
        if setting.dest in given:
            if (value := getattr(args, setting.dest)) != setting.value:
                typed = setting.flag if isinstance(value, bool) else f"{setting.flag} {value}"
                uses = "does not" if isinstance(value, bool) else f"uses {setting.value}"
                notes.append(f"{typed} given; the paper {uses} ({setting.source})")
            continue
        setattr(args, setting.dest, setting.value)
    if preset.temperature is not None:
        options = list(getattr(args, "backend_option", None) or [])
        if "temperature" not in dict(options):
            args.backend_option = [*options, ("temperature", preset.temperature)]
        elif _temperature(given := dict(options)["temperature"]) != preset.temperature:
            notes.append(f"--backend-option temperature={given} given; the paper uses {preset.temperature:g}")
    return notes


def _temperature(text: str) -> float | str | None:
    """The value a `temperature=` setting means (the text itself where it is no temperature: refused later)."""
    try:
        return TEMPERATURE.read(text)
    except ValueError:
        return text


def planned(backend: Any) -> dict[str, Any] | None:
    """What the backend would send for a one-line text request, without sending it (None: not a vendor API)."""
    request = getattr(backend, "request", None)
    model = getattr(backend, "model", None)
    if request is None or model is None:
        return None
    _, sent = request(model, [Message("user", [TextPart("ping")])], [], None,
                      4096)  # the agent loop's default output budget
    return {k: sent[k] for k in SENT_FIELDS if k in sent}


def refusals(preset: Preset, sent: dict[str, Any] | None, role: str = "") -> list[str]:
    """Where what is (or was) sent is not the paper's setting: a temperature not sent or dropped, thinking not off."""
    if not sent:
        return []
    who = f"{role}: " if role else ""
    model = ", ".join(map(str, _values(sent.get("model", "the model"))))
    notes = []
    temperatures = _values(sent.get("temperature"))
    if preset.temperature is not None:
        if sent.get("temperature_rejected"):
            notes.append(f"{who}{model} refused temperature {preset.temperature:g} (the paper's); sent none after "
                         f"it: {str(_first(sent['temperature_rejected']))[:160]}")
        elif any(t is None for t in temperatures):
            notes.append(f"{who}{model}: no temperature sent (the vendor's default applies); the paper uses "
                         f"{preset.temperature:g}")
        elif any(t != preset.temperature for t in temperatures):
            notes.append(f"{who}{model}: temperature {', '.join(map(str, temperatures))} sent; the paper uses "
                         f"{preset.temperature:g}")
    wanted = (preset.thinking or {}).get(role)
    thinking = _values(sent.get("thinking"))
    if wanted == "off" and any(_thinks(t) for t in thinking):
        notes.append(f"{who}{model} cannot turn thinking off; sent {json.dumps(_first(sent['thinking']))} "
                     "(the paper disables thinking for the benchmark model)")
    if wanted == "on" and not any(_thinks(t) for t in thinking) and not sent.get("reasoning_effort"):
        notes.append(f"{who}{model}: no thinking sent (the paper enables thinking for exploration)")
    return notes


def _values(value: Any) -> list[Any]:
    """A field of one request, or the list of distinct values a run summary keeps."""
    return value if isinstance(value, list) else [value]


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else value


def _thinks(thinking: Any) -> bool:
    """Whether a sent thinking setting leaves thinking on (a zero budget, 'none' or 'disabled' is off)."""
    if not thinking:
        return False
    if isinstance(thinking, dict):  # Gemini: thinking_budget or thinking_level; Anthropic: type, budget_tokens
        if thinking.get("type") == "disabled" or thinking.get("thinking_budget", thinking.get("budget_tokens")) == 0:
            return False
        return str(thinking.get("thinking_level", "")).lower() != "none"  # a lowest level (LOW, MINIMAL) still thinks
    return str(thinking).lower() not in ("none", "off", "disabled", "0")


def sent_summary(traces: Iterable[Path]) -> dict[str, Any]:
    """Every distinct value of each sent field over all model requests of the given trace files (agent turns and
    the model router's classification), and how many requests that was."""
    seen: dict[str, list[Any]] = {}
    requests = unreadable = 0
    for path in traces:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line) if line.strip() else {}
            except json.JSONDecodeError:  # a line cut short by a kill: counted, never guessed
                unreadable += 1
                continue
            if event.get("event") not in ("assistant", "route") or not event.get("sent"):  # route: classification
                continue
            requests += 1
            for key in SENT_FIELDS:
                if key in event["sent"]:
                    values = seen.setdefault(key, [])
                    if event["sent"][key] not in values:
                        values.append(event["sent"][key])
    # the settings no request carried (the vendor's default applied), so an absent field is never read as a value
    not_sent = [k for k in ("temperature", "thinking", "reasoning_effort", "service_tier") if k not in seen]
    return {"requests": requests, **({"unreadable_trace_lines": unreadable} if unreadable else {}), **seen,
            "not_sent": not_sent if requests else []}


def run_traces(run_dir: Path) -> list[Path]:
    """The trace files of a run folder, in a stable order."""
    return sorted(Path(run_dir).glob("traces/*/trace.jsonl"))


def say(notes: list[str], prog: str) -> None:
    """Each difference from the paper, once, on stderr."""
    for note in notes:
        print(f"{prog}: preset paper: {note}", file=sys.stderr)


@dataclass
class Chosen:
    """The preset a command runs under and every difference said so far (so each is said only once)."""

    preset: Preset
    notes: list[str]

    def check(self, sent: dict[str, Any] | None, prog: str, role: str = "") -> None:
        """Say the refusals found in what is (or was) sent that were not said yet, and keep them."""
        new = [n for n in refusals(self.preset, sent, role) if n not in self.notes]
        say(new, prog)
        self.notes.extend(new)

    def record(self) -> dict[str, Any]:
        return self.preset.record(self.notes)


def from_args(args: argparse.Namespace, build_parser: Callable[[], argparse.ArgumentParser], app: str,
              argv: list[str]) -> Chosen | None:
    """Apply `--preset` (if given) to the parsed options and say how the command line departs from it."""
    if not getattr(args, "preset", None):
        return None
    preset = PRESETS[app, args.preset]
    chosen = Chosen(preset, apply(args, preset, given_dests(build_parser, argv)))
    say(chosen.notes, app)
    return chosen


def sent_record(run_dir: Path | None, meta: dict[str, Any], app: str = "illusion-agent") -> dict[str, Any]:
    """model.json's account of a run: what its requests sent, the prompts' hashes, and the preset with every
    difference from the paper (those found in the requests added, so the record holds what the console said)."""
    sent = sent_summary(run_traces(run_dir)) if run_dir else {"requests": 0}
    record: dict[str, Any] = {"sent": sent, "prompts": meta.get("prompts", {})}
    if preset := meta.get("preset"):
        known = PRESETS.get((app, preset.get("name")))
        notes = list(preset.get("notes", []))
        if known:
            notes += [n for n in refusals(known, sent) if n not in notes]
        record["preset"] = {**preset, "notes": notes}
    return record
