-- The host's latest plan for each game's thread against the sending budget:
-- what the rest of the round would send as the players chose, what it
-- sends under the plan, and the room the budget leaves, so that the
-- referee's STATUS and `mafiamail games show` can show the forecast.
CREATE TABLE sending_plans (
	game          TEXT PRIMARY KEY REFERENCES games (id),
	-- Nanoseconds since the Unix epoch, of the host's real clock.
	planned_at    INTEGER NOT NULL,
	-- The round the forecast is for, as the thread names it ("Day 2").
	round         TEXT NOT NULL,
	-- The digest interval in force for everyone; 0 for none.
	interval_ns   INTEGER NOT NULL CHECK (interval_ns >= 0),
	as_chosen     INTEGER NOT NULL CHECK (as_chosen >= 0),
	planned       INTEGER NOT NULL CHECK (planned >= 0),
	room          INTEGER NOT NULL,
	recipient_limit INTEGER NOT NULL CHECK (recipient_limit >= 0),
	closes_at     INTEGER NOT NULL
) STRICT;
