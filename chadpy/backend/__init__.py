"""The back end: each backpropagator lifted to a module-level function of the values it reads (`lift`),
the target program printed as Python (`codegen`), and compiled and loaded (`build`)."""
