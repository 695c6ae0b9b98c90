"""The core IR, the paper's first-order language (Fig. 1) in A-normal form: its nodes (`nodes`), the types
of its values (`types`), which Python objects are records (`records`), and its checker (`verify`)."""
