"""Option groups reach every command: each backend flag is on illusion-agent, on both SEVEX roles, and on any
`trompe` subcommand that builds a backend; a flag added to the group once appears everywhere."""

from __future__ import annotations

import argparse

import pytest

from trompe_agents import cli as trompe_cli, cliopts
from trompe_agents.backends.claude import ClaudeSettings
from trompe_agents.backends.gemini import GeminiSettings
from trompe_agents.cliopts import BACKEND, EXECUTOR, RUN, SERVER, Option, backend_options_from_args
from trompe_agents.illusion import cli as illusion_cli
from trompe_agents.sevex import cli as sevex_cli
from trompe_server import cli as server_cli

from clikit import commands


def flags(options: tuple[Option, ...], role: str = "") -> set[str]:
    return {option.flag(role) for option in options}


def every_command() -> dict[str, set[str]]:
    return {**commands(illusion_cli.build_parser(), "illusion-agent"), **commands(sevex_cli.build_parser(), "sevex"),
            **commands(trompe_cli.build_parser(), "trompe")}


# The commands that call a model, and the role prefixes their backends take; each also under `trompe`.
ALIAS_ROLES = {"illusion-agent": [""], "illusion-agent ask": [""], "illusion-agent run": [""],
               "sevex explore": ["target", "explorer"], "sevex apply": ["target"]}
TREE = {"illusion-agent": "trompe illusion", "sevex": "trompe sevex"}
BACKEND_ROLES = {**ALIAS_ROLES, **{f"{TREE[command.split()[0]]}{command[len(command.split()[0]):]}": roles
                                   for command, roles in ALIAS_ROLES.items()}}


@pytest.mark.parametrize("command", sorted(BACKEND_ROLES))
def test_every_backend_flag_is_on_every_command_that_calls_a_model(command):
    accepted = every_command()[command]
    for role in BACKEND_ROLES[command]:
        assert flags(BACKEND, role) <= accepted, sorted(flags(BACKEND, role) - accepted)
    assert flags(SERVER) <= accepted


def test_a_command_has_the_whole_backend_group_or_none_of_it():
    """A command that adds --backend (a plugin's `trompe` subcommand too) gets every other flag of the group."""
    for command, accepted in every_command().items():
        for role in ("", "target", "explorer"):
            if Option("backend", {}).flag(role) in accepted:
                assert flags(BACKEND, role) <= accepted, (command, sorted(flags(BACKEND, role) - accepted))
                assert role in BACKEND_ROLES.get(command, []), f"{command} calls a model: add it to BACKEND_ROLES"


def test_a_flag_added_to_the_group_once_reaches_every_command(monkeypatch):
    monkeypatch.setattr(cliopts, "BACKEND", (*BACKEND, Option("new-setting", {"help": "a new backend setting"})))
    found = every_command()
    for command, roles in BACKEND_ROLES.items():
        for role in roles:
            assert Option("new-setting", {}).flag(role) in found[command]


def test_executor_and_run_options_on_every_batch_command():
    found = every_command()
    for command in ("illusion-agent run", "sevex explore", "sevex apply"):
        assert flags(EXECUTOR) <= found[command]
        assert flags(RUN) - {"--limit"} <= found[command]
    assert "--limit" in found["illusion-agent run"] and "--limit" in found["sevex apply"]
    assert "--limit" not in found["sevex explore"]  # --dev-size says how many samples


@pytest.mark.parametrize("flag", ["--concurrency", "--limit"])
def test_run_counts_are_refused_below_one_in_illusion_agent_too(flag, capsys):
    with pytest.raises(SystemExit) as done:
        illusion_cli.main(["run", "--dataset", "d", "--out", "o", flag, "0"])
    assert done.value.code == 2 and f"argument {flag}: expected an integer >= 1, got '0'" in capsys.readouterr().err


def test_sevex_role_flags_reach_that_roles_backend_options():
    """The options sevex used to lack (--image-format, --keep-images, --retry-cap, --backend-option, --timeout,
    --service-tier) reach the role they are given for, and only that one."""
    args = sevex_cli.build_parser().parse_args(
        ["explore", "--out", "/tmp/never-written", "--target-image-format", "png", "--target-keep-images", "3",
         "--target-retry-cap", "5", "--target-backend-option", "temperature=0", "--target-timeout", "30",
         "--target-service-tier", "flex", "--explorer-keep-images", "all", "--max-retries", "2",
         "--explorer-max-retries", "7"])
    args.target_backend, args.explorer_backend = "gemini", "claude"
    target = backend_options_from_args(args, "sevex", "target")
    explorer = backend_options_from_args(args, "sevex", "explorer")
    assert (target.image_format, target.keep_images, target.retry_cap, target.settings, target.timeout,
            target.service_tier) == ("png", 3, 5.0, GeminiSettings(temperature=0.0), 30.0, "flex")
    assert (explorer.image_format, explorer.keep_images, explorer.retry_cap, explorer.settings, explorer.timeout,
            explorer.service_tier) == ("auto", None, 60.0, ClaudeSettings(), None, "standard")
    assert (target.max_retries, explorer.max_retries) == (2, 7)  # --max-retries: both; a role's own flag wins
    assert (target.thinking, explorer.thinking) == ("off", "medium")  # the SEVEX paper's defaults per role
    assert args.timeout == 120  # sevex's own --timeout stays the sandbox's wall time per program


def test_keep_images_default_follows_the_backend():
    parser = argparse.ArgumentParser()
    cliopts.add_backend_args(parser)
    assert backend_options_from_args(parser.parse_args(["--backend", "claude"]), "x").keep_images is None
    assert backend_options_from_args(parser.parse_args(["--backend", "hf"]), "x").keep_images == \
        cliopts.DEFAULT_KEEP_ROUNDS
    assert backend_options_from_args(parser.parse_args(["--backend", "hf", "--keep-images", "all"]),
                                     "x").keep_images is None


def test_the_server_command_has_no_model_options():
    assert not flags(BACKEND) & commands(server_cli.build_parser(), "trompe-server")["trompe-server"]
