"""The optimiser: passes over the target program that keep every value and cut the cost's constant
(`simplify` runs them in order)."""
