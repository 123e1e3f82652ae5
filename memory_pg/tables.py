"""SQLAlchemy Core tables: the schema the migrations build, declared once for queries and tests."""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Float,
    ForeignKeyConstraint,
    Identity,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    Uuid,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR

#: Every object memory-pg creates carries this prefix, so it sits beside a host's own tables.
PREFIX = "memory_pg_"

#: The library's own Alembic version table: a host application's history is never touched.
VERSION_TABLE = "memory_pg_alembic_version"

#: Lifecycle events written to the history table.
HISTORY_EVENTS = (
    "added",
    "superseded",
    "merged",
    "expired",
    "deleted",
    "updated",
    "imported",
    "restored",
)

metadata = MetaData(
    naming_convention={
        "ix": "memory_pg_%(table_name)s_%(column_0_N_name)s_idx",
        "uq": "memory_pg_%(table_name)s_%(column_0_N_name)s_key",
        "ck": "memory_pg_%(table_name)s_%(constraint_name)s_check",
        "fk": "memory_pg_%(table_name)s_%(column_0_name)s_fkey",
        "pk": "memory_pg_%(table_name)s_pkey",
    }
)

_NOW = text("now()")

# Every key starts with user_id: the tables can be distributed by user_id (Citus) and
# every lookup, search and delete stays on one shard.
memories = Table(
    "memory_pg_memories",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("id", Uuid, nullable=False, server_default=text("gen_random_uuid()")),
    Column("memory_type", Text, nullable=False),
    Column("text", Text, nullable=False),
    # The dimension is fixed by the migration from the model the database records.
    Column("embedding", Vector(), nullable=False),
    Column("embedding_model", Text, nullable=False),
    Column("search_tsv", TSVECTOR, nullable=False),
    Column("content_hash", Text, nullable=False),
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("topic", Text, nullable=True),
    Column("importance", Float(precision=24), nullable=False, server_default=text("0.5")),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("event_time", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("last_accessed_at", DateTime(timezone=True), nullable=True),
    Column("access_count", Integer, nullable=False, server_default=text("0")),
    Column("valid_from", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("superseded_at", DateTime(timezone=True), nullable=True),
    Column("superseded_by", Uuid, nullable=True),
    Column("expires_at", DateTime(timezone=True), nullable=True),
    # Text that frames the memory (the turn before a dialogue turn): embedded and
    # indexed with it (weight C), never part of the memory itself. Migration 0004.
    Column("context", Text, nullable=True),
    # The agent that wrote it, and whether only that agent sees it (default: shared
    # with all of the user's agents). Migration 0006.
    Column("agent_id", Text, nullable=True),
    Column("private", Boolean, nullable=False, server_default=text("false")),
    # The attributes its text states (age, occupation, home …:
    # memory_pg.text.attributes), for the ranking; NULL: written before migration 0016
    # and not analysed since. Migration 0016.
    Column("attributes", ARRAY(Text), nullable=True),
    PrimaryKeyConstraint("user_id", "id"),
    CheckConstraint("user_id <> '' AND length(user_id) <= 255", name="user_id"),
    CheckConstraint("memory_type ~ '^[a-z][a-z0-9_]{0,63}$'", name="memory_type"),
    CheckConstraint("importance >= 0 AND importance <= 1", name="importance"),
    CheckConstraint("access_count >= 0", name="access_count"),
    CheckConstraint(
        "agent_id IS NULL OR (agent_id <> '' AND length(agent_id) <= 255)", name="agent_id"
    ),
    CheckConstraint("NOT private OR agent_id IS NOT NULL", name="private"),
    # Room on each page so that recording a search's use stays a HOT update (no new
    # entry in the HNSW and GIN indexes). Migrations 0004 and 0008 explain the measurements.
    postgresql_with={"fillfactor": 70},
)

# Per-user listing by type and recency, over current rows only.
Index(
    "memory_pg_memories_user_type_created_idx",
    memories.c.user_id,
    memories.c.memory_type,
    memories.c.created_at.desc(),
    postgresql_where=memories.c.superseded_at.is_(None),
)
# Supersession by explicit topic key.
Index(
    "memory_pg_memories_user_topic_idx",
    memories.c.user_id,
    memories.c.memory_type,
    memories.c.topic,
    postgresql_where=text("topic IS NOT NULL AND superseded_at IS NULL"),
)
# An exact duplicate of a current memory is never stored twice (INSERT ... ON CONFLICT):
# once among the user's shared memories, once among each agent's private ones.
Index(
    "memory_pg_memories_user_type_hash_key",
    memories.c.user_id,
    memories.c.memory_type,
    memories.c.content_hash,
    unique=True,
    postgresql_where=text("superseded_at IS NULL AND NOT private"),
)
Index(
    "memory_pg_memories_user_agent_type_hash_key",
    memories.c.user_id,
    memories.c.agent_id,
    memories.c.memory_type,
    memories.c.content_hash,
    unique=True,
    postgresql_where=text("superseded_at IS NULL AND private"),
)
# Expiry scans: oldest first per user.
Index("memory_pg_memories_user_created_idx", memories.c.user_id, memories.c.created_at)
Index(
    "memory_pg_memories_expires_idx",
    memories.c.expires_at,
    postgresql_where=text("expires_at IS NOT NULL"),
)
Index(
    "memory_pg_memories_embedding_hnsw_idx",
    memories.c.embedding,
    postgresql_using="hnsw",
    postgresql_with={"m": 16, "ef_construction": 64},
    postgresql_ops={"embedding": "vector_cosine_ops"},
)
# No pending list (migration 0011): a heavy user's search scanned all of it each time.
Index(
    "memory_pg_memories_search_tsv_idx",
    memories.c.search_tsv,
    postgresql_using="gin",
    postgresql_with={"fastupdate": "off"},
)

# Turns waiting for compaction: a crash between a turn and its compaction loses nothing.
dialogue_buffer = Table(
    "memory_pg_dialogue_buffer",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("id", BigInteger, Identity(always=False), nullable=False),
    Column("session_id", Text, nullable=True),
    Column("role", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("consumed_at", DateTime(timezone=True), nullable=True),
    PrimaryKeyConstraint("user_id", "id"),
    CheckConstraint("role IN ('user', 'assistant', 'system', 'tool')", name="role"),
)
Index(
    "memory_pg_dialogue_buffer_pending_idx",
    dialogue_buffer.c.user_id,
    dialogue_buffer.c.id,
    postgresql_where=dialogue_buffer.c.consumed_at.is_(None),
)

# Append-only: why a memory was added, replaced or forgotten.
history = Table(
    "memory_pg_history",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("id", BigInteger, Identity(always=False), nullable=False),
    Column("memory_id", Uuid, nullable=False),
    Column("event", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("detail", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    PrimaryKeyConstraint("user_id", "id"),
    CheckConstraint(
        "event IN ('added', 'superseded', 'merged', 'expired', 'deleted', 'updated', 'imported', "
        "'restored')",
        name="event",
    ),
)
Index("memory_pg_history_user_memory_idx", history.c.user_id, history.c.memory_id, history.c.at)

# Facts about the database itself (the embedding model and its dimension).
# Under Citus this is a reference table.
settings = Table(
    "memory_pg_settings",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", JSONB, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)

# Bearer tokens of the service (memory_pg.service): only a hash of each token is kept.
# A token fixes the user (and agent) of every request made with it. Migration 0006.
tokens = Table(
    "memory_pg_tokens",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("id", Uuid, nullable=False, server_default=text("gen_random_uuid()")),
    # sha256 of the secret, hex: the secret itself is shown once and never stored.
    Column("token_hash", Text, nullable=False),
    Column("agent_id", Text, nullable=True),
    # 'user': the user's own memories; 'admin': maintenance operations across users.
    Column("scope", Text, nullable=False, server_default=text("'user'")),
    Column("read_only", Boolean, nullable=False, server_default=text("false")),
    Column("label", Text, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("expires_at", DateTime(timezone=True), nullable=True),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
    PrimaryKeyConstraint("user_id", "id"),
    CheckConstraint("user_id <> '' AND length(user_id) <= 255", name="user_id"),
    CheckConstraint("token_hash ~ '^[0-9a-f]{64}$'", name="token_hash"),
    CheckConstraint("scope IN ('user', 'admin')", name="scope"),
    CheckConstraint(
        "agent_id IS NULL OR (agent_id <> '' AND length(agent_id) <= 255)", name="agent_id"
    ),
)
# A request presents only its token: the lookup is by hash (not unique per Citus shard;
# 256 random bits make a collision a non-event).
Index("memory_pg_tokens_token_hash_idx", tokens.c.token_hash)

# Relations (migration 0007): the people, places and things a user's memories name,
# which memory names which, and links between memories. Every key starts with user_id
# and every foreign key carries it, so a user's graph sits on the user's shard.

#: Kinds of entity the extractors recognise.
ENTITY_KINDS = ("person", "place", "organisation", "project", "thing")

#: Links between two memories (a memory naming an entity is a row of memory_entities).
LINK_RELATIONS = ("supersedes", "merged_into", "derived_from", "follows")

entities = Table(
    "memory_pg_entities",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("id", Uuid, nullable=False, server_default=text("gen_random_uuid()")),
    Column("name", Text, nullable=False),
    # The name as it is matched: NFKC, casefolded, inner spaces collapsed. Two surface
    # forms meet on this key only: no fuzzy merge ever joins two people.
    Column("key", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("aliases", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    PrimaryKeyConstraint("user_id", "id"),
    CheckConstraint("kind IN ('person', 'place', 'organisation', 'project', 'thing')", name="kind"),
    CheckConstraint("key <> '' AND length(key) <= 200", name="key"),
)
Index("memory_pg_entities_user_key_key", entities.c.user_id, entities.c.key, unique=True)

memory_entities = Table(
    "memory_pg_memory_entities",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("memory_id", Uuid, nullable=False),
    Column("entity_id", Uuid, nullable=False),
    # The spellings this memory gave the entity (its name as written there and the
    # aliases given with it): an agent is shown those of the mentions it may see.
    Column("spellings", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    PrimaryKeyConstraint("user_id", "memory_id", "entity_id"),
    ForeignKeyConstraint(
        ["user_id", "memory_id"],
        ["memory_pg_memories.user_id", "memory_pg_memories.id"],
        ondelete="CASCADE",
        name="memory_pg_memory_entities_memory_fkey",
    ),
    ForeignKeyConstraint(
        ["user_id", "entity_id"],
        ["memory_pg_entities.user_id", "memory_pg_entities.id"],
        ondelete="CASCADE",
        name="memory_pg_memory_entities_entity_fkey",
    ),
)
Index(
    "memory_pg_memory_entities_user_entity_idx",
    memory_entities.c.user_id,
    memory_entities.c.entity_id,
)

memory_links = Table(
    "memory_pg_memory_links",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("src", Uuid, nullable=False),
    Column("relation", Text, nullable=False),
    Column("dst", Uuid, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    PrimaryKeyConstraint("user_id", "src", "relation", "dst"),
    CheckConstraint(
        "relation IN ('supersedes', 'merged_into', 'derived_from', 'follows')", name="relation"
    ),
    CheckConstraint("src <> dst", name="not_self"),
    ForeignKeyConstraint(
        ["user_id", "src"],
        ["memory_pg_memories.user_id", "memory_pg_memories.id"],
        ondelete="CASCADE",
        name="memory_pg_memory_links_src_fkey",
    ),
    ForeignKeyConstraint(
        ["user_id", "dst"],
        ["memory_pg_memories.user_id", "memory_pg_memories.id"],
        ondelete="CASCADE",
        name="memory_pg_memory_links_dst_fkey",
    ),
)
Index("memory_pg_memory_links_user_dst_idx", memory_links.c.user_id, memory_links.c.dst)

__all__ = [
    "ENTITY_KINDS",
    "HISTORY_EVENTS",
    "LINK_RELATIONS",
    "PREFIX",
    "VERSION_TABLE",
    "dialogue_buffer",
    "entities",
    "history",
    "memories",
    "memory_entities",
    "memory_links",
    "metadata",
    "settings",
    "tokens",
]
