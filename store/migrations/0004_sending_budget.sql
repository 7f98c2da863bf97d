-- Sending limits. Each outgoing message has a priority: when the sending
-- budget is tight, lower numbers leave first (0: what the game cannot go on
-- without, 1: tallies and reminders, 2: the thread's posts, 3: receipts).
ALTER TABLE outbox ADD COLUMN priority INTEGER NOT NULL DEFAULT 2 CHECK (priority BETWEEN 0 AND 3);

-- What was sent recently, to count it against the budget's rolling window.
CREATE INDEX outbox_sent ON outbox (sent_at) WHERE status = 'sent';

-- What the host has learned of the mailbox's sending limit, one row: the
-- number of recipients it had sent in the window when the provider first
-- refused for the limit (0 for none learned), and the limit hold under way,
-- if any, so that the referees are told of it once.
CREATE TABLE sending_limit (
	id          INTEGER PRIMARY KEY CHECK (id = 1),
	learned     INTEGER NOT NULL DEFAULT 0 CHECK (learned >= 0),
	learned_at  INTEGER,
	-- Nanoseconds since the Unix epoch; NULL while mail flows.
	held_since  INTEGER,
	held_reply  TEXT NOT NULL DEFAULT '',
	-- How many holds there have been, to name each one's notices.
	holds       INTEGER NOT NULL DEFAULT 0
) STRICT;

INSERT INTO sending_limit (id) VALUES (1);
