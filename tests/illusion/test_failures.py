"""Failures are never answers: `illusion-agent` through the loopback fake vendors and the function backend.

A wrong key, a wrong URL path, a dead host, an empty reply or a spent quota ends as a failure with its kind: `ask`
exits non-zero with one line naming the vendor, the URL and the cause; `run` stops early when the first samples
fail alike, counts failures in its summary, writes -1 for them in the DataCV submission, and `--retry-errors`
redoes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from netkit import free_port

from trompe_kernel.exits import OK, STOPPED, UNANSWERED
from trompe_agents.illusion.cli import main
from runlines import written
from trompe_agents.illusion.runner import STOP_AFTER
from trompe_agents.illusion.stats import rate
from trompe_agents.testing import FakeVendor, Reply, final
from trompe_agents.trace import read_events

ANSWER = '{"reasons": "measured", "answer": "yes"}'


@pytest.fixture(autouse=True)
def keys_and_scripts(monkeypatch, scripted_on_path):
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.setenv(variable, "test-key")


def ask(image: Path, tmp_path: Path, *backend: str) -> int:
    return main(["--max-retries", "1", *backend, "ask", str(image), "Are the two circles the same size?",
                 "--router", "regex", "--trace", str(tmp_path / "t")])


def run(probe_dir: Path, out: Path, *options: str) -> int:
    return main(["run", "--dataset", str(probe_dir), "--task", "1", "--out", str(out), "--router", "regex",
                 "--no-progress", "--concurrency", "1", "--max-retries", "1", *options])


@pytest.mark.parametrize(("kind", "fault", "words"), [
    ("anthropic", "auth", ["claude", "auth", "401", "API key"]),
    ("gemini", "not_found", ["gemini", "not_found", "404", "--model and --base-url"]),
    ("responses", "monthly_quota", ["openai", "credit", "insufficient_quota", "--fallback-model"]),
])
def test_ask_with_a_vendor_error_exits_non_zero_naming_vendor_url_and_cause(probes, tmp_path, capsys, kind,
                                                                            fault, words):
    backend = {"anthropic": "claude", "gemini": "gemini", "responses": "openai"}[kind]
    with FakeVendor(kind) as fake:
        code = ask(probes[0].images[0], tmp_path, "--backend", backend, "--model", f"fault-{fault}",
                   "--base-url", fake.base_url)
    captured = capsys.readouterr()
    assert code == UNANSWERED and "answer:" not in captured.out  # never a made-up answer
    # after the one-line notice that fault-* models are unknown to the catalogue
    [line] = [line for line in captured.err.splitlines() if line.startswith("illusion-agent ask: no answer")]
    assert fake.url in line
    assert all(word in line for word in words), line


def test_ask_against_a_dead_host_fails_at_once_with_a_hint_for_a_dead_host(probes, tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}/v1"
    code = main(["--max-retries", "4", "--backend", "openai-chat", "--model", "m", "--base-url", url, "ask",
                 str(probes[0].images[0]), "Is it?", "--router", "regex", "--trace", str(tmp_path / "t")])
    line = capsys.readouterr().err.splitlines()[0]
    assert code == UNANSWERED and "(connection)" in line and url in line and "--base-url" in line
    assert "--fallback-model" not in line
    answer = [e for e in read_events(tmp_path / "t") if e["event"] == "answer"]
    assert [e["rounds"] for e in answer] == [1]  # one attempt, no retries, no rescue


def test_an_empty_reply_is_never_sent_back_and_the_model_is_re_prompted(probes, tmp_path, capsys):
    with FakeVendor("anthropic", [Reply(text=""), final(ANSWER)]) as fake:
        code = ask(probes[0].images[0], tmp_path, "--backend", "claude", "--model", "claude-test", "--base-url",
                   fake.base_url)
    assert code == OK and "answer: yes" in capsys.readouterr().out
    second = fake.bodies[1]["messages"]
    assert all(m["content"] not in ([], "", None) for m in second)  # no empty assistant turn (a 400 for real)
    assert "assistant" not in {m["role"] for m in second} and "Your reply was empty" in json.dumps(second[-1])
    assert [e["event"] for e in read_events(tmp_path / "t")].count("empty_reply") == 1


def test_a_model_that_only_replies_empty_is_a_failure_of_kind_empty_reply(probes, tmp_path, capsys):
    with FakeVendor("gemini", [Reply(text="")]) as fake:
        code = ask(probes[0].images[0], tmp_path, "--backend", "gemini", "--model", "gemini-3-flash-preview",
                   "--base-url", fake.base_url)
    assert code == UNANSWERED and "(empty_reply)" in capsys.readouterr().err
    assert len(fake.requests) == 2


def test_run_stops_early_on_a_wrong_key_and_retry_errors_redoes_the_failed_samples(probe_dir, probes, tmp_path,
                                                                                 capsys):
    out = tmp_path / "run"
    with FakeVendor("anthropic", [final(ANSWER)]) as fake:
        stopped = run(probe_dir, out, "--backend", "claude", "--model", "fault-auth", "--base-url", fake.base_url)
        err = capsys.readouterr().err
        failed = written(out)
        assert stopped == STOPPED and len(failed) == STOP_AFTER < len(probes)  # the dataset was not burnt
        assert f"the first {STOP_AFTER} samples failed with the same error" in err and "auth" in err
        assert all(r["answer"] is None and r["agent"] is None and r["error_kind"] == "auth" for r in failed.values())

        assert main(["submit", str(out)]) == OK
        rows = (out / "submission_datacv_task1.txt").read_text().split()
        assert rows[1::2] == ["-1"] * len(probes)  # failed and never-run samples: the "no answer" code

        plain = run(probe_dir, out, "--backend", "claude", "--model", "claude-test", "--base-url", fake.base_url)
        resumed = written(out)
        assert plain == UNANSWERED and all(resumed[i]["error_kind"] == "auth" for i in failed)  # kept as failed
        assert "failed 3 (auth 3)" in capsys.readouterr().out

        fixed = run(probe_dir, out, "--backend", "claude", "--model", "claude-test", "--base-url", fake.base_url,
                    "--retry-errors")
    records = written(out)
    assert fixed == OK and all(r["answer"] == "yes" and r["agent"] == "main" for r in records.values())
    assert "failed 0" in capsys.readouterr().out


def test_run_on_a_spent_quota_stops_with_the_quota_hint(probe_dir, tmp_path, capsys):
    with FakeVendor("gemini") as fake:
        code = run(probe_dir, tmp_path / "run", "--backend", "gemini", "--model", "fault-daily_quota",
                   "--base-url", fake.base_url)
    err = capsys.readouterr().err
    assert code == STOPPED and "quota" in err and "wait for it to reset" in err and "--fallback-model" in err


def test_retry_errors_redoes_every_sample_without_a_model_answer_including_old_defaults(probe_dir, probes,
                                                                                       tmp_path, capsys):
    out = tmp_path / "run"
    assert run(probe_dir, out, "--backend", "function", "--model", "scripted:never_valid") == UNANSWERED
    summary = capsys.readouterr().out
    assert f"answered 0 (main 0, rescue 0), failed {len(probes)} (invalid_answer {len(probes)})" in summary
    lines = (out / "results.jsonl").read_text().splitlines()
    old = {**json.loads(lines[0]), "answer": "no", "agent": "default", "error_kind": None}  # an older run's default
    (out / "results.jsonl").write_text("\n".join([json.dumps(old), *lines[1:]]) + "\n")
    assert run(probe_dir, out, "--backend", "function", "--model", "scripted:line_then_yes",
               "--retry-errors") == OK
    assert all(r["agent"] == "main" and r["answer"] == "yes" for r in written(out).values())
    line = capsys.readouterr().out.splitlines()[0]
    assert f"answered {len(probes)} (main {len(probes)}, rescue 0), failed 0" in line
    assert "accuracy 50.0% [" in line and "counting failures as wrong" in line


def test_no_tools_baseline_and_compare_show_the_tool_effect_side_by_side(probe_dir, probes, tmp_path, capsys):
    with_tools, without = tmp_path / "tools", tmp_path / "none"
    assert run(probe_dir, with_tools, "--backend", "function", "--model", "scripted:line_then_yes") == OK
    assert run(probe_dir, without, "--backend", "function", "--model", "scripted:answers_by_offer",
               "--no-tools") == OK
    events = read_events(without / written(without)[probes[0].id]["trace"])
    start = next(e for e in events if e["event"] == "start")
    assert start["tools"] == [] and json.loads((without / "run.json").read_text())["no_tools"] is True
    capsys.readouterr()
    assert main(["compare", str(with_tools), str(without)]) == OK
    text = capsys.readouterr().out
    yes = sum(s.answer == "yes" for s in probes)
    overall = next(line for line in text.splitlines() if line.startswith("all "))
    assert overall.split()[2:5] == rate(yes, len(probes)).split() + [f"n={len(probes)}"]  # right on yes-probes
    assert f"{len(probes)} samples changed outcome:" in text  # answers_by_offer says no without tools: all flip
    html = (without / "report" / "compare.html").read_text()
    assert "<table class='flips'>" in html and probes[0].id in html
