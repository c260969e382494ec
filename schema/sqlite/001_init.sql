-- Embedded store schema, version 1. Applied once by src/store/sqlite/migrations.ts inside an
-- exclusive transaction and recorded in schema_migrations. Never edit an applied file: add the
-- next numbered one (the runner refuses to start when a recorded checksum no longer matches).
--
-- Conventions: STRICT tables (types are enforced, not merely hinted); timestamps are ISO-8601
-- UTC strings with millisecond precision ("2026-01-02T03:04:05.678Z"), fixed width, so text order
-- is time order and they compare and index as text; JSON arrays are TEXT columns.
-- docs/storage.md explains every index against the query it serves.

CREATE TABLE conversations (
  conversation_id      TEXT NOT NULL PRIMARY KEY,
  tenant_id            TEXT NOT NULL,
  application_id       TEXT NOT NULL,
  type                 TEXT NOT NULL CHECK (type IN ('DIRECT', 'GROUP', 'CHANNEL')),
  visibility           TEXT,
  name                 TEXT,
  description          TEXT,
  status               TEXT NOT NULL CHECK (status IN ('ACTIVE', 'ARCHIVED')),
  created_by_user_id   TEXT,
  created_by_client_id TEXT,
  last_activity_at     TEXT NOT NULL,
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL,
  deleted_at           TEXT,
  -- ACTIVE members, maintained by every membership write in the same transaction.
  member_count         INTEGER NOT NULL DEFAULT 0 CHECK (member_count >= 0),
  -- Highest message seq ever assigned; never decreases, not even when retention removes rows.
  last_seq             INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
  -- Fencing token of the owning actor: writes carrying a lower epoch are refused.
  epoch                INTEGER NOT NULL DEFAULT 0 CHECK (epoch >= 0)
) STRICT;

-- Machine listing, newest activity first, keyset-paged on (last_activity_at, conversation_id).
CREATE INDEX conversations_by_activity
  ON conversations (tenant_id, application_id, last_activity_at DESC, conversation_id DESC)
  WHERE deleted_at IS NULL;

-- Machine listing with a type filter; also serves the tenant overview's counts per type.
CREATE INDEX conversations_by_type_activity
  ON conversations (tenant_id, application_id, type, last_activity_at DESC, conversation_id DESC)
  WHERE deleted_at IS NULL;

-- The "PUBLIC channels" half of a user's listing, already in page order.
CREATE INDEX conversations_public_channels
  ON conversations (tenant_id, application_id, last_activity_at DESC, conversation_id DESC)
  WHERE type = 'CHANNEL' AND visibility = 'PUBLIC' AND deleted_at IS NULL;

-- DIRECT deduplication: one row per unordered pair of users in a context (user_low < user_high).
-- Removed when the conversation is soft-deleted, so the pair can start a new conversation.
CREATE TABLE direct_pairs (
  tenant_id       TEXT NOT NULL,
  application_id  TEXT NOT NULL,
  user_low        TEXT NOT NULL,
  user_high       TEXT NOT NULL,
  conversation_id TEXT NOT NULL UNIQUE REFERENCES conversations (conversation_id),
  PRIMARY KEY (tenant_id, application_id, user_low, user_high),
  CHECK (user_low < user_high)
) STRICT, WITHOUT ROWID;

-- tenant_id/application_id are copied from the conversation (immutable) so a user's listing and
-- the tenant overview are answered from this table's indexes without touching conversations.
CREATE TABLE members (
  conversation_id TEXT NOT NULL REFERENCES conversations (conversation_id),
  user_id         TEXT NOT NULL,
  member_id       TEXT NOT NULL UNIQUE,
  tenant_id       TEXT NOT NULL,
  application_id  TEXT NOT NULL,
  role            TEXT NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
  status          TEXT NOT NULL CHECK (status IN ('ACTIVE', 'LEFT', 'REMOVED')),
  joined_at       TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  PRIMARY KEY (conversation_id, user_id)
) STRICT, WITHOUT ROWID;

-- A user's conversations in a context; distinct active users of a tenant (overview).
CREATE INDEX members_active_by_user
  ON members (tenant_id, user_id, application_id)
  WHERE status = 'ACTIVE';

-- Members pages (joined_at, member_id): every status, and ACTIVE only (previews, fan-out).
CREATE INDEX members_by_join ON members (conversation_id, joined_at, member_id);
CREATE INDEX members_active_by_join
  ON members (conversation_id, joined_at, member_id)
  WHERE status = 'ACTIVE';

CREATE TABLE messages (
  message_id          TEXT NOT NULL PRIMARY KEY,
  conversation_id     TEXT NOT NULL REFERENCES conversations (conversation_id),
  tenant_id           TEXT NOT NULL,
  application_id      TEXT NOT NULL,
  seq                 INTEGER NOT NULL CHECK (seq > 0),
  sender_user_id      TEXT,
  sender_client_id    TEXT,
  body                TEXT NOT NULL,
  message_type        TEXT NOT NULL CHECK (message_type IN ('TEXT', 'SYSTEM', 'FILE')),
  reply_to_message_id TEXT,
  attachments         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(attachments)),
  mentioned_user_ids  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(mentioned_user_ids)),
  status              TEXT NOT NULL CHECK (status IN ('ACTIVE', 'EDITED', 'DELETED')),
  edited_at           TEXT,
  deleted_at          TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL
) STRICT;

-- The order the actor assigned; unique so two owners can never both write one seq. History
-- pages and unread counts are range scans of this index.
CREATE UNIQUE INDEX messages_by_seq ON messages (conversation_id, seq);

-- Retention: the oldest messages of a tenant, deleted in bounded batches.
CREATE INDEX messages_by_tenant_age ON messages (tenant_id, created_at);

CREATE TABLE reactions (
  message_id TEXT NOT NULL REFERENCES messages (message_id) ON DELETE CASCADE,
  emoji      TEXT NOT NULL,
  user_id    TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (message_id, emoji, user_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE read_state (
  conversation_id TEXT NOT NULL REFERENCES conversations (conversation_id),
  user_id         TEXT NOT NULL,
  last_read_seq   INTEGER NOT NULL CHECK (last_read_seq >= 0),
  updated_at      TEXT NOT NULL,
  PRIMARY KEY (conversation_id, user_id)
) STRICT, WITHOUT ROWID;

-- Known users per tenant. user_key/name_key are the lower-cased forms (JavaScript
-- toLowerCase, full Unicode, unlike SQLite's ASCII-only NOCASE) that prefix search ranges over.
CREATE TABLE profiles (
  tenant_id    TEXT NOT NULL,
  user_id      TEXT NOT NULL,
  display_name TEXT,
  avatar_url   TEXT,
  user_key     TEXT NOT NULL,
  name_key     TEXT,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX profiles_by_user_key ON profiles (tenant_id, user_key);
CREATE INDEX profiles_by_name_key ON profiles (tenant_id, name_key) WHERE name_key IS NOT NULL;

-- response_status NULL marks a claim whose request is still running (see idempotency.ts).
CREATE TABLE idempotency_keys (
  principal_key   TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  method_route    TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  response_status INTEGER,
  response_body   TEXT,
  created_at      TEXT NOT NULL,
  PRIMARY KEY (principal_key, idempotency_key, method_route)
) STRICT, WITHOUT ROWID;

CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

CREATE TABLE tenant_settings (
  tenant_id              TEXT NOT NULL PRIMARY KEY,
  message_retention_days INTEGER CHECK (message_retention_days IS NULL OR message_retention_days >= 1),
  updated_at             TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- application_id '' stands for the tenant-wide mapping: NULL cannot take part in a primary key
-- (SQLite would let duplicates of NULL through a UNIQUE constraint).
CREATE TABLE role_overrides (
  tenant_id      TEXT NOT NULL,
  application_id TEXT NOT NULL,
  role_id        TEXT NOT NULL,
  capabilities   TEXT NOT NULL CHECK (json_valid(capabilities)),
  updated_at     TEXT NOT NULL,
  PRIMARY KEY (tenant_id, application_id, role_id)
) STRICT, WITHOUT ROWID;

-- One row per subscription endpoint or native token within a tenant; registering it again
-- (possibly for another user on a shared browser) updates the row.
CREATE TABLE push_devices (
  tenant_id         TEXT NOT NULL,
  token_or_endpoint TEXT NOT NULL,
  user_id           TEXT NOT NULL,
  platform          TEXT NOT NULL CHECK (platform IN ('web', 'fcm', 'apns')),
  p256dh            TEXT,
  auth              TEXT,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  PRIMARY KEY (tenant_id, token_or_endpoint)
) STRICT, WITHOUT ROWID;

CREATE INDEX push_devices_by_user ON push_devices (tenant_id, user_id);
-- Pruning a gone endpoint removes it from every tenant it was registered in.
CREATE INDEX push_devices_by_endpoint ON push_devices (token_or_endpoint);
