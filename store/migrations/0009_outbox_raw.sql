-- A message's bytes, apart from its state. The sender changes a message's
-- state twice, claimed and then sent, and SQLite writes a changed row
-- whole, overflow pages and all: in the same row as its state, each copy
-- of a post was written to the disk three times over.
CREATE TABLE outbox_raw (
	id  INTEGER PRIMARY KEY REFERENCES outbox (id),
	raw BLOB NOT NULL
) STRICT;

INSERT INTO outbox_raw (id, raw) SELECT id, raw FROM outbox;

ALTER TABLE outbox DROP COLUMN raw;
