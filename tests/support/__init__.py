"""Helpers the tests share: finite differences (`fd`), loading source (`sources`), the random-program
generator (`progen`) and its differential tester (`differential`), the cost families and the bound
(`cost_families`), where an error points (`located`), example programs (`programs`)."""
