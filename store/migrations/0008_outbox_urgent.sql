-- The waiting messages by priority: a claim reads the open messages in
-- the order they were queued only as far as it must, and this tells it
-- whether a more urgent message waits further on.
CREATE INDEX outbox_pending_priority ON outbox (priority, id) WHERE status = 'pending';
