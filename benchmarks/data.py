"""Synthetic memories for the benchmarks: short Chinese and English facts, and their vectors.

Embedding a million texts on two cores takes half an hour, so only a pool of
unique texts is embedded (once, cached as ``.npy``); larger sets reuse pool
vectors with a little Gaussian noise, renormalised, and give each text a numbered
suffix so no two memories of a user are the same text.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_EN = [
    "User prefers {lang} for {task}",
    "Decided to use {db} as the database for {project}",
    "TODO: finish the {module} module of {project} by {day}",
    "{name} lives in {city} and works on {project}",
    "Project {project} status: {status}",
    "{name} asked to review the {module} pull request before {day}",
    "The {project} team chose {db} over {db2} because of {reason}",
    "{name} is allergic to {food} and likes {food2}",
    "Deploy {project} to {cloud} in {city} after the {module} tests pass",
    "{name} wants weekly reports about {project} every {day}",
]
_ZH = [
    "用户喜欢用{lang_zh}做{task_zh}",
    "决定在{project}项目中使用{db}作为数据库",
    "待办：{day_zh}前完成{project}的{module_zh}模块",
    "{name_zh}住在{city_zh}，负责{project}",
    "{project}项目状态：{status_zh}",
    "{name_zh}希望{day_zh}之前审查{module_zh}的代码",
    "团队因为{reason_zh}选择了{db}而不是{db2}",
    "{name_zh}对{food_zh}过敏，喜欢{food2_zh}",
    "{module_zh}测试通过后把{project}部署到{city_zh}的{cloud}",
    "{name_zh}每{day_zh}要一份{project}的周报",
]
_VOCAB = {
    "lang": ["Python", "Go", "Rust", "TypeScript", "Java", "Kotlin", "SQL", "C++", "Ruby", "Swift"],
    "task": [
        "data pipelines",
        "web backends",
        "scripts",
        "CLI tools",
        "ML training",
        "prototypes",
        "mobile apps",
        "game logic",
        "reports",
        "infrastructure",
    ],
    "db": [
        "PostgreSQL",
        "MySQL",
        "SQLite",
        "Redis",
        "MongoDB",
        "ClickHouse",
        "DuckDB",
        "Cassandra",
        "TiDB",
        "Oracle",
    ],
    "project": [
        "Atlas",
        "Borealis",
        "Cobalt",
        "Delta",
        "Ember",
        "Falcon",
        "Granite",
        "Helios",
        "Iris",
        "Juniper",
        "Kestrel",
        "Lumen",
        "Meridian",
        "Nimbus",
        "Orion",
        "Pulsar",
        "Quartz",
        "Radiant",
        "Sierra",
        "Tundra",
    ],
    "module": [
        "payment",
        "login",
        "search",
        "billing",
        "upload",
        "export",
        "chat",
        "notification",
        "reporting",
        "admin",
    ],
    "day": [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "the weekend",
        "next week",
        "month end",
        "the release",
        "the demo",
    ],
    "name": [
        "Alice",
        "Bob",
        "Carol",
        "Dave",
        "Erin",
        "Frank",
        "Grace",
        "Heidi",
        "Ivan",
        "Judy",
        "Mallory",
        "Niaj",
        "Olivia",
        "Peggy",
        "Rupert",
        "Sybil",
    ],
    "city": [
        "Hangzhou",
        "Beijing",
        "Shanghai",
        "Shenzhen",
        "Berlin",
        "London",
        "Paris",
        "Tokyo",
        "Seattle",
        "Toronto",
    ],
    "status": [
        "on track",
        "blocked on review",
        "delayed by a week",
        "in testing",
        "waiting for design",
        "shipped",
        "paused",
        "at risk",
        "ahead of plan",
        "in planning",
    ],
    "reason": [
        "cost",
        "latency",
        "team experience",
        "licensing",
        "scalability",
        "tooling",
        "support",
        "reliability",
        "simplicity",
        "compliance",
    ],
    "food": ["peanuts", "shellfish", "gluten", "milk", "eggs", "soy", "sesame", "fish"],
    "cloud": ["AWS", "GCP", "Azure", "Aliyun", "Tencent Cloud", "a bare-metal rack"],
    "lang_zh": ["Python", "Go", "Rust", "Java", "SQL", "TypeScript"],
    "task_zh": ["数据处理", "后端开发", "写脚本", "机器学习", "做报表", "写测试", "运维"],
    "day_zh": ["周一", "周二", "周三", "周四", "周五", "周末", "下周", "月底", "发布前"],
    "module_zh": ["支付", "登录", "搜索", "账单", "上传", "导出", "聊天", "通知", "报表"],
    "name_zh": ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨磊", "赵敏", "黄勇", "周杰", "吴霞"],
    "city_zh": ["杭州", "北京", "上海", "深圳", "广州", "成都", "南京", "武汉", "西安"],
    "status_zh": ["进展顺利", "等待评审", "延期一周", "测试中", "已上线", "暂停", "有风险"],
    "reason_zh": ["成本", "延迟", "团队经验", "许可证", "扩展性", "稳定性", "简单"],
    "food_zh": ["花生", "海鲜", "牛奶", "鸡蛋", "大豆", "芝麻"],
}
_TYPES = ["user_profile", "project_status", "key_decision", "todo", "dialogue"]
_TYPE_OF_TEMPLATE = [0, 2, 3, 0, 1, 3, 2, 0, 3, 0]


def _fill(template: str, rng: random.Random) -> str:
    values = {}
    for key, words in _VOCAB.items():
        values[key] = rng.choice(words)
    values["db2"] = rng.choice(_VOCAB["db"])
    values["food2"] = rng.choice(_VOCAB["food"])
    values["food2_zh"] = rng.choice(_VOCAB["food_zh"])
    return template.format(**values)


def make_texts(count: int, seed: int = 7) -> list[tuple[str, str]]:
    """``count`` unique (text, memory_type) pairs, about one in three Chinese."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    while len(out) < count:
        i = rng.randrange(len(_EN))
        template = _ZH[i] if rng.random() < 0.35 else _EN[i]
        text = _fill(template, rng)
        if text in seen:
            # The vocabulary runs out near a few hundred thousand combinations: a
            # number keeps every text unique, as real memories mostly are.
            text = f"{text} ({len(out)})"
            if text in seen:
                continue
        seen.add(text)
        out.append((text, _TYPES[_TYPE_OF_TEMPLATE[i]]))
    return out


def embed_pool(
    texts: Sequence[str],
    embed: Callable[[Sequence[str]], np.ndarray],
    cache_dir: Path | None,
    model_name: str,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Vectors of the pool texts, from the ``.npy`` cache when it holds them."""
    key = hashlib.sha256(("\n".join(texts) + "\0" + model_name).encode()).hexdigest()[:16]
    path = cache_dir / f"pool-{len(texts)}-{key}.npy" if cache_dir else None
    if path is not None and path.exists():
        return np.load(path)
    chunks = []
    for start in range(0, len(texts), 512):
        chunks.append(embed(texts[start : start + 512]))
        if progress:
            progress(min(512, len(texts) - start))
    vectors = np.vstack(chunks).astype(np.float32)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    return vectors


@dataclass
class Dataset:
    """Memories of one benchmark scenario, with a vector for each and queries.

    Attributes:
        texts, types, users: one entry per memory.
        vectors: (n, d) unit vectors, row ``i`` for memory ``i``.
        query_texts, query_users, query_vectors: the searches to run.
    """

    name: str
    texts: list[str]
    types: list[str]
    users: list[str]
    vectors: np.ndarray
    query_texts: list[str]
    query_users: list[str]
    query_vectors: np.ndarray

    @property
    def size(self) -> int:
        """How many memories."""
        return len(self.texts)

    def rows_of(self, user: str) -> np.ndarray:
        """Indices of one user's memories."""
        return self._by_user()[user]

    def _by_user(self) -> dict[str, np.ndarray]:
        cached = getattr(self, "_user_index", None)
        if cached is None:
            groups: dict[str, list[int]] = {}
            for i, u in enumerate(self.users):
                groups.setdefault(u, []).append(i)
            cached = {u: np.asarray(ix) for u, ix in groups.items()}
            self._user_index = cached
        return cached

    def user_batches(self, chunk: int = 1000) -> list[tuple[str, np.ndarray]]:
        """(user, row indices) in insertion order, at most ``chunk`` rows each."""
        out = []
        for user, ix in self._by_user().items():
            for start in range(0, len(ix), chunk):
                out.append((user, ix[start : start + chunk]))
        return out


def _noisy(base: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    noisy = base + rng.normal(0.0, sigma, size=base.shape).astype(np.float32)
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def build_dataset(
    name: str,
    size: int,
    users: int,
    pool_texts: list[tuple[str, str]],
    pool_vectors: np.ndarray,
    *,
    queries: int,
    sigma: float = 0.01,
    seed: int = 11,
) -> Dataset:
    """``size`` memories over ``users`` users (user ``i`` gets every ``users``-th row).

    Rows up to the pool size are pool texts with their real vectors; past it a row
    reuses a pool vector plus noise (``sigma`` per dimension, then renormalised)
    and a numbered text. Queries pick a user that has memories, and a pool vector
    plus noise, so they are near some memories without being copies of them.
    """
    rng = np.random.default_rng(seed)
    pool = len(pool_texts)
    if size <= pool:
        idx = np.arange(size)
        vectors = pool_vectors[:size].copy()
        texts = [pool_texts[i][0] for i in idx]
    else:
        idx = rng.integers(0, pool, size=size)
        idx[:pool] = np.arange(pool)
        vectors = np.empty((size, pool_vectors.shape[1]), dtype=np.float32)
        vectors[:pool] = pool_vectors
        for start in range(pool, size, 50_000):
            stop = min(size, start + 50_000)
            vectors[start:stop] = _noisy(pool_vectors[idx[start:stop]], sigma, rng)
        texts = [
            pool_texts[p][0] if i < pool else f"{pool_texts[p][0]} #{i}"
            for i, p in enumerate(idx.tolist())
        ]
    types = [pool_texts[p][1] for p in idx.tolist()]
    user_names = [f"bench-u{i % users:05d}" for i in range(size)]
    present = sorted(set(user_names))
    q_users = [present[int(j)] for j in rng.integers(0, len(present), size=queries)]
    q_idx = rng.integers(0, pool, size=queries)
    q_vectors = _noisy(pool_vectors[q_idx], sigma * 3, rng)
    q_texts = [f"{pool_texts[int(p)][0]}?" for p in q_idx]
    return Dataset(name, texts, types, user_names, vectors, q_texts, q_users, q_vectors)


def exact_top_k(data: Dataset, k: int) -> list[list[int]]:
    """Brute-force cosine top-``k`` row indices per query, over that query's user only."""
    out = []
    for user, qv in zip(data.query_users, data.query_vectors, strict=True):
        rows = data.rows_of(user)
        sims = data.vectors[rows] @ qv
        order = np.argsort(-sims, kind="stable")[:k]
        out.append(rows[order].tolist())
    return out
