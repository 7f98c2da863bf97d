-- When the referee was last told of a failed delivery to each recipient of
-- a game, and how many failures to it have gone untold since: a recipient
-- whose address always bounces is reported once a day, with the count,
-- not once per message.
CREATE TABLE failure_notices (
	game       TEXT NOT NULL,
	recipient  TEXT NOT NULL,
	-- Nanoseconds since the Unix epoch.
	last       INTEGER NOT NULL,
	untold     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (game, recipient)
) STRICT, WITHOUT ROWID;
