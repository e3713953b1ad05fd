"""The SEVEX accuracy plot reads as written: ticks 0.25 and 0.75 (not 0.2 and 0.8) and both axes titled."""

import re

from trompe_agents.sevex.show import accuracy_plot


def test_accuracy_ticks_keep_two_decimals_and_both_axes_are_titled():
    svg = accuracy_plot([{"iteration": 0, "best": 0.25, "reward": 0.25, "node": 0},
                         {"iteration": 1, "best": 0.75, "reward": 0.75, "node": 1}])
    ticks = re.findall(r'text-anchor="end">([^<]+)</text>', svg)
    assert ticks == ["0", "0.25", "0.5", "0.75", "1"]
    assert "iteration (0..1)</text>" in svg and "dev accuracy (0-1)</text>" in svg
