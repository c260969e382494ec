-- Version 2: a revision per conversation, so a node can cache serialized history pages and know
-- with one primary-key read whether a cached page still holds (docs/storage.md, "revision").
--
-- It changes whenever anything a history page shows changes: a message sent (the append's own
-- UPDATE of last_seq bumps it, see conversations.ts), edited, deleted or expired, a reaction added
-- or removed. Triggers cover every path but the append, so no write can forget it.
ALTER TABLE conversations ADD COLUMN revision INTEGER NOT NULL DEFAULT 0 CHECK (revision >= 0);

CREATE TRIGGER messages_revision_on_update AFTER UPDATE ON messages
BEGIN
  UPDATE conversations SET revision = revision + 1 WHERE conversation_id = NEW.conversation_id;
END;

CREATE TRIGGER messages_revision_on_delete AFTER DELETE ON messages
BEGIN
  UPDATE conversations SET revision = revision + 1 WHERE conversation_id = OLD.conversation_id;
END;

CREATE TRIGGER reactions_revision_on_insert AFTER INSERT ON reactions
BEGIN
  UPDATE conversations SET revision = revision + 1
    WHERE conversation_id = (SELECT conversation_id FROM messages WHERE message_id = NEW.message_id);
END;

CREATE TRIGGER reactions_revision_on_delete AFTER DELETE ON reactions
BEGIN
  UPDATE conversations SET revision = revision + 1
    WHERE conversation_id = (SELECT conversation_id FROM messages WHERE message_id = OLD.message_id);
END;
