"""Lowering: gast -> the core IR (A-normal form, SSA names). `lowerer` dispatches statements and
expressions; each other module is one concern it calls: control flow (`control`), constructs that are
loops in disguise (`desugar`), what a name or call is (`resolve`), objects (`objects`), in-place updates
(`updates`), closure conversion (`closures`). They see the lowerer through `context.Lowering`."""
