"""`illusion-agent` commands as a person types them: ask, run, report, submit."""


import pytest

from trompe_agents.illusion.cli import main
from runlines import written
from trompe_agents.trace import read_events

pytestmark = pytest.mark.usefixtures("scripted_on_path")


@pytest.mark.parametrize("order", ["global-first", "global-after"])
def test_ask_prints_answer_reasons_and_trace(probes, tmp_path, capsys, order):
    backend = ["--backend", "function", "--model", "scripted:line_then_yes"]
    ask = ["ask", str(probes[0].images[0]), probes[0].question, "--trace", str(tmp_path / "t")]
    assert main(backend + ask if order == "global-first" else ask + backend) == 0
    out = capsys.readouterr().out
    assert "answer: yes" in out and "reasons: the reference line shows it" in out
    assert f"trace: {tmp_path / 't' / 'trace.jsonl'}" in out and "answered by: main agent" in out
    assert [e["event"] for e in read_events(tmp_path / "t")].count("tool_result") == 1


def test_ask_names_a_missing_image(tmp_path):
    with pytest.raises(SystemExit, match="image: no such file"):
        main(["--backend", "function", "--model", "scripted:line_then_yes", "ask", str(tmp_path / "x.png"), "Q?"])


def test_run_report_submit(probe_dir, probes, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["run", "--dataset", str(probe_dir), "--task", "1", "--out", str(out), "--limit", "4",
            "--backend", "function", "--model", "scripted:line_then_yes", "--no-progress", "--normalize",
            "--max-rounds", "5"]
    assert main(args) == 0
    assert "4 results" in capsys.readouterr().out
    with pytest.raises(SystemExit, match=r"holds another run: task \(1 -> 2\)"):
        main([*args[:4], "2", *args[5:]])
    records = written(out)
    assert len(records) == 4
    first = read_events(out / records[probes[0].id]["trace"])
    assert any(e["event"] == "normalize" for e in first)
    assert [e for e in first if e["event"] == "start"][0]["max_rounds"] == 5
    assert main(["report", str(out)]) == 0
    assert (out / "report" / "index.html").is_file()
    assert main(["submit", str(out), "--format", "datacv"]) == 0
    rows = (out / "submission_datacv_task1.txt").read_text().splitlines()
    assert rows == [f"{i} 1" for i in range(4)] + [f"{i} -1" for i in range(4, 8)]


@pytest.mark.parametrize("bad, message", [
    (["--rate-limit", "0"], "rate limit must be > 0 requests per minute, got 0"),
    (["--allow", "draw_lime"], "allow: no such tool draw_lime"),
    (["--tools", "nosuchtag"], r"unknown tag\(s\) nosuchtag"),
])
def test_run_rejects_bad_settings_before_answering_anything(probe_dir, tmp_path, bad, message):
    out = tmp_path / "run"
    args = ["run", "--dataset", str(probe_dir), "--out", str(out), "--backend", "function",
            "--model", "scripted:line_then_yes", "--no-progress", *bad]
    with pytest.raises(SystemExit, match=message):
        main(args)
    assert not out.exists()  # no results of default answers to mistake for a real run


def test_ask_rejects_an_unknown_allowed_tool(probes, tmp_path):
    with pytest.raises(SystemExit, match="allow: no such tool draw_lime"):
        main(["--backend", "function", "--model", "scripted:line_then_yes", "ask", str(probes[0].images[0]),
              probes[0].question, "--allow", "draw_lime", "--trace", str(tmp_path / "t")])


def test_resuming_with_another_dataset_is_refused_and_nothing_is_lost(probe_dir, tmp_path):
    out = tmp_path / "run"
    scripted = ["--backend", "function", "--model", "scripted:line_then_yes", "--no-progress", "--out", str(out)]
    assert main(["run", "--dataset", str(probe_dir), "--limit", "2", *scripted]) == 0
    fewer = tmp_path / "fewer" / "probes.jsonl"
    fewer.parent.mkdir()
    lines = (probe_dir / "probes.jsonl").read_text().splitlines(keepends=True)
    fewer.write_text("".join(lines[:4]).replace('"images/', f'"{probe_dir}/images/'))
    refused = (r"holds another run: dataset\.answer_types\.yesno \(2 -> 4\); dataset\.samples \(2 -> 4\); "
               r"dataset\.sha256 .*start a new folder")
    with pytest.raises(SystemExit, match=refused):  # its images are the probes' own, named by absolute paths
        main(["run", "--dataset", str(fewer), "--allow-images-outside", *scripted])
    assert len(written(out)) == 2
    with pytest.raises(SystemExit, match="or pass --allow-change dataset to continue it"):  # a larger --limit
        main(["run", "--dataset", str(probe_dir), *scripted])
    assert main(["run", "--dataset", str(probe_dir), "--allow-change", "dataset", *scripted]) == 0
    assert len(written(out)) == 8
