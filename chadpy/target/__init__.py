"""The target language: the generated code's expressions (`expressions`, in which rules are written) and
statements (`statements`), with the traversals the optimiser shares."""
