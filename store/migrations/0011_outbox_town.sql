-- Whether a message is mail the town needs before a round's close (T4): a
-- copy of the thread to a player or an observer, or a reminder to vote. A
-- close that waits for mail the sending limit holds back waits for this
-- mail alone: were it to wait for the mafia list, an answer to a private
-- command or a night role's reminder, the wait would tell the town of it.
ALTER TABLE outbox ADD COLUMN town INTEGER NOT NULL DEFAULT 0 CHECK (town IN (0, 1));

-- The mail still waiting when the column came: the thread's copies are the
-- town's (the referee's among them, and no reminder, which cannot be told
-- apart here; a wait that counts them tells no secret).
UPDATE outbox SET town = 1 WHERE kind IN ('thread', 'dawn', 'end') AND status IN ('pending', 'sending');
