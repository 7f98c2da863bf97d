-- Schema version 1 of the mafiamail store.
-- Times are INTEGER nanoseconds since the Unix epoch, UTC
-- (read them with datetime(col / 1000000000, 'unixepoch')).

-- "MAFI": lets Open tell a mafiamail database from any other SQLite file.
PRAGMA application_id = 1296123465;

CREATE TABLE games (
	id         TEXT PRIMARY KEY
	           CHECK (length(id) BETWEEN 2 AND 20 AND id NOT GLOB '*[^a-z0-9]*'),
	status     TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	-- The next instant the game's clock must act, NULL for none.
	deadline   INTEGER
) STRICT;

CREATE INDEX games_deadline ON games (deadline) WHERE deadline IS NOT NULL;

CREATE TABLE participants (
	game      TEXT NOT NULL REFERENCES games (id),
	token     TEXT NOT NULL CHECK (token <> '' AND token NOT GLOB '*[^a-z2-7]*'),
	name      TEXT NOT NULL,
	address   TEXT NOT NULL,
	kind      TEXT NOT NULL CHECK (kind IN ('player', 'referee', 'observer')),
	-- NULL until the roles are drawn, and for the referee and observers.
	role      TEXT,
	status    TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'replaced', 'removed')),
	joined_at INTEGER NOT NULL,
	PRIMARY KEY (game, token)
) STRICT, WITHOUT ROWID;

CREATE INDEX participants_address ON participants (address);

-- The append-only log of everything that happened in each game; a game's
-- state is the fold of its events.
CREATE TABLE events (
	game       TEXT NOT NULL REFERENCES games (id),
	seq        INTEGER NOT NULL CHECK (seq > 0),
	type       TEXT NOT NULL,
	version    INTEGER NOT NULL,
	payload    TEXT NOT NULL CHECK (json_valid(payload)),
	created_at INTEGER NOT NULL,
	-- What caused the event: "inbox:<id>", "deadline", ...
	cause      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (game, seq)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN
	SELECT RAISE(ABORT, 'events are append-only');
END;

CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN
	SELECT RAISE(ABORT, 'events are append-only');
END;

-- The latest snapshot of each game's state, to rebuild from it plus the tail
-- of the log.
CREATE TABLE snapshots (
	game       TEXT PRIMARY KEY REFERENCES games (id),
	seq        INTEGER NOT NULL CHECK (seq > 0),
	state      BLOB NOT NULL,
	-- Hex SHA-256 of state.
	hash       TEXT NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;

-- Every message read from IMAP, once.
CREATE TABLE inbox (
	id          INTEGER PRIMARY KEY,
	mailbox     TEXT NOT NULL,
	uidvalidity INTEGER NOT NULL,
	uid         INTEGER NOT NULL,
	message_id  TEXT NOT NULL,
	-- SHA-256 of the normalized Message-ID, or of the raw bytes if it has none.
	msgid_hash  BLOB NOT NULL,
	raw         BLOB NOT NULL,
	received_at INTEGER NOT NULL,
	outcome     TEXT NOT NULL DEFAULT 'pending'
	            CHECK (outcome IN ('pending', 'applied', 'refused', 'ignored', 'error')),
	reason      TEXT NOT NULL DEFAULT '',
	game        TEXT,
	UNIQUE (mailbox, uidvalidity, uid),
	UNIQUE (msgid_hash)
) STRICT;

-- Every message to send, written in the transaction that caused it.
CREATE TABLE outbox (
	id           INTEGER PRIMARY KEY,
	message_id   TEXT NOT NULL UNIQUE,
	game         TEXT,
	kind         TEXT NOT NULL,
	mail_from    TEXT NOT NULL,
	-- JSON array of recipient addresses.
	rcpts        TEXT NOT NULL CHECK (json_valid(rcpts) AND json_array_length(rcpts) > 0),
	raw          BLOB NOT NULL,
	status       TEXT NOT NULL DEFAULT 'pending'
	             CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
	attempts     INTEGER NOT NULL DEFAULT 0,
	next_attempt INTEGER NOT NULL,
	last_error   TEXT NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	sent_at      INTEGER,
	cause        TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX outbox_due ON outbox (next_attempt, id) WHERE status = 'pending';
CREATE INDEX outbox_game ON outbox (game, id);

-- Posts held for the referee (dead players' posts, leaked role messages).
CREATE TABLE held_posts (
	id           INTEGER PRIMARY KEY,
	game         TEXT NOT NULL REFERENCES games (id),
	-- Per-game number, as in "RELAY n".
	number       INTEGER NOT NULL CHECK (number > 0),
	author_token TEXT NOT NULL,
	inbox_id     INTEGER REFERENCES inbox (id),
	text         TEXT NOT NULL,
	reason       TEXT NOT NULL,
	status       TEXT NOT NULL DEFAULT 'held' CHECK (status IN ('held', 'relayed', 'rejected')),
	created_at   INTEGER NOT NULL,
	decided_at   INTEGER,
	UNIQUE (game, number),
	FOREIGN KEY (game, author_token) REFERENCES participants (game, token)
) STRICT;

-- The player registry across games, keyed by lower-case address.
CREATE TABLE players (
	address        TEXT PRIMARY KEY,
	bounces        INTEGER NOT NULL DEFAULT 0,
	last_bounce_at INTEGER,
	last_bounce    TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE suspensions (
	id          INTEGER PRIMARY KEY,
	address     TEXT NOT NULL,
	reason      TEXT NOT NULL,
	-- The game whose events caused the suspension, if any.
	game        TEXT,
	created_at  INTEGER NOT NULL,
	-- The game the suspension was served in (the player sat it out); NULL
	-- while it is still to be served.
	consumed_by TEXT,
	consumed_at INTEGER
) STRICT;

CREATE INDEX suspensions_active ON suspensions (address) WHERE consumed_by IS NULL;
