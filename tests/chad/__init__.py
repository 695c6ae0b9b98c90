"""CHAD's four stages."""
