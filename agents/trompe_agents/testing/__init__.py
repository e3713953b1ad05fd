"""Test helpers other trompe packages (and users' own tests) reuse: fake vendor APIs, tiny dataset files."""

from .fake_vendors import Call, FakeVendor, Recorded, Reply, Tokens, call, final, tool_results

__all__ = ["Call", "FakeVendor", "Recorded", "Reply", "Tokens", "call", "final", "tool_results"]
