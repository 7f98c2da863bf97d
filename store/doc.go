// Package store keeps the host's durable state in one SQLite file, through
// modernc.org/sqlite (pure Go, no cgo).
//
// A play-by-mail game runs for weeks; the host will be restarted, killed and
// moved, and the game must not notice. The store's guarantees:
//
// Durability. Every write goes through Update, one transaction on the one
// writer connection, begun with BEGIN IMMEDIATE, in WAL mode with
// synchronous=FULL: when Update returns nil the transaction is on disk, and
// a crash at any instant leaves every transaction either wholly there or
// wholly absent. Reads use a separate pool of query_only connections and
// never block the writer. A lock file beside the database (PATH.lock, held
// with flock) keeps a second process from opening it for writing; the
// kernel drops the lock when the process dies, however it dies. Two kinds
// of write alone are not waited onto disk, because a power failure may lose
// them without harm: the sender's claim of due mail (ClaimDue), since Open
// makes claimed mail due again anyway, and its record of mail the server
// accepted (MarkAllSent), whose loss sends that mail again with the same
// Message-ID, as a process that dies before the record does. The next
// commit takes either to disk.
//
// Exactly-once processing of mail. The watcher handles each inbound message
// in one Update: RecordInbound, the events the message caused
// (AppendEvents), the mail those events caused (Enqueue), and the outcome
// (SetInboundOutcome) commit together or not at all. Several messages may
// share one Update (a group commit), each in a Savepoint of its own, so
// that one that fails is rolled back alone. RecordInbound reports a
// message it has seen before, under the same mailbox, UIDVALIDITY and UID or
// under the same Message-ID, so mail is applied once even when the IMAP
// server changes UIDVALIDITY. The watcher sets \Seen only after the commit:
// a crash in between makes the message come back, and RecordInbound then
// says it was seen. A deadline is handled the same way: its events, its mail
// and the game's next deadline (SetGameDeadline) commit together.
//
// At-least-once sending. The outbox holds each message's final bytes with a
// Message-ID fixed when it was enqueued. The sender claims due messages
// (ClaimDue), sends them, and records the result (MarkSent, or MarkAllSent
// for a batch at once, MarkRetry with the next attempt time, MarkFailed). A
// crash between the SMTP server's acceptance and that record sends the
// message again after the restart, with
// the same bytes and so the same Message-ID, which mail clients use to hide
// duplicates. Times are always passed in; the store has no clock of its own.
//
// The event log. Each game's events are numbered 1, 2, 3, ... without gaps
// and can never be updated or deleted (triggers refuse it). A game's state
// is the fold of its events, which the caller supplies (FoldFunc): the store
// does not know the rules. Snapshots (SaveSnapshot) let a restart fold only
// the tail of the log; Rebuild and RebuildAll check each snapshot against
// its hash and, when asked, against a fold of the whole log, which wins
// where the two differ (Rebuilt.Stale: a snapshot of an earlier version),
// so a restarted host provably has the state its log gives. The log's rows
// lie in the order they were written, with (game, seq) in an index of its
// own, so that an append touches the table's last page, which every game
// shares, and a small index entry (migrations/0010_events_rowid.sql).
//
// Schema. Migrations are embedded in the binary (migrations/NNNN_name.sql)
// and applied by Open, each in its own transaction with the new
// PRAGMA user_version. Before anything is written, Open checks the file on
// a read-only connection: a database from a newer program (ErrNewerSchema),
// a file that is not a mafiamail database or fails PRAGMA quick_check
// (ErrCorrupt) is refused and left as it was.
//
// Backups. Backup writes a consistent copy with VACUUM INTO while the host
// runs; OpenReadOnly lets another process (a backup command) do the same
// without taking the write lock.
//
// Times are stored as INTEGER nanoseconds since the Unix epoch, UTC.
package store
