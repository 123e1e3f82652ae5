"""The seam between the API and the database: plans are generators of statements, with no I/O."""
