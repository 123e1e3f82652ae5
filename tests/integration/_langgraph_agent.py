"""A small LangGraph graph whose nodes use LangMem's memory tools on a MemoryPgStore.

``python -m tests.integration._langgraph_agent URL USER QUESTION`` asks it in a new
process and prints what it recalls, one JSON list.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langmem import create_manage_memory_tool, create_search_memory_tool

from memory_pg.integrations.langgraph import MemoryPgStore
from memory_pg.store import MemoryStore

#: LangMem's own namespace template: the user comes from the run's config.
NAMESPACE = ("memories", "{user_id}")


class State(TypedDict, total=False):
    fact: str
    memory_id: str
    question: str
    recalled: list[str]


def build(store: MemoryPgStore) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A graph that remembers ``fact`` (updating ``memory_id`` if given), then recalls
    what answers ``question``; the tools find the store and user as LangMem does."""
    manage = create_manage_memory_tool(namespace=NAMESPACE)
    search = create_search_memory_tool(namespace=NAMESPACE)

    def remember(state: State) -> State:
        if not state.get("fact"):
            return {}
        args: dict[str, Any] = {"content": state["fact"], "action": "create"}
        if state.get("memory_id"):
            args.update(action="update", id=state["memory_id"])
        said = manage.invoke(args)  # "created memory <id>" / "updated memory <id>"
        return {"memory_id": said.split()[-1]}

    def recall(state: State) -> State:
        if not state.get("question"):
            return {}
        found = json.loads(search.invoke({"query": state["question"], "limit": 3}))
        return {"recalled": [m["value"]["content"] for m in found]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store)


def config(user_id: str) -> Any:
    return {"configurable": {"user_id": user_id}}


if __name__ == "__main__":
    url, user, question = sys.argv[1:4]
    with MemoryStore(url) as memory:
        out = build(MemoryPgStore(memory)).invoke({"question": question}, config(user))
    print(json.dumps(out.get("recalled", [])))
