"""Benchmarks: scripts that print their figures (`make bench`, `make bench-quick`)."""
