package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/internal/backoff"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/store"
)

// BehindMailbox is why serve does not start on a database older than
// its mailbox: messages that a host read (flagged \Seen, or moved to
// move_to) after the last one this database read, which the database
// never applied. serve reads unread mail only, so it would never apply
// them, and would go on deciding the games without them: deadlines
// closing rounds whose votes it never saw. Restore replays them, with the
// database as its backup.
type BehindMailbox struct {
	Database string
	// Unread is how many such messages there are; First the arrival of
	// the first of them.
	Unread int
	First  time.Time
	// Fresh: there is no database at all (or one that never read a
	// message), and the mailbox holds mail a host has read.
	Fresh bool
}

func (e *BehindMailbox) Error() string {
	at := e.First.UTC().Format(time.RFC3339)
	count, them, were, first, firstArrived := fmt.Sprintf("%d messages", e.Unread), "them", "were", "the first "+at, "the first arrived "+at
	if e.Unread == 1 {
		count, them, were, first, firstArrived = "1 message", "it", "was", "at "+at, "which arrived "+at
	}
	if e.Fresh {
		return fmt.Sprintf("serve: there is no database %s that has read the mailbox, but the mailbox holds %s a host has read (flagged \\Seen, or moved), %s: "+
			"serve reads unread mail only and would start the games over without %s, so it does not start. Rebuild the database from the mailbox with restore",
			e.Database, count, firstArrived, them)
	}
	return fmt.Sprintf("serve: the database %s is older than the mailbox: %s arrived after the last one it read, %s, and %s read by a host it is not (flagged \\Seen, or moved): "+
		"serve reads unread mail only and would never apply %s, so it does not start. Replay %s with restore, from this database as the backup",
		e.Database, count, first, were, them, them)
}

// Commands are the exact commands that bring the database up to date,
// for the configuration file cfgPath.
func (e *BehindMailbox) Commands(cfgPath string) string {
	if e.Fresh {
		if _, err := os.Stat(e.Database); err == nil {
			return fmt.Sprintf("    mv %s %s.empty\n    mafiamail restore --config %s\n", e.Database, e.Database, cfgPath)
		}
		return fmt.Sprintf("    mafiamail restore --config %s\n", cfgPath)
	}
	return fmt.Sprintf("    mv %s %s.stale\n    mafiamail restore --config %s %s.stale\n", e.Database, e.Database, cfgPath, e.Database)
}

// CheckCurrent returns a *BehindMailbox when the database is older than
// the mailbox (see BehindMailbox). It reads the database and the mailbox
// and changes neither. A mailbox it cannot read yet is tried again, with
// a growing pause, until it can or ctx ends: a host that starts on a
// database it has not checked could close rounds without their votes.
//
// A message counts when the database has no record of it (by folder and
// UID, or by Message-ID, which a move keeps) and a host has read it: it
// is in move_to, where only the host puts mail, or flagged \Seen in the
// watched folder with a UID above every UID the database read there. A
// \Seen message below that, which the database never read, was flagged by
// someone else (a person reading the host's mailbox): it is logged, and
// does not stop the host.
func CheckCurrent(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var reads []store.Read
	if _, err := os.Stat(cfg.Database); err == nil {
		st, err := store.OpenReadOnly(ctx, cfg.Database, store.Config{Logger: log})
		if err != nil {
			return fmt.Errorf("serve: check the database against the mailbox: %w", err)
		}
		reads, err = st.ReadKeys(ctx)
		st.Close()
		if err != nil {
			return fmt.Errorf("serve: check the database against the mailbox: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("serve: %w", err)
	}
	wc, err := mailboxConfig(cfg, log)
	if err != nil {
		return fmt.Errorf("serve: check the database against the mailbox: %w", err)
	}
	var hist *watcher.History
	for n := 0; ; n++ {
		h, err := watcher.OpenHistory(ctx, wc)
		if err == nil {
			hist = h
			break
		}
		d := backoff.Duration(n, time.Second, time.Minute)
		log.Warn("cannot read the mailbox to check the database against it; trying again", "err", err, "in", d)
		if !backoff.Sleep(ctx, d) {
			return fmt.Errorf("serve: check the database against the mailbox: %w", err)
		}
	}
	defer hist.Close()

	type key struct {
		box     string
		uv, uid uint32
	}
	known := map[key]bool{}
	ids := map[string]bool{}
	top := map[key]uint32{}
	for _, r := range reads {
		known[key{r.Mailbox, r.UIDValidity, r.UID}] = true
		if id := bareID(r.MessageID); id != "" {
			ids[id] = true
		}
		k := key{box: r.Mailbox, uv: r.UIDValidity}
		top[k] = max(top[k], r.UID)
	}
	behind := &BehindMailbox{Database: cfg.Database, Fresh: len(reads) == 0}
	// Without a database that read anything, \Seen mail alone does not
	// show that a host ran: a new host's mailbox may hold mail its owner
	// read (the provider's welcome, a test message). Mail in move_to, or
	// to a game's address, does: only a host moves mail there or hands
	// those addresses out.
	gameMail := false
	for _, m := range hist.Messages {
		id := bareID(m.MessageID)
		if known[key{m.Mailbox, m.UIDValidity, m.UID}] || id != "" && ids[id] {
			continue
		}
		switch {
		case m.Mailbox == cfg.IMAP.MoveTo && id != "",
			m.Mailbox != cfg.IMAP.MoveTo && m.Seen && m.UID > top[key{box: m.Mailbox, uv: m.UIDValidity}]:
			if behind.Unread == 0 {
				behind.First = m.Arrived
			}
			behind.Unread++
			gameMail = gameMail || m.Mailbox == cfg.IMAP.MoveTo || slices.ContainsFunc(m.To, func(to string) bool { return gameAddress(cfg.Address, to) })
		case m.Seen:
			log.Warn("a message of the mailbox is flagged \\Seen, but the host never read it: someone else did, and the host will not",
				"mailbox", m.Mailbox, "uid", m.UID, "message_id", m.MessageID, "arrived", m.Arrived)
		}
	}
	if behind.Fresh && behind.Unread > 0 && !gameMail {
		log.Warn("the mailbox holds mail flagged \\Seen or moved, but none to a game's address: no host has run on it, and serve starts without it",
			"messages", behind.Unread)
		return nil
	}
	if behind.Unread > 0 {
		return behind
	}
	return nil
}

// gameAddress reports whether addr is one of the addresses of the host
// whose own address is host: host's local part with a tag
// (host+tag@domain), which games and players are given.
func gameAddress(host, addr string) bool {
	local, domain, ok := strings.Cut(strings.ToLower(host), "@")
	if !ok {
		return false
	}
	l, d, ok := strings.Cut(addr, "@")
	return ok && d == domain && strings.HasPrefix(l, local+"+")
}
