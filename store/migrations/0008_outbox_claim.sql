-- A claim reads, for the open messages in the order they were queued,
-- their recipients, status, due time and priority. In the table those
-- columns lie after the message's bytes, and reading them there walks the
-- bytes' overflow pages: this index holds them all, so a claim never
-- reads a message's bytes.
DROP INDEX outbox_open;
CREATE INDEX outbox_claim ON outbox (id, status, next_attempt, priority, rcpts) WHERE status IN ('pending', 'sending');

-- The waiting messages by priority: a claim reads the open messages only
-- as far as it must, and this tells it whether a more urgent message
-- waits further on.
CREATE INDEX outbox_pending_priority ON outbox (priority, id) WHERE status = 'pending';
