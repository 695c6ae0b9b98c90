"""The derivative rules: each against finite differences, and the registry."""
