"""The illusion agent: category-routed tool use for DataCV 2026 Task I (yes/no) and Task II (A-D)."""
