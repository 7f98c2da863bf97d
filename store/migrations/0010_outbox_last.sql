-- Each game's last queued message, which a host that starts again reads to
-- date the game's next mail after it (LastQueued). It replaces the index
-- outbox_game (game, id), which each copy queued wrote at its game's place:
-- in a host of many games, every command wrote a page of that index of its
-- own game's, to the log and at the next checkpoint to the database, and
-- most often read it back first. These rows, one a game, fit in a few pages
-- that stay in memory.
CREATE TABLE outbox_last (
	game TEXT PRIMARY KEY,
	id   INTEGER NOT NULL REFERENCES outbox (id)
) STRICT, WITHOUT ROWID;

INSERT INTO outbox_last (game, id)
	SELECT game, max(id) FROM outbox WHERE game IS NOT NULL GROUP BY game;

DROP INDEX outbox_game;
