"""`--model trompe`'s model_args and requests, in process: lmms-eval's own Instance objects handed to the model as
its evaluator hands them (args = context, gen_kwargs, doc_to_visual, doc_id, task, split; docs in task_dict)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("lmms_eval", reason="the lmms-eval extra is not installed (pip install 'trompe[lmms-eval]')")

from lmms_eval.api.instance import Instance  # noqa: E402
from PIL import Image  # noqa: E402

import lmmskit  # noqa: E402
from trompe_agents.illusion.lmms.cli import Trompe, default_out, settings_from_model_args, split_model_args  # noqa: E402
from trompe_kernel.exits import CommandExit  # noqa: E402

TASK, SPLIT = "some_image_task", "test"


pytestmark = pytest.mark.usefixtures("scripted_on_path")  # lmmskit's models, beside this file


def request(doc_id: int, context: str) -> Instance:
    return Instance("generate_until", (context, {"max_new_tokens": 16}, lambda doc: doc["visuals"], doc_id, TASK,
                                       SPLIT), idx=0, metadata={"task": TASK, "doc_id": doc_id, "repeats": 1})


def answer(model_args: str, docs: list[dict]) -> list[str]:
    """What the model returns for one request per doc, as lmms-eval's evaluator calls it."""
    model = Trompe.create_from_arg_string(model_args, {"batch_size": 1, "device": None})
    model.task_dict = {TASK: {SPLIT: docs}}
    return [r.text for r in model.generate_until([request(i, f"Question {i}?") for i in range(len(docs))])]


def test_lists_flags_and_the_no_tools_baseline_read_as_illusion_agent_options(tmp_path):
    assert split_model_args("backend=function,tools=core,analysis,max_rounds=10") == [
        ("backend", "function"), ("tools", "core,analysis"), ("max_rounds", "10")]
    settings = settings_from_model_args(f"backend=function,model=lmms_scripted:count_tools,tools=core,analysis,"
                                        f"allow=crop,draw_line,router=regex,rescue_rounds=2,out={tmp_path}")
    config = settings.config
    assert config.tags == ["core", "analysis"] and config.allow == ["crop", "draw_line"]
    assert config.router == "regex" and config.rescue_rounds == 2 and config.task == 2 and not config.no_tools
    assert settings.backend.name == "function" and settings.out == tmp_path
    assert settings_from_model_args("backend=function,model=lmms_scripted:count_tools,tools=none").config.no_tools
    limited = settings_from_model_args("backend=function,model=lmms_scripted:count_tools,rate_limit=30").backend
    assert limited._limiter.interval == 2.0 and limited.model == "lmms_scripted:count_tools"
    assert settings_from_model_args("backend=function,model=lmms_scripted:count_tools,normalize=true").config.normalize


@pytest.mark.parametrize(("model_args", "says"), [
    ("backend=function,model=m:f,colour=red", "unknown key 'colour'; accepted: allow, api_key_env"),
    ("backend=function,model=m:f,max_rounds=0", "max_rounds: expected an integer >= 1, got '0'"),
    ("backend=function,model=a,b", "'b' is not KEY=VALUE"),
    ("backend=function,model=m:f,no_tools=maybe", "no_tools: expected true or false, got 'maybe'"),
    ("backend=function,model=m:f,router=dice", "router: invalid choice: 'dice'"),
])
def test_a_bad_model_arg_ends_lmms_eval_with_one_line_naming_it(model_args, says, capsys):
    with pytest.raises(CommandExit) as ended:
        Trompe.create_from_arg_string(model_args)
    assert ended.value.code == 2 and says in ended.value.message
    assert capsys.readouterr().err.strip() == ended.value.message  # one line, said once


def test_traces_go_beside_lmms_eval_logs_in_the_folder_it_names_after_the_model():
    out = default_out("backend=function,model=mypkg.mod:decide", ["--model", "trompe", "--output_path", "/r/logs"])
    assert out.parent == Path("/r/logs/mypkg.mod__decide") and out.name.startswith("trompe_")
    assert default_out("backend=function", ["--model", "trompe"]).name.startswith("trompe-lmms-")


def test_with_and_without_tools_through_the_same_model(tmp_path):
    docs = [{"visuals": [Image.new("RGB", (24, 16), "white")]},
            {"visuals": [Image.new("RGB", (8, 8), "red"), Image.new("L", (8, 8), 90)]}]
    base = "backend=function,model=lmms_scripted:count_tools,router=regex"
    with_tools = answer(f"{base},tools=core,out={tmp_path / 'tools'}", docs)
    offered = int(with_tools[0].split()[0])
    assert offered > 0 and with_tools == [f"{offered} tools, 1 images", f"{offered} tools, 2 images"]
    assert answer(f"{base},tools=none,out={tmp_path / 'none'}", docs) == ["0 tools, 1 images", "0 tools, 2 images"]
    inputs = tmp_path / "none" / TASK / "1" / "inputs"
    assert Image.open(inputs / "image_2.png").getpixel((0, 0)) == 90  # the doc's pixels, losslessly


def test_a_doc_the_agent_cannot_take_is_an_empty_reply_and_a_listed_failure(tmp_path):
    docs = [{"visuals": ["/videos/clip.mp4"]}, {"visuals": [Image.new("RGB", (8, 8))]}]
    replies = answer(f"backend=function,model=lmms_scripted:count_tools,router=regex,out={tmp_path}", docs)
    assert replies[0] == "" and replies[1].endswith("tools, 1 images")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["requests"] == 2 and summary["answered"] == 1
    [failure] = summary["failures"]
    assert failure["doc_id"] == 0 and "visual 1 of the doc is a str" in failure["error"]
    lines = [json.loads(line) for line in (tmp_path / TASK / "requests.jsonl").read_text().splitlines()]
    assert sorted(line["doc_id"] for line in lines) == [0, 1]


def test_the_entry_point_the_tests_declare_is_pyprojects_and_lmms_eval_resolves_it_to_the_model():
    import tomllib

    from lmms_eval.models.registry_v2 import ModelRegistryV2

    from trompe_agents.illusion.lmms.manifest import MANIFEST

    declared = tomllib.loads((lmmskit.HERE.parents[1] / "pyproject.toml").read_text())["project"]["entry-points"]
    assert f"trompe = {declared['lmms_eval.models']['trompe']}" == lmmskit.ENTRY_POINT
    registry = ModelRegistryV2()  # lmms-eval's own checks: a subclass of lmms, simple as the manifest says
    registry.register_manifest(MANIFEST)
    assert registry.get_model_class("trompe") is Trompe
