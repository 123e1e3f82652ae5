"""``memory-pg demo --agents``: two agents of one user share a decision through the service.

A planning agent and a coding agent each hold a token bound to the same user and
to their own agent id. Over the HTTP API of a real ``memory-pg serve`` app
(uvicorn on a free local port) the planner records a decision, the coder finds
it; the coder keeps a private note that the planner can neither find nor read.
Offline, on the embedded server unless a URL is given.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import IO, Any

from memory_pg.service.tokens import create_token

#: The demo's user: erased at the start of each run.
DEMO_USER = "memory-pg-agents-demo"

DECISION = (
    "我们决定用 PostgreSQL + pgvector 存储智能体记忆。 "
    "(We store agent memory in PostgreSQL + pgvector.)"
)
NOTE = "我本地的测试数据库跑在 5433 端口。 (My local test database runs on port 5433.)"


def _say(out: IO[str], text: str = "") -> None:
    out.write(text + "\n")
    out.flush()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(ctx: Any, user: str = DEMO_USER) -> int:
    """Run the demo; 0 when the decision was shared and the note stayed private."""
    import httpx
    import uvicorn

    from memory_pg.async_store import AsyncMemoryStore
    from memory_pg.service.http import ServiceSettings, create_app

    out = ctx.out
    store = ctx.store()
    _say(out, "== memory-pg demo --agents: 两个智能体共享一份记忆 two agents, one memory ==")
    _say(out, f"database 数据库: {store.url}")
    erased = store.clear_user_memory(user)
    _say(out, f"cleared demo user {user!r} ({erased} memories)")
    planner = create_token(store.engine, user, agent_id="planner").token
    coder = create_token(store.engine, user, agent_id="coder").token
    _say(out, "tokens 令牌: planner and coder, both bound to the same user (shown once, hashed)")

    url = store.engine.url.render_as_string(hide_password=False)
    service_store = AsyncMemoryStore(url, embedder=store.embedder)
    app = create_app(service_store, ServiceSettings(mcp=False))
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False)
    )
    thread = threading.Thread(target=server.run, name="memory-pg-demo-service", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            _say(out, "the service did not start 服务未能启动")
            return 1
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    _say(out, f"service 服务: {base} (HTTP API /v1)")
    try:
        return _conversation(out, base, planner, coder, httpx)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _conversation(out: IO[str], base: str, planner: str, coder: str, httpx: Any) -> int:
    def client(token: str) -> Any:
        return httpx.Client(base_url=base, headers={"Authorization": "Bearer " + token}, timeout=60)

    with client(planner) as p, client(coder) as c:
        _say(out, "== 1/3 planner 规划智能体 records a decision ==")
        r = p.post(
            "/v1/memories",
            json={"text": DECISION, "memory_type": "key_decision", "topic": "memory_store"},
        )
        r.raise_for_status()
        _say(out, f"  planner: {DECISION}  -> shared 共享 (id {r.json()['id'][:8]}…)")

        _say(out, "== 2/3 coder 编码智能体 keeps a private note, then asks ==")
        r = c.post("/v1/memories", json={"text": NOTE, "memory_type": "todo", "private": True})
        r.raise_for_status()
        note_id = r.json()["id"]
        _say(out, f"  coder: {NOTE}  -> private 私有 (id {note_id[:8]}…)")
        hits = c.post("/v1/search", json={"query": "用什么数据库存记忆？ which database?"}).json()
        shared = [h for h in hits["results"] if h["agent_id"] == "planner"]
        for h in hits["results"]:
            scope = "private 私有" if h["private"] else "shared 共享"
            _say(out, f"  coder recalls 回忆: [{h['agent_id']}, {scope}] {h['text']}")

        _say(out, "== 3/3 planner 规划智能体 looks for the coder's note ==")
        seen = p.post("/v1/search", json={"query": "测试数据库端口 test database port"}).json()
        leaked = [h for h in seen["results"] if h["id"] == note_id]
        direct = p.get(f"/v1/memories/{note_id}").status_code
        _say(
            out,
            f"  planner search: {len(seen['results'])} result(s), "
            f"the note among them: {bool(leaked)}",
        )
        _say(out, f"  planner GET /v1/memories/<note id>: HTTP {direct}")

    ok = bool(shared) and not leaked and direct == 404
    if ok:
        _say(
            out,
            "shared decision reached the coder; the private note stayed private "
            "共享成功，私有笔记未泄露",
        )
        return 0
    _say(out, "FAILED 失败: the decision was not shared, or the note leaked")
    return 1
