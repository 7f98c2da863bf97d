package service

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-message/textproto"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/store"
	"github.com/mafiamail/mafiamail/templates"
)

// RestoreConfig is what Restore needs beyond the configuration.
type RestoreConfig struct {
	// Backup is the database to start from (`games backup` made it), ""
	// for none: every game is then replayed from the mailbox alone.
	Backup string
	// Now is the wall clock; nil means time.Now. Tests pass one that
	// stands where their mail was delivered.
	Now func() time.Time
	Log *slog.Logger
}

// GameReplay is what a restore did to one game.
type GameReplay struct {
	Game string
	// Before and After are the game's events in the backup and after
	// the replay; Replayed how many of its messages were applied anew.
	Before, After, Replayed int
	// Ended says whether the game had ended when the replay was done.
	Ended bool
	// Missing is how many messages of the game the backup had read that
	// the mailbox no longer holds: the game cannot be proven complete.
	// Paused says the restore paused it for that, so that nothing more is
	// decided until its referee has looked (RESUME).
	Missing int
	Paused  bool
}

// Resent is a message of the outbox that serve sends when it starts,
// the restore not knowing whether the lost host had sent it.
type Resent struct {
	Game, Kind, MessageID string
	// Subject is its Subject, decoded.
	Subject string
	To      []string
}

// RestoreReport says what a restore found and did.
type RestoreReport struct {
	// FromBackup is the backup started from, "" for none.
	FromBackup string
	// Messages is how many messages the mailbox holds (the watched
	// folder and the one processed mail is moved to); Known how many of
	// them the backup had applied, Replayed how many were applied now.
	Messages, Known, Replayed int
	// Failed are the messages that could not be applied, as the host
	// would have logged them live.
	Failed []string
	Games  []GameReplay
	// SentFolder is the folder of sent mail read ("" for none found);
	// FoundSent how many unsent messages of the outbox were found there
	// and recorded as sent. SentAgain are those that were not: serve
	// sends them (again, if the lost host had sent them), with the same
	// Message-ID, which mail clients use to hide a second copy.
	SentFolder string
	FoundSent  int
	SentAgain  []Resent
	// Missing are the messages the backup had read that the mailbox no
	// longer holds; Gaps the runs of UIDs that no message accounts for
	// (see Gap).
	Missing []Missing
	Gaps    []Gap
	// Notices are the Message-IDs of the notices queued to the referees,
	// one a game told (RestoreReport.tell).
	Notices []string
}

// Restore brings back a host that lost its database: it starts from a
// backup, or from nothing, and applies every message of the mailbox the
// backup had not applied, \Seen or not, in the watched folder and in the
// one processed mail is moved to, in the order they reached the mailbox,
// with every deadline between them applied at its own time, as the host
// would have applied them live (docs/arrival.md). The role draws and the
// tokens derive from the host key, which must be the one the lost
// database was written with; so the replay decides what the lost host
// decided. It refuses a database that exists: it brings back a lost one
// and never writes over one.
func Restore(ctx context.Context, cfg *config.Config, o RestoreConfig) (RestoreReport, error) {
	rep := RestoreReport{FromBackup: o.Backup}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	for _, p := range []string{cfg.Database, cfg.Database + "-wal"} {
		if _, err := os.Lstat(p); err == nil {
			return rep, fmt.Errorf("restore: %s exists: restore brings back a lost database and never writes over one; move it away first", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return rep, fmt.Errorf("restore: %w", err)
		}
	}
	if cfg.KeyFile == "" {
		return rep, errors.New("restore: the configuration names no host key (key_file): without it no replay can draw the same roles")
	}
	key, err := hostkey.Load(cfg.KeyFile)
	if err != nil {
		return rep, fmt.Errorf("restore: %w: the key backed up with the configuration is needed", err)
	}

	// The mailbox is listed before anything is written, so that a restore
	// that cannot read it leaves nothing behind.
	wc, err := mailboxConfig(cfg, log)
	if err != nil {
		return rep, fmt.Errorf("restore: %w", err)
	}
	hist, err := watcher.OpenHistory(ctx, wc)
	if err != nil {
		return rep, fmt.Errorf("restore: read the mailbox: %w", err)
	}
	defer hist.Close()
	listed := now()
	rep.Messages = len(hist.Messages)

	var reads []store.Read
	if o.Backup != "" {
		if reads, err = checkBackup(ctx, o.Backup, key, hist, log); err != nil {
			return rep, err
		}
		if err := copyBackup(o.Backup, cfg.Database); err != nil {
			return rep, err
		}
	}
	// A restore that fails leaves no database behind: serve would take
	// it for the host's, and never read again the mail it had not
	// replayed, which is flagged \Seen already.
	restored := false
	defer func() {
		if !restored {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(cfg.Database + suffix)
			}
		}
	}()
	// Game time while replaying is the arrival of the message in hand.
	var mu sync.Mutex
	cur := time.Time{}
	if len(hist.Messages) > 0 {
		cur = hist.Messages[0].Arrived
	} else {
		cur = listed
	}
	clock, err := GameClock(cfg.Database, cfg.Speed, listed)
	if err != nil {
		return rep, err
	}
	clock.Real = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return cur
	}
	moveTo := func(t time.Time) {
		mu.Lock()
		if t.After(cur) {
			cur = t
		}
		mu.Unlock()
	}
	svc, err := Start(ctx, cfg, Config{Clock: clock, Log: log, Key: key})
	if err != nil {
		return rep, err
	}
	defer svc.Close()
	h, st := svc.Host(), svc.Store()
	before, err := eventCounts(ctx, st)
	if err != nil {
		return rep, err
	}
	replayed := map[string]int{}

	for _, m := range hist.Messages {
		if _, err := st.InboundByUID(ctx, m.Mailbox, m.UIDValidity, m.UID); err == nil {
			rep.Known++
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return rep, err
		}
		// Every deadline before the message's arrival is applied first,
		// at its own time: all the mail that arrived before it has been.
		moveTo(m.Arrived)
		h.Advance(ctx, m.Arrived)
		if err := h.TickDue(ctx); err != nil {
			return rep, fmt.Errorf("restore: deadlines before %s: %w", m.Arrived.UTC().Format(time.RFC3339), err)
		}
		f, err := hist.Read(ctx, m)
		if err != nil {
			return rep, fmt.Errorf("restore: %w", err)
		}
		errs := h.HandleBatch(ctx, []host.Mail{{Mailbox: f.Mailbox, UIDValidity: f.UIDValidity, UID: f.UID,
			Raw: f.Raw, Size: int(f.Size), Arrived: f.Arrived}})
		if errs[0] != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s UID %d (arrived %s): %v", f.Mailbox, f.UID, f.Arrived.UTC().Format(time.RFC3339), errs[0]))
			continue
		}
		rep.Replayed++
		// A message the backup had applied under another UID (moved, or
		// delivered twice) is a duplicate, recorded under no new UID.
		if in, err := st.InboundByUID(ctx, f.Mailbox, f.UIDValidity, f.UID); err == nil && in.Game != "" {
			replayed[in.Game]++
		}
	}
	// Up to the listing, less the slack a message may take to show, every
	// message has been read: the deadlines until then are applied too.
	// Later ones are serve's.
	until := listed.Add(-time.Duration(cfg.IMAP.ArrivalSlack))
	moveTo(until)
	h.Advance(ctx, until)
	if err := h.TickDue(ctx); err != nil {
		return rep, fmt.Errorf("restore: deadlines until %s: %w", until.UTC().Format(time.RFC3339), err)
	}

	// Mail the lost host had sent is in the provider's folder of sent
	// mail: found there by Message-ID, it is recorded as sent rather than
	// sent again.
	if err := recordSent(ctx, st, hist, cfg.IMAP.SentFolder, now(), &rep); err != nil {
		return rep, err
	}

	// A game whose mail the mailbox no longer holds in part cannot be
	// proven complete: what was deleted after the backup may be missing
	// from it too. It is replayed as far as the mailbox goes and paused,
	// so that no deadline passes and nothing more is decided on mail that
	// may be missing until its referee has looked and sent RESUME.
	rep.Missing, rep.Gaps = findMissing(reads, hist, cfg.IMAP.MoveTo)
	missing := map[string]int{}
	for _, m := range rep.Missing {
		missing[m.Game]++
	}
	paused := map[string]bool{}
	for _, id := range slices.Sorted(maps.Keys(missing)) {
		if id == "" {
			continue
		}
		p, err := h.PauseForRestore(ctx, id)
		if err != nil {
			return rep, fmt.Errorf("restore: pause %s, whose mail is missing: %w", id, err)
		}
		paused[id] = p
	}
	after, err := eventCounts(ctx, st)
	if err != nil {
		return rep, err
	}
	for _, id := range slices.Sorted(maps.Keys(after)) {
		s, _ := h.Game(id)
		rep.Games = append(rep.Games, GameReplay{Game: id, Before: before[id], After: after[id], Replayed: replayed[id],
			Ended: s != nil && s.Phase == engine.EndedPhase, Missing: missing[id], Paused: paused[id]})
	}
	if err := tell(ctx, h, o.Backup, listed, &rep); err != nil {
		return rep, err
	}
	restored = true
	return rep, nil
}

// checkBackup refuses, before anything is written, a backup that cannot
// be replayed onto: one written with another host key (the replay would
// hand out other tokens and draw other roles than the lost host did), and
// one whose folders have changed their UIDVALIDITY since (the server then
// numbers its messages anew, and may have dated them anew, so neither
// what the backup applied nor the order of arrival can be told). It names
// what cannot be recovered and for which games.
func checkBackup(ctx context.Context, backup string, key *hostkey.Key, hist *watcher.History, log *slog.Logger) ([]store.Read, error) {
	bst, err := store.OpenReadOnly(ctx, backup, store.Config{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("restore: open the backup: %w", err)
	}
	defer bst.Close()
	fp, err := bst.KeyFingerprint(ctx)
	if err != nil {
		return nil, err
	}
	if fp != "" && fp != key.Fingerprint() {
		return nil, fmt.Errorf("restore: %w: the backup %s has %s, the key file %s; nothing was restored: restore the key backed up with the configuration",
			store.ErrKeyMismatch, backup, fp, key.Fingerprint())
	}
	validities, err := bst.InboxValidities(ctx)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, f := range hist.Folders {
		if was, ok := validities[f.Name]; ok && !f.Missing && !slices.Contains(was, f.UIDValidity) {
			changed = append(changed, fmt.Sprintf("%s (UIDVALIDITY %v in the backup, %d now)", f.Name, was, f.UIDValidity))
		}
	}
	if len(changed) == 0 {
		reads, err := bst.Reads(ctx)
		if err != nil {
			return nil, fmt.Errorf("restore: read the backup: %w", err)
		}
		return reads, nil
	}
	games, err := bst.Games(ctx)
	if err != nil {
		return nil, err
	}
	var open, whole []string
	for _, g := range games {
		if g.Status == "ended" {
			whole = append(whole, g.ID)
		} else {
			open = append(open, g.ID)
		}
	}
	return nil, fmt.Errorf("restore: the mail server has numbered its messages anew since the backup in %s: which of them the backup applied, and in which order they came, cannot be told, so nothing was replayed or restored. "+
		"Games whose mail since the backup is lost: %v; games the backup holds whole (they had ended): %v",
		strings.Join(changed, ", "), open, whole)
}

// recordSent records as sent the outbox's unsent messages that the
// folder of sent mail holds, and reports the rest.
func recordSent(ctx context.Context, st *store.Store, hist *watcher.History, folder string, now time.Time, rep *RestoreReport) error {
	unsent, err := st.OutMessages(ctx, store.OutPending)
	if err != nil {
		return err
	}
	folder, ids, err := hist.SentMessageIDs(ctx, folder)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	rep.SentFolder = folder
	var found []int64
	for _, m := range unsent {
		if ids[m.MessageID] {
			found = append(found, m.ID)
			continue
		}
		rep.SentAgain = append(rep.SentAgain, Resent{Game: m.Game, Kind: m.Kind, MessageID: m.MessageID,
			Subject: subjectOf(m.Raw), To: m.To})
	}
	if err := st.MarkAllSent(ctx, found, now); err != nil {
		return fmt.Errorf("restore: record the mail found sent: %w", err)
	}
	rep.FoundSent = len(found)
	return nil
}

// tell queues to each game's referee the restore's account of the game
// (compose.Restored): every game under way, and every game that ended
// but that the restore changed, whose mail is missing in part, or that
// has mail going out again. A game the backup holds whole, ended, with
// nothing to send, is not news. Mail gone for no game that can be told
// (Gap) is told to every referee told.
func tell(ctx context.Context, h *host.Host, backup string, listed time.Time, rep *RestoreReport) error {
	again := map[string][]templates.Resent{}
	for _, m := range rep.SentAgain {
		again[m.Game] = append(again[m.Game], templates.Resent{Subject: m.Subject, Recipients: len(m.To)})
	}
	gone := map[string][]compose.Gone{}
	for _, m := range rep.Missing {
		gone[m.Game] = append(gone[m.Game], compose.Gone{Arrived: m.Arrived, From: m.From, Subject: m.Subject})
	}
	unaccounted := 0
	for _, g := range rep.Gaps {
		unaccounted += g.Count
	}
	for _, g := range rep.Games {
		if g.Ended && g.Before == g.After && g.Replayed == 0 && len(again[g.Game]) == 0 && g.Missing == 0 {
			continue
		}
		n := compose.RestoreNotice{Replayed: g.Replayed, Before: g.Before, After: g.After, Again: again[g.Game],
			NoSentFolder: rep.SentFolder == "", Missing: gone[g.Game], Paused: g.Paused, Unaccounted: unaccounted, Listed: listed}
		if backup != "" {
			n.Backup = filepath.Base(backup)
		}
		id, err := h.Restored(ctx, g.Game, n)
		if err != nil {
			return fmt.Errorf("restore: tell the referee of %s: %w", g.Game, err)
		}
		if id != "" {
			rep.Notices = append(rep.Notices, id)
		}
	}
	return nil
}

// subjectOf is the decoded Subject of a message, cut short when long.
func subjectOf(raw []byte) string {
	hdr, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return ""
	}
	subject := hdr.Get("Subject")
	if dec, err := new(mime.WordDecoder).DecodeHeader(subject); err == nil {
		subject = dec
	}
	return shorten(strings.Join(strings.Fields(subject), " "), 72)
}

// mailboxConfig is watcherConfig with the account's login: its OAuth2
// token source where it logs in with OAuth2, as serve's watcher does. For
// the readers of the whole mailbox that come before a host exists
// (restore, and serve's check of its database), which no referee is
// told about when the authorisation fails: they fail and say why.
func mailboxConfig(cfg *config.Config, log *slog.Logger) (watcher.Config, error) {
	wc := watcherConfig(cfg, log)
	tokens, err := TokenSource(cfg, nil, log)
	if err != nil {
		return wc, fmt.Errorf("the OAuth2 authorisation: %w", err)
	}
	wc.OAuth2 = Bearer(cfg.IMAP.Account, tokens)
	return wc, nil
}

// watcherConfig is the watcher's account and folders of cfg.
func watcherConfig(cfg *config.Config, log *slog.Logger) watcher.Config {
	return watcher.Config{
		URL: cfg.IMAP.URL, Username: cfg.IMAP.Username, Password: cfg.IMAP.Password,
		Mailbox: cfg.IMAP.Mailbox, MoveTo: cfg.IMAP.MoveTo, TLSConfig: TLSConfig(cfg.IMAP.Account),
		MinBackoff: 100 * time.Millisecond, Logger: log,
		CommandTimeout: time.Duration(cfg.IMAP.Timeout), IdleRefresh: time.Duration(cfg.IMAP.IdleRefresh),
		MaxMessageBytes: cfg.Limits.MaxMessageBytes,
	}
}

// eventCounts is the number of events of each game.
func eventCounts(ctx context.Context, st *store.Store) (map[string]int, error) {
	games, err := st.Games(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(games))
	for _, g := range games {
		evs, err := st.Events(ctx, g.ID, 0)
		if err != nil {
			return nil, err
		}
		out[g.ID] = len(evs)
	}
	return out, nil
}

// copyBackup copies the backup to the database's place, readable by the
// host's user alone, synced before the host opens it.
func copyBackup(backup, db string) error {
	src, err := os.Open(backup)
	if err != nil {
		return fmt.Errorf("restore: open the backup: %w", err)
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	dst, err := os.OpenFile(db, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(db)
		return fmt.Errorf("restore: copy the backup to %s: %w", db, err)
	}
	return nil
}
