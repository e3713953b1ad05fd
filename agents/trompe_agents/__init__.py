"""trompe's agent side: MCP tool client, vendor backends, agent loop, and the apps built on them."""
