-- Version 3: retention walks a tenant's conversations and each one's oldest messages, instead of
-- reading an index of every message by (tenant, created_at). That index took one more B-tree
-- insert (and one more WAL page per commit) on every send for a job that runs once an interval:
-- measured ~25% of an append's store CPU in batches of 64. docs/storage.md, "Retention".
DROP INDEX messages_by_tenant_age;

-- Every conversation of a tenant, deleted ones included (their messages expire too), in id order:
-- the retention walk's cursor. Not touched by sends (no column of it changes after creation).
CREATE INDEX conversations_by_tenant ON conversations (tenant_id, conversation_id);
