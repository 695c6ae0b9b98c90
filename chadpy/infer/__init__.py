"""Types: each function specialised to the types of its arguments (`inference`), and the check that
an in-place update leaves no other reference to what it changes (`ownership`)."""
