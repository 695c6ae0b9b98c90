"""CHAD: the core IR -> the target program computing the primal result and its backpropagator. Fig. 7
one case per construct (`transform`), loops (`loops`, Section 7), calls and function values (`calls`,
Section 9), the rewinding of in-place writes (`rewinds`), the paper's four stages (`stages`), and Fig. 2
made from Fig. 7 for the first two (`returned_vectors`)."""
