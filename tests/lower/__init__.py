"""The front end: reading, scope analyses, lowering to the core IR."""
