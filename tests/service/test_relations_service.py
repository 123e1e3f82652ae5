"""Relations over the service: HTTP routes and MCP tools act for the token's user only."""

from __future__ import annotations

from tests.service.test_mcp import _data, http_client


def _add_turns(c, texts):
    items = [{"text": t, "metadata": {"session_id": "s1"}} for t in texts]
    r = c.post("/v1/memories/batch", json={"items": items})
    assert r.status_code == 201, r.text
    return r.json()["ids"]


def test_http_entity_related_graph_and_expanded_search_stay_with_the_user(service, fresh_user):
    alice, bob = fresh_user("alice"), fresh_user("bob")
    with (
        service.client(service.token(alice).token) as a,
        service.client(service.token(bob).token) as b,
    ):
        ids = _add_turns(a, ["小王在北京找到了新工作", "小王和张伟下周去上海", "天气不错"])
        secret = _add_turns(b, ["小王's vault code is 1234"])[0]

        listed = a.get("/v1/entities")
        assert listed.status_code == 200, listed.text
        names = [e["name"] for e in listed.json()["entities"]]
        assert "小王" in names and "北京" in names
        about = a.get("/v1/entities/小王").json()
        assert {m["id"] for m in about["memories"]} == set(ids[:2])
        assert secret not in str(about)
        related = a.get(f"/v1/memories/{ids[2]}/related", params={"depth": 1}).json()["related"]
        assert [r["id"] for r in related] == [ids[1]] and related[0]["relation"] == "follows"
        dot = a.get("/v1/entities/小王/graph", params={"format": "dot"})
        assert dot.status_code == 200 and dot.text.startswith("graph memory_pg {")
        # Another user's memory id and entity are not found.
        assert a.get(f"/v1/memories/{secret}/related").status_code == 404
        assert b.get("/v1/entities/北京").status_code == 404
        hits = a.post("/v1/search", json={"query": "小王 工作", "expand": 1}).json()["results"]
        assert hits and {h["id"] for h in hits} <= set(ids)
        bad = a.post("/v1/search", json={"query": "x", "expand": 9})
        assert bad.status_code in (400, 422) and "expand" in bad.text


async def test_mcp_relation_tools_act_for_the_tokens_user(service, fresh_user):
    alice, bob = fresh_user("alice"), fresh_user("bob")
    async with (
        http_client(service, service.token(alice).token) as a,
        http_client(service, service.token(bob).token) as b,
    ):
        first = _data(await a.call_tool("add_memory", {"text": "Priya leads Project Atlas"}))["id"]
        _data(await b.call_tool("add_memory", {"text": "Priya owes me 50 dollars"}))
        listed = _data(await a.call_tool("list_entities", {}))["entities"]
        assert {e["name"] for e in listed} >= {"Priya", "Project Atlas"}
        about = _data(await a.call_tool("entity_memories", {"name": "priya"}))
        assert [m["id"] for m in about["memories"]] == [first]
        assert _data(await a.call_tool("related_memories", {"memory_id": first})) == {"related": []}
        hits = _data(await a.call_tool("search_memory", {"query": "Priya", "expand": 1}))
        assert [h["id"] for h in hits["results"]] == [first]


def test_http_shows_no_alias_only_another_agents_private_memory_gave(service, fresh_user, embedder):
    from memory_pg.store import MemoryStore

    alice = fresh_user("alice")
    store = MemoryStore(service.db_url, user_id=alice, embedder=embedder)
    try:
        store.add_memory("王伟 joined the design team", agent_id="planner")
        # An LLM's compaction gave the coder's private note the alias 小王.
        store.add_memories(
            [
                {
                    "text": "王伟 is interviewing elsewhere",
                    "private": True,
                    "entities": [{"name": "王伟", "kind": "person", "aliases": ["小王"]}],
                }
            ],
            agent_id="coder",
        )
    finally:
        store.close()
    planner = service.token(alice, agent_id="planner").token
    coder = service.token(alice, agent_id="coder").token
    with service.client(planner) as p, service.client(coder) as c:
        assert p.get("/v1/entities/王伟").json()["aliases"] == []
        assert p.get("/v1/entities/小王").status_code == 404
        listed = {e["name"]: e["aliases"] for e in p.get("/v1/entities").json()["entities"]}
        assert listed["王伟"] == []
        assert c.get("/v1/entities/小王").json()["aliases"] == ["小王"]
