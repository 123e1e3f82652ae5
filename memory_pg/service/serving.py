"""Running the HTTP service: the store opened first, then uvicorn with the guard."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, cast

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.config import StoreSettings
from memory_pg.service.guard import Guard, protocol_class
from memory_pg.service.http import ServiceSettings, create_app


def serve(
    *,
    database_url: str | None,
    host: str = "127.0.0.1",
    port: int = 8080,
    home: str | None = None,
    embedding_model: str | None = None,
    auto_migrate: bool = False,
    settings: ServiceSettings | None = None,
    pooler: str | None = None,
    read_urls: list[str] | None = None,
) -> None:
    """Run the service with uvicorn until SIGINT/SIGTERM (in-flight requests finish)."""
    import uvicorn

    cfg = settings or ServiceSettings()
    store = AsyncMemoryStore(
        database_url,
        home=home,
        embedding_model=embedding_model,
        auto_migrate=True if auto_migrate else None,
        settings=StoreSettings(pooler=pooler) if pooler else None,
        read_urls=read_urls,
    )
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    app = create_app(store, cfg)
    guard: Guard = app.state.guard
    config = uvicorn.Config(
        app,
        # Uvicorn's protocol (httptools or h11) with read timeouts and connection bounds.
        http=protocol_class(AutoHTTPProtocol, guard),
        host=host,
        port=port,
        access_log=False,  # our own log line per request carries no query string
        log_config=None,
        # Uvicorn hands it to asyncio.timeout, which takes a float: int() made 0.5 into 0.
        timeout_graceful_shutdown=cast(int, cfg.graceful_timeout_s),
        lifespan="on",
    )

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # Bodies still arriving get part of the graceful timeout, then a 503.
            guard.drain(cfg.graceful_timeout_s)
            await super().shutdown(sockets)

    server = Server(config)

    async def run() -> None:
        # The database first: one that is down, unknown or not migrated is a typed
        # error here, which the command prints as one line (exit 1), not a lifespan
        # traceback from uvicorn. The lifespan finds the store open.
        await store.open()
        serving = asyncio.create_task(server.serve())
        while not (server.started or serving.done()):
            await asyncio.sleep(0.05)
        if server.started:
            print(f"memory-pg: listening on http://{host}:{port}", file=sys.stderr, flush=True)
        await serving

    asyncio.run(run())


__all__ = ["serve"]
