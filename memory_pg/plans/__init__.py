"""The seam: plans are generators of statements, driven by the stores (no I/O)."""
