"""First look: a store on a real migrated database adds and finds a memory."""


def test_add_then_search_finds_it(store):
    memory_id = store.add_memory("使用 PostgreSQL 作为数据库", "key_decision")
    store.add_memory("I like hiking in the mountains")
    results = store.search("数据库选型", top_k=3)
    assert results[0]["id"] == memory_id
