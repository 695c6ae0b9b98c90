"""What the generated code calls at run time; nothing here imports the compiler. Cotangent values and
their sums (`core`, `arrays`), the log of in-place writes (`writes`), the paper's environments
(`environments`), the run-time halves of the array rules (`numpy`, `reductions`, `shape`, `linalg`,
`special`: each beside the rule file of the same name in `rules/`), and deterministic cost (`cost`)."""
