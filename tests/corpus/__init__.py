"""chadpy's own corpus: differentiable functions written in the styles of public NumPy projects.

Importing the package registers every case (`tests.corpus.registry.CASES`); `test_corpus.py`
checks each against central differences and the plain call's side effects.
"""

from tests.corpus import counters, layers_first_call, losses, mcmc, networks, physics, practitioner, robotics

MODULES = (losses, networks, robotics, physics, mcmc, counters, layers_first_call, practitioner)
