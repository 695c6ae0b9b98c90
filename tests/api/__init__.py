"""The entry points, the command line, and where errors point."""
