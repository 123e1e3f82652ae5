"""The service layer: an HTTP API and an MCP server over the async store, with tokens.

``memory_pg.service.tokens`` needs nothing beyond memory-pg itself; the HTTP app
(``http``) and the MCP server (``mcp``) need the ``service`` extra:
``pip install 'memory-pg[service]'``.
"""
