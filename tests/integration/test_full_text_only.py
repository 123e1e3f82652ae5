"""Search without a query vector: the full-text leg answers while the model loads."""

from __future__ import annotations

from typing import Any

import numpy as np


class CountingEmbedder:
    """The real model, counting the queries it embeds."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.queries = 0

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def embed_documents(self, texts: Any) -> np.ndarray[Any, Any]:
        return self.inner.embed_documents(texts)  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> np.ndarray[Any, Any]:
        self.queries += 1
        return self.inner.embed_query(text)  # type: ignore[no-any-return]


def test_full_text_only_finds_by_words_without_embedding_the_query(make_store, embedder):
    counting = CountingEmbedder(embedder)
    store = make_store(user_id="alice", embedder=counting)
    store.add_memory("We decided to use PostgreSQL as the database", "key_decision")
    store.add_memory("我们决定用 Stripe 处理支付", "key_decision")
    store.add_memory("Alice likes hiking on weekends", "user_profile")

    [hit] = store.search("Which database did we decide on?", top_k=1, full_text_only=True)
    assert "PostgreSQL" in hit["text"]
    assert hit["full_text_only"] is True
    assert hit["similarity"] is None and hit["lexical"] > 0
    assert "Stripe" in store.search("支付", top_k=1, full_text_only=True)[0]["text"]
    # No shared word, no result: the vector leg is not there to find it by meaning.
    assert store.search("the weather forecast", full_text_only=True) == []
    # A broad word meets the kinds a memory names ("sports": hiking), by words still.
    assert "hiking" in store.search("outdoor sports", full_text_only=True)[0]["text"]
    assert counting.queries == 0

    [hybrid] = store.search("Which database did we decide on?", top_k=1)
    assert hybrid["full_text_only"] is False and hybrid["similarity"] is not None
    assert counting.queries == 1


def test_full_text_only_keeps_the_user_scope(make_store):
    store = make_store()
    store.add_memory("Bob deploys on Tuesdays", "project_status", user_id="bob")
    assert store.search("deploys Tuesdays", user_id="alice", full_text_only=True) == []
    assert store.search("deploys Tuesdays", user_id="bob", full_text_only=True)


async def test_the_async_store_searches_by_words_alone_too(db_url, embedder):
    from memory_pg.async_store import AsyncMemoryStore

    counting = CountingEmbedder(embedder)
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=counting) as store:
        await store.add_memory("We decided to use PostgreSQL as the database", "key_decision")
        [hit] = await store.search("Which database did we decide on?", full_text_only=True)
    assert hit["full_text_only"] is True and "PostgreSQL" in hit["text"]
    assert counting.queries == 0
