"""Cost accounting with real token counts: explorer and target behind loopback fake vendor servers.

The explorer speaks Anthropic Messages and the target Gemini generateContent, each through its real SDK; the
scripted models decide what to say and every reply carries token counts that depend on the role, so the
run's totals per role, per stage and per iteration, and `sevex apply`'s tokens per sample, can be checked
against what the servers reported.
"""

from __future__ import annotations

import pytest
import base64
import json

import scripted_models

from trompe_agents.messages import ImagePart, Message, TextPart
from trompe_agents.sevex.cli import main
from trompe_agents.sevex.show import render
from trompe_agents.testing import FakeVendor, Reply, Tokens

pytestmark = pytest.mark.os_sandbox  # runs generated code through the OS sandbox

TOKENS = {"ideator": Tokens(1000, 50, 7), "engineer": Tokens(2000, 300, 11), "analyst": Tokens(1500, 120, 13),
          "target": Tokens(400, 5, 0)}
STAGES = {"ideator": "expansion", "engineer": "implementation", "analyst": "backpropagation", "target": "execution"}
ROLES = {"You are the Ideator": "ideator", "You are the Engineer": "engineer", "You are the Analyst": "analyst"}


def explorer_script(log: list):
    def script(body, n):
        content = body["messages"][0]["content"]
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        role = next(r for marker, r in ROLES.items() if marker in text)
        log.append(role)
        return Reply(text=scripted_models.explorer([Message("user", [TextPart(text)])], []), usage=TOKENS[role])
    return script


def target_script(log: list):
    def script(body, n):
        parts = []
        for part in body["contents"][-1]["parts"]:
            blob = part.get("inlineData") or part.get("inline_data")
            parts.append(ImagePart("x", base64.urlsafe_b64decode(blob["data"])) if blob
                         else TextPart(part.get("text", "")))
        log.append("target")
        return Reply(text=scripted_models.target([Message("user", parts)], []), usage=TOKENS["target"])
    return script


def total(roles: list[str]) -> dict[str, int]:
    return {"input_tokens": sum(TOKENS[r].input for r in roles), "output_tokens": sum(TOKENS[r].output for r in roles),
            "reasoning_tokens": sum(TOKENS[r].reasoning for r in roles)}


def tokens_of(usage: dict) -> dict[str, int]:
    return {k: usage[k] for k in ("input_tokens", "output_tokens", "reasoning_tokens")}


def test_tokens_per_role_stage_iteration_and_sample_match_the_vendors(tmp_path, dev_set, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_KEY", "test-key")
    log: list[str] = []  # every request, in the order the servers answered them
    run = tmp_path / "run"
    with FakeVendor("anthropic", explorer_script(log)) as explorer, FakeVendor("gemini", target_script(log)) as target:
        servers = ["--explorer-backend", "claude", "--explorer-model", "claude-test", "--explorer-base-url",
                   explorer.base_url, "--explorer-api-key-env", "FAKE_KEY", "--target-backend", "gemini",
                   "--target-model", "gemini-test", "--target-base-url", target.base_url,
                   "--target-api-key-env", "FAKE_KEY", "--max-retries", "0", "--no-progress"]
        assert main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), "--iterations", "2",
                     *servers]) == 0
        state = json.loads((run / "state.json").read_text())
        costs = state["costs"]
        # Per role and per stage: the sum of what the servers reported for that role's requests.
        assert set(costs["by_role"]) == set(log)
        for role in set(log):
            assert tokens_of(costs["by_role"][role]) == total([r for r in log if r == role]), role
            assert tokens_of(costs["by_stage"][STAGES[role]]) == total([r for r in log if STAGES[r] == STAGES[role]])
        # Per iteration: iteration 0 measures the root and grows its ideas; each later one starts with the engineer.
        starts = [i for i, r in enumerate(log) if r == "engineer"]
        segments = [log[a:b] for a, b in zip([0, *starts], [*starts, len(log)])]
        assert len(segments) == 3 and {k: tokens_of(v) for k, v in costs["by_iteration"].items()} == {
            str(i): total(seg) for i, seg in enumerate(segments)}
        assert [h["exploration_tokens"] for h in state["history"]][-1] == sum(
            sum(total(seg).values()) for seg in segments)
        page = render(run)  # the HTML view shows the same numbers
        assert f"<td>engineer</td><td>{costs['by_role']['engineer']['input_tokens']:,}</td>" in page
        assert f"<td>execution</td><td>{costs['by_stage']['execution']['input_tokens']:,}</td>" in page

        # apply: each sample's program asks the target once, so each sample costs one target reply.
        best = json.loads((run / "best" / "meta.json").read_text())
        asked_before = len(target.requests)
        capsys.readouterr()
        assert main(["apply", str(run), "--dataset", str(dev_set), "--include-dev", *servers[8:]]) == 0
        printed = capsys.readouterr().out
    lines = [json.loads(line) for line in next(run.glob("apply-probes-*.jsonl")).open()]
    per_sample = (len(target.requests) - asked_before) // len(lines)
    assert per_sample >= 1 and len(target.requests) - asked_before == per_sample * len(lines)
    assert all(tokens_of(line["usage"]) == total(["target"] * per_sample) for line in lines)
    assert f"accuracy {best['dev_accuracy']:.3f} on 6 samples" in printed
    assert f"{sum(total(['target'] * per_sample).values()):,} tokens per sample" in printed
