-- The fingerprint of the host key (internal/hostkey) the database was
-- written with. The key itself lives beside the configuration, never here:
-- tokens and the role draw derive from it, so a database restored with
-- another key would replay its mailbox into other games. One row at most.
CREATE TABLE host_key (
	id          INTEGER PRIMARY KEY CHECK (id = 1),
	fingerprint TEXT NOT NULL,
	since       INTEGER NOT NULL
) STRICT;
