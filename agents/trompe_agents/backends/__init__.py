"""Model backends: one module per vendor or kind, each a plugin registering through `register_backends`."""
