-- The per-sender rate limit's buckets, saved in the transaction of each
-- message that drew on one, so that a restart does not hand every sender a
-- fresh allowance. A bucket last drawn on longer ago than it takes to fill
-- is full again, and may be forgotten.
CREATE TABLE rate_buckets (
	key     TEXT PRIMARY KEY,
	tokens  REAL NOT NULL,
	-- Nanoseconds since the Unix epoch.
	last    INTEGER NOT NULL,
	refused INTEGER NOT NULL CHECK (refused IN (0, 1))
) STRICT, WITHOUT ROWID;

CREATE INDEX rate_buckets_last ON rate_buckets (last);
