-- What every reader of a thread or mafia-list mail was sent, beside each
-- copy of it: its lines that do not belong to the copy's reader (their own
-- state, their receipt, the news told as "You …", times in their zone,
-- their footer) nor are the host's headings. A reply that quotes the mail
-- is relayed with those quoted lines alone as its context (see
-- docs/adversaries.md, "Quotes are the host's record").
CREATE TABLE outbox_public (
	id      INTEGER PRIMARY KEY REFERENCES outbox (id),
	-- The conversation the copy went out in: only a post to the same one
	-- may quote it as context (the mafia list's lines are not the town's).
	channel TEXT NOT NULL CHECK (channel IN ('thread', 'mafia')),
	public  TEXT NOT NULL
) STRICT;
