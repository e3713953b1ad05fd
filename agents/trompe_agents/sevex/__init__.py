"""SEVEX: discovering task-wise visual prompts by semantic exploration of an idea tree."""
