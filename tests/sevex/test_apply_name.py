"""`sevex apply` keeps each test set's results: two datasets both called probes.jsonl get files of their own."""

from pathlib import Path

from trompe_agents.sevex.cli import apply_name


def test_two_test_sets_with_one_file_name_never_share_a_results_file(tmp_path, monkeypatch):
    seed1, seed7 = tmp_path / "seed1" / "probes.jsonl", tmp_path / "seed7" / "probes.jsonl"
    names = {apply_name(seed1, None, None), apply_name(seed7, None, None), apply_name(seed1, "test", None),
             apply_name(seed1, None, 3)}
    assert len(names) == 4 and all(n.startswith("apply-probes-") and n.endswith(".jsonl") for n in names)
    monkeypatch.chdir(tmp_path)
    assert apply_name(Path("seed1/probes.jsonl"), None, None) == apply_name(seed1, None, None)  # however named
