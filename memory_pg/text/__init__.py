"""Text understanding, no I/O: what a memory states and what a query asks, in Chinese and English.

The lowest layer of the package: it imports nothing from above. Statement builders
(``memory_pg.sql``) and the write decision (``memory_pg.supersession``) receive its
results as values.
"""
