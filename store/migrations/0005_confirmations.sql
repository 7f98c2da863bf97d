-- Requests held until their sender proves the address: a NEW GAME or JOIN
-- from mail the host cannot authenticate takes effect only when a reply
-- reaches the one-time address host+GAME-c-TOKEN, which only the address's
-- own mailbox was told.
CREATE TABLE confirmations (
	token      TEXT PRIMARY KEY,
	game       TEXT NOT NULL,
	address    TEXT NOT NULL,
	-- 'new game' or 'join'.
	verb       TEXT NOT NULL CHECK (verb IN ('new game', 'join')),
	-- The JOIN's name; the game's for NEW GAME.
	name       TEXT NOT NULL,
	-- Nanoseconds since the Unix epoch, on the host's clock.
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	-- NULL until the reply came.
	used_at    INTEGER
) STRICT;
