"""The function backend: a Python callable plays the model, found by `module:function` or passed directly."""

from __future__ import annotations

import sys
import textwrap

import pytest

from trompe_agents.backends.base import BackendError, BackendOptions
from trompe_agents.backends.function import FunctionBackend, FunctionSettings, tool_call
from trompe_agents.messages import Message, TextPart, ToolCall, ToolSchema
from trompe_agents.plugins import backend_names, create_backend, describe_backends

TOOLS = [ToolSchema("crop", "Cut out a box.", {"type": "object", "properties": {}})]
QUESTION = [Message("user", [TextPart("Is it red?")])]


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A user's own module on sys.path, as `--model mymodel:decide` would find it."""
    (tmp_path / "mymodel.py").write_text(textwrap.dedent('''
        from trompe_agents.backends.function import tool_call

        def decide(messages, tools):
            if messages[-1].role == "tool":
                return {"answer": "red" if "img_001" in messages[-1].text else "unsure"}
            return tool_call(tools[0].name, image="original", box=[0, 0, 4, 4])

        async def slow(messages, tools):
            return "plain text"

        NOT_CALLABLE = 3
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))


async def test_module_function_from_the_command_line_spelling(user_module):
    backend = create_backend("function", BackendOptions(model="mymodel:decide"))
    first = await backend.complete(QUESTION, TOOLS)
    call = first.message.tool_calls[0]
    assert (call.name, call.arguments, first.stop_reason) == ("crop", {"image": "original", "box": [0, 0, 4, 4]},
                                                              "tool_use")
    reply = Message("tool", [TextPart("img_001 4x4: crop")], tool_call_id=call.id, tool_name="crop")
    final = await backend.complete([*QUESTION, first.message, reply], TOOLS)
    assert (final.message.text, final.stop_reason, final.model) == ('{"answer": "red"}', "end_turn",
                                                                    "mymodel:decide")


async def test_async_functions_and_dotted_spelling(user_module):
    backend = create_backend("function", BackendOptions(model="mymodel.slow"))
    assert (await backend.complete(QUESTION, TOOLS)).message.text == "plain text"


@pytest.mark.parametrize(("spec", "message"), [
    ("nomodule_xyz:decide", "cannot import module 'nomodule_xyz'"),
    ("mymodel:missing", "no callable 'missing'"),
    ("mymodel:NOT_CALLABLE", "no callable 'NOT_CALLABLE'"),
    ("justaname", "must be 'module:function'"),
])
def test_bad_function_spec_says_which_part_is_wrong(user_module, spec, message):
    with pytest.raises(BackendError, match=message):
        create_backend("function", BackendOptions(model=spec))


def test_module_in_the_working_directory_is_found_as_the_readme_runs_it(tmp_path, monkeypatch):
    """`illusion-agent --model mymodel:decide` is a console script: the working directory is not on sys.path."""
    (tmp_path / "cwd_model_qa.py").write_text("def decide(messages, tools):\n    return 'from cwd'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    backend = create_backend("function", BackendOptions(model="cwd_model_qa:decide"))
    assert backend.fn.__module__ == "cwd_model_qa"


def test_missing_model_says_what_to_pass():
    with pytest.raises(BackendError, match="--model module:function"):
        create_backend("function", BackendOptions())


async def test_callable_passed_directly_and_reply_shapes():
    replies = iter([[tool_call("crop", image="a"), tool_call("crop", image="b")],
                    Message("assistant", [TextPart("thinking")], [ToolCall("x", "crop", {})]),
                    42])
    backend = FunctionBackend.from_options(BackendOptions(
        settings=FunctionSettings(function=lambda m, t: next(replies))))
    two = await backend.complete(QUESTION, TOOLS)
    assert [c.arguments["image"] for c in two.message.tool_calls] == ["a", "b"]
    assert two.message.tool_calls[0].id != two.message.tool_calls[1].id
    full = await backend.complete(QUESTION, TOOLS)
    assert full.message.text == "thinking" and full.message.tool_calls[0].id == "x"
    with pytest.raises(BackendError, match="returned int"):
        await backend.complete(QUESTION, TOOLS)


def test_plugins_list_builtins_and_report_broken_ones_per_backend():
    names = backend_names()
    assert {"function", "replay"} <= set(names)
    rows = {r["name"]: r for r in describe_backends()}
    assert rows["function"]["loaded"] and rows["replay"]["loaded"]
    for row in rows.values():  # a backend whose module fails to import is listed with its reason
        assert row["loaded"] or row["error"]
    with pytest.raises(BackendError, match="unknown backend 'nope'; available: .*function"):
        create_backend("nope")


def test_a_backend_that_fails_to_import_does_not_hide_the_others(fresh_plugins, capsys):
    from distkit import install_module

    from trompe_agents import plugins

    install_module(fresh_plugins, "broken-models", "broken", "import trompe_no_such_module_xyz\n")
    assert "function" in plugins.backend_names()
    assert "trompe_no_such_module_xyz" in plugins.load_errors()["broken"]
    assert "trompe: skipping plugin 'broken' (broken_models_plugin) failed to import" in capsys.readouterr().err
    with pytest.raises(BackendError, match="backend 'broken' could not be loaded: ModuleNotFoundError"):
        plugins.create_backend("broken")
