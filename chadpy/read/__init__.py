"""Reading and checking the source: a function's text cut from its file and parsed with gast (`source`),
constructs outside the language rejected before any other work (`fence`), and the analyses of the gast
tree every later stage asks (`scope`: what a block assigns, reads, keeps live)."""
