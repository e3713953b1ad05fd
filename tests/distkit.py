"""Third-party distributions laid out as pip installs one: a package beside its *.dist-info holding METADATA and
entry_points.txt (https://packaging.python.org/en/latest/specifications/recording-installed-packages/,
https://packaging.python.org/en/latest/specifications/entry-points/), so importlib.metadata finds a folder of them
on sys.path (or PYTHONPATH) as it finds an installed one, and the real discovery path loads them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

GROUP = "trompe"  # trompe_kernel.manager.GROUP, written out: the tests check the name users write


def install_distribution(site: Path, name: str, entry_points: dict[str, str], package: Path | None = None,
                         version: str = "0.1.0", group: str = GROUP) -> Path:
    """Write a package (copied from `package`) and its *.dist-info into `site`; returns `site`."""
    site.mkdir(parents=True, exist_ok=True)
    if package is not None:
        shutil.copytree(package, site / package.name)
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")
    return site


def install_module(site: Path, name: str, plugin: str, source: str, group: str = GROUP, module: str = "") -> Path:
    """A distribution `name` whose entry point `plugin` is a one-file package `module` (default: NAME_plugin)
    holding `source`; returns `site`."""
    module = module or f"{name.replace('-', '_')}_plugin"
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(source)
    return install_distribution(site, name, {plugin: module}, group=group)


def env_with(site: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment for a server subprocess: no inherited TROMPE_* settings, `site` on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TROMPE_")}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env | extra
