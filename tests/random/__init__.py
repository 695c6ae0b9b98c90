"""Random programs, differentiated and checked against plain Python and finite differences."""
