"""One home for SQL: statement builders (pure, no I/O)."""
