"""Deterministic cost: the measure itself, and the paper's bound on program families."""
