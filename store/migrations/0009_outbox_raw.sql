-- A message's bytes, apart from its state. The sender changes a message's
-- state twice, claimed and then sent. SQLite rewrites the page that holds
-- the start of a changed row, and a row whose size changes (marking it
-- sent does) whole, overflow pages and all: in the same row as its state,
-- a copy's bytes were written to the disk about twice over after it was
-- queued.
CREATE TABLE outbox_raw (
	id  INTEGER PRIMARY KEY REFERENCES outbox (id),
	raw BLOB NOT NULL
) STRICT;

INSERT INTO outbox_raw (id, raw) SELECT id, raw FROM outbox;

ALTER TABLE outbox DROP COLUMN raw;
