"""The runtime the generated code calls: cotangents, arrays, environments."""
