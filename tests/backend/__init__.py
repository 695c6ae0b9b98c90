"""What chadpy prints (golden files, code generation) and how it compiles and loads it."""
