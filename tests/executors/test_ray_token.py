"""`--executor ray` on a real `ray start` cluster with Ray's token authentication (RAY_AUTH_MODE=token).

Set up as docs/scaling.md says and as Ray's token guide does (https://docs.ray.io/en/latest/ray-security/
token-auth.html): `ray get-auth-token --generate` on the head writes ~/.ray/auth_token, the head and every node
run `ray start` with RAY_AUTH_MODE=token, and a second node is given the token as RAY_AUTH_TOKEN. A driver with
the token runs the batch; one without it, or with another, stops with trompe's one-line refusal.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

if os.environ.get("CI"):
    import ray  # noqa: F401  CI installs the [ray] extra: a missing Ray fails there instead of skipping
else:
    pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'trompe[ray]')")

from executorkit import SCRIPTED, result_lines, run_cli  # noqa: E402
from netkit import free_port  # noqa: E402

pytestmark = pytest.mark.slow  # a two-node Ray cluster started with `ray start`

RAY = str(Path(sys.executable).with_name("ray"))


def ray_start(log: Path, env: dict, *args: str) -> subprocess.Popen:
    """`ray start ... --block`, which stops its node's processes when it gets SIGTERM; returns once it is up."""
    small = ("--disable-usage-stats", "--object-store-memory", str(100 << 20))
    with log.open("w") as out:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen([RAY, "start", "--block", *small, *args], env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while "Ray runtime started" not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"ray start {' '.join(args)} did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    return proc


@pytest.fixture(scope="module")
def token_cluster(tmp_path_factory):
    """A head (1 CPU) holding the token in its home folder and a second node (1 CPU) given it as RAY_AUTH_TOKEN."""
    root = tmp_path_factory.mktemp("ray-token")
    head_home, node_home = root / "head-home", root / "node-home"
    head_home.mkdir()
    node_home.mkdir()
    sessions = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's socket paths must stay under 108 bytes
    base = {**os.environ, "TMPDIR": str(root), "RAY_AUTH_MODE": "token",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(SCRIPTED), os.environ.get("PYTHONPATH")]))}
    generated = subprocess.run([RAY, "get-auth-token", "--generate"], env={**base, "HOME": str(head_home)},
                               capture_output=True, text=True, check=True)
    token = generated.stdout.strip()
    assert token and (head_home / ".ray" / "auth_token").read_text().strip() == token
    port = free_port()
    nodes = []
    try:
        nodes.append(ray_start(root / "head.log", {**base, "HOME": str(head_home)}, "--head", "--port", str(port),
                               "--num-cpus", "1", "--include-dashboard=false", "--temp-dir", sessions,
                               "--dashboard-agent-listen-port", str(free_port())))
        nodes.append(ray_start(root / "node.log", {**base, "HOME": str(node_home), "RAY_AUTH_TOKEN": token},
                               "--address", f"127.0.0.1:{port}", "--num-cpus", "1",
                               "--dashboard-agent-listen-port", str(free_port())))
        yield {"address": f"127.0.0.1:{port}", "home": head_home}
    finally:
        for node in reversed(nodes):  # SIGTERM: the node drains and stops the processes it started
            node.terminate()
            node.wait(timeout=60)
        shutil.rmtree(sessions, ignore_errors=True)


def run_against(cluster, probe_dir, out, monkeypatch, **env) -> subprocess.CompletedProcess:
    """`illusion-agent run --executor ray --ray-address` on the cluster, from the head's home, with `env` set."""
    monkeypatch.setenv("HOME", str(cluster["home"]))
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    proc = run_cli(probe_dir, out, "--executor", "ray", "--ray-address", cluster["address"], "--workers", "2",
                   model="scripted:line_then_yes")
    stdout, stderr = proc.communicate(timeout=180)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout.decode(), stderr.decode())


def test_a_driver_with_the_token_runs_the_batch(token_cluster, probe_dir, probes, tmp_path, monkeypatch):
    out = tmp_path / "run"
    done = run_against(token_cluster, probe_dir, out, monkeypatch, RAY_AUTH_MODE="token")
    assert done.returncode == 0, done.stderr
    assert len(result_lines(out)) == len(probes)


@pytest.mark.parametrize("env, sent", [
    ({}, "RAY_AUTH_MODE is not set, so no token was sent"),  # the case: the token file alone is not enough
    ({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "not-the-cluster-s"}, "the token sent is not the cluster's"),
], ids=["no-auth-mode", "wrong-token"])
def test_a_driver_without_the_token_is_refused_in_one_line(token_cluster, probe_dir, tmp_path, monkeypatch,
                                                           env, sent):
    # Ray tries 20 times, a second apart, before giving up; one try is enough to see what it answers
    started = time.monotonic()
    done = run_against(token_cluster, probe_dir, tmp_path / "run", monkeypatch,
                       RAY_gcs_server_port_wait_time_s="1", **env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"illusion-agent run: --ray-address {token_cluster['address']}: the Ray cluster "
                           "refused this driver's token"), done.stderr
    assert sent in line and "export RAY_AUTH_MODE=token" in line
    assert time.monotonic() - started < 60


def test_token_mode_with_no_token_anywhere_is_refused_before_connecting(probe_dir, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    cluster = {"address": f"127.0.0.1:{free_port()}", "home": home}  # nobody listens: Ray stops before dialling
    done = run_against(cluster, probe_dir, tmp_path / "run", monkeypatch, RAY_AUTH_MODE="token")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "RAY_AUTH_MODE=token, but no token was found here" in done.stderr.strip().splitlines()[-1]
