"""A new Hermes process for the start-up tests: Hermes' MemoryManager with the provider,
``initialize_all`` and at once ``prefetch_all``; prints what came back as JSON.

Usage: ``python hermes_fresh.py USER_ID QUERY`` with ``MEMORY_PG_DATABASE_URL`` set.
The provider opens its store from the environment, as the installed plugin does.
"""

from __future__ import annotations

import json
import sys

from agent.memory_manager import MemoryManager

from memory_pg.integrations.hermes import MemoryPgProvider


def main() -> None:
    user_id, query = sys.argv[1], sys.argv[2]
    provider = MemoryPgProvider()
    manager = MemoryManager()  # Hermes' own 8 s prefetch budget
    manager.add_provider(provider)
    warnings: list[str] = []
    manager.initialize_all(
        "fresh-session", platform="cli", user_id=user_id, warning_callback=warnings.append
    )
    context = manager.prefetch_all(query)
    print(
        json.dumps(
            {"context": context, "model_ready": provider.model_ready, "warnings": warnings},
            ensure_ascii=False,
        ),
        flush=True,
    )
    manager.shutdown_all()


if __name__ == "__main__":
    main()
