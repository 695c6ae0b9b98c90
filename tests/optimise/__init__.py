"""The optimiser's passes, each against the unoptimised derivative and finite differences."""
