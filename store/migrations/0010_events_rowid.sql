-- The event log in the order it is written, its key (game, seq) in an
-- index of its own. A WITHOUT ROWID table keeps whole rows in its interior
-- pages as well as its leaves, and an event's row (its payload a few
-- hundred bytes of JSON) is a tenth of a page: the log's interior pages
-- held some ten rows each, each game's events lay on pages of their own
-- down to the root, and a host of a thousand games read several of them
-- back for every event it appended. Now each append goes to the end of
-- the table, pages every game shares, and to the game's place in the
-- index, whose entries are a few dozen bytes: some twenty times fewer
-- pages than the table as it was.
CREATE TABLE events_by_rowid (
	game       TEXT NOT NULL REFERENCES games (id),
	seq        INTEGER NOT NULL CHECK (seq > 0),
	type       TEXT NOT NULL,
	version    INTEGER NOT NULL,
	payload    TEXT NOT NULL CHECK (json_valid(payload)),
	created_at INTEGER NOT NULL,
	-- What caused the event: "inbox:<id>", "deadline", ...
	cause      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (game, seq)
) STRICT;

-- Each game's events stay together, so reading a game's log back reads
-- consecutive pages.
INSERT INTO events_by_rowid (game, seq, type, version, payload, created_at, cause)
	SELECT game, seq, type, version, payload, created_at, cause FROM events ORDER BY game, seq;

DROP TRIGGER events_append_only_update;
DROP TRIGGER events_append_only_delete;
DROP TABLE events;
ALTER TABLE events_by_rowid RENAME TO events;

CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN
	SELECT RAISE(ABORT, 'events are append-only');
END;

CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN
	SELECT RAISE(ABORT, 'events are append-only');
END;
