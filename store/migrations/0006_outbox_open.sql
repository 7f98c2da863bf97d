-- The messages not yet handed over (waiting, or claimed by the sender):
-- a claim reads them all, to keep each recipient's mail in the order it
-- was queued.
CREATE INDEX outbox_open ON outbox (id) WHERE status IN ('pending', 'sending');
