"""Benchmarks of memory-pg side by side with its peers (run: ``python benchmarks/run.py``)."""
