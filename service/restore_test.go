package service_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/internal/testkit/gametable"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// table is a game played through the embedded mail servers by a host that
// serve would run, on a clock the test moves: every message reaches the
// host's mailbox at the clock's time (its INTERNALDATE), as mail that
// came while the test looked on, and deadlines pass when the test moves
// the clock past them.
type table struct {
	*gametable.Table
	t   *testing.T
	srv *mailserver.Server
}

const restoreAuthServ = "mx.players.test"

func newTable(t *testing.T, seed uint64) *table {
	return newKeyedTable(t, seed, hostkey.Generate())
}

// newKeyedTable is newTable with the host key given, so that two tables
// can be twins.
func newKeyedTable(t *testing.T, seed uint64, key *hostkey.Key) *table {
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org", ExtraDomains: []string{"players.test"},
		Users: map[string]string{"host": "pw"}, AutoCreateUsers: true, SaveSent: "Sent"})
	dir := t.TempDir()
	cfg := config.Defaults()
	cfg.Address, cfg.Referees = "host@example.org", []string{"referee@players.test"}
	cfg.Database = filepath.Join(dir, "games.db")
	cfg.KeyFile = filepath.Join(dir, "mafiamail.key")
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Password = "imap://"+srv.IMAPAddr(), "host", "pw"
	cfg.IMAP.ArrivalSlack = config.Duration(100 * time.Millisecond)
	cfg.SMTP.URL, cfg.SMTP.Username, cfg.SMTP.Password = "smtp://"+srv.SMTPAddr(), "host", "pw"
	cfg.IMAP.SentFolder = "Sent"
	cfg.Auth.AuthservID = restoreAuthServ
	if err := key.Write(cfg.KeyFile); err != nil {
		t.Fatal(err)
	}
	// The embedded server files a message under the arrival it is given,
	// as if it had come then.
	tb := gametable.New(t, seed, gametable.Config{Host: cfg, Deliver: srv.DeliverAt, PlayerDomain: "players.test",
		Subject: "game", Game: "g1", Wait: 30 * time.Second})
	return &table{Table: tb, t: t, srv: srv}
}

// forgetSent deletes the message of Message-ID id from the host's folder
// of sent mail.
func (tb *table) forgetSent(id string) {
	tb.t.Helper()
	c := mailtest.IMAP(tb.t, tb.srv.IMAPAddr(), "host", "pw", "Sent")
	defer c.Close()
	found, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: id}}}, nil).Wait()
	if err != nil || len(found.AllUIDs()) != 1 {
		tb.t.Fatalf("find %s in Sent: %v %v", id, found, err)
	}
	mailtest.AddFlags(tb.t, c, imap.UIDSetNum(found.AllUIDs()...), imap.FlagDeleted)
	if err := c.Expunge().Close(); err != nil {
		tb.t.Fatal(err)
	}
}

// outbox reads the outbox: each message's bytes and status by Message-ID.
func outbox(t *testing.T, st *store.Store) map[string]store.OutMessage {
	t.Helper()
	ms, err := st.OutMessages(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.OutMessage{}
	for _, m := range ms {
		out[m.MessageID] = m
	}
	return out
}

// restoreAndCompare loses the database, restores it from backup ("" for
// none) and requires every game's log to be the one the host had, and
// its outbox to hold the same mail, byte for byte, recorded as sent.
func (tb *table) restoreAndCompare(want map[string][]string, wantOut map[string]store.OutMessage, backup string) service.RestoreReport {
	tb.t.Helper()
	gametable.RemoveDatabase(tb.t, tb.Cfg.Database)
	rep, err := service.Restore(tb.t.Context(), &tb.Cfg, service.RestoreConfig{Backup: backup, Now: tb.Clock, Log: tb.Log})
	if err != nil {
		tb.t.Fatalf("restore from %q: %v", backup, err)
	}
	tb.t.Logf("restored from %q: %d messages, %d known, %d replayed, games %+v", backup, rep.Messages, rep.Known, rep.Replayed, rep.Games)
	if len(rep.Failed) > 0 {
		tb.t.Errorf("messages that failed in the replay: %v", rep.Failed)
	}
	st, err := store.Open(tb.t.Context(), tb.Cfg.Database, store.Config{Logger: tb.Log})
	if err != nil {
		tb.t.Fatal(err)
	}
	got := gametable.EventLogs(tb.t, st)
	gotOut := outbox(tb.t, st)
	st.Close()
	tb.checkNotices(rep, gotOut, backup)
	for _, id := range rep.Notices {
		delete(gotOut, id)
	}
	if len(gotOut) != len(wantOut) {
		tb.t.Errorf("restored %d messages of mail, the host had queued %d", len(gotOut), len(wantOut))
	}
	for id, w := range wantOut {
		g, ok := gotOut[id]
		switch {
		case !ok:
			tb.t.Errorf("restored no message %s (%s to %v)", id, w.Kind, w.To)
		case string(g.Raw) != string(w.Raw):
			tb.t.Errorf("message %s (%s to %v) differs:\nhost:\n%s\nrestored:\n%s", id, w.Kind, w.To, w.Raw, g.Raw)
		case g.Status != store.OutSent && !slices.ContainsFunc(rep.SentAgain, func(m service.Resent) bool { return m.MessageID == id }):
			tb.t.Errorf("message %s (%s to %v), which the host had sent, is %s after the restore", id, w.Kind, w.To, g.Status)
		}
	}
	if rep.SentFolder != "Sent" {
		tb.t.Errorf("the restore read the sent mail of %q", rep.SentFolder)
	}
	if len(got) != len(want) {
		tb.t.Fatalf("restored %d games, the host had %d", len(got), len(want))
	}
	for id, w := range want {
		g := got[id]
		for i := range max(len(w), len(g)) {
			var a, b string
			if i < len(w) {
				a = w[i]
			}
			if i < len(g) {
				b = g[i]
			}
			if a != b {
				tb.t.Fatalf("game %s, restored from %q: event %d differs:\nhost:     %s\nrestored: %s", id, backup, i+1, a, b)
			}
		}
	}
	return rep
}

// checkNotices requires the restore to have queued one notice to the
// referee of g1, unsent, in the referee's private channel, saying what
// the restore did: the backup, the messages applied again, and each mail
// that goes out again by its subject.
func (tb *table) checkNotices(rep service.RestoreReport, out map[string]store.OutMessage, backup string) {
	tb.t.Helper()
	var g1 service.GameReplay
	for _, g := range rep.Games {
		if g.Game == "g1" {
			g1 = g
		}
	}
	// A game that had ended, which the backup holds whole and which has
	// no mail to send again, is not news to its referee.
	if g1.Ended && g1.Before == g1.After && len(rep.SentAgain) == 0 {
		if len(rep.Notices) != 0 {
			tb.t.Errorf("the restore told the referee of a game it left as it was: %v", rep.Notices)
		}
		return
	}
	if len(rep.Notices) != 1 {
		tb.t.Fatalf("the restore queued %d notices to the referees, want one for g1: %v", len(rep.Notices), rep.Notices)
	}
	n, ok := out[rep.Notices[0]]
	switch {
	case !ok:
		tb.t.Fatalf("the notice %s is not in the outbox", rep.Notices[0])
	case n.Status != store.OutPending || n.Game != "g1" || len(n.To) != 1 || n.To[0] != "referee@players.test":
		tb.t.Fatalf("the notice is %s, for game %q, to %v; want it waiting, for g1, to the referee", n.Status, n.Game, n.To)
	}
	subject, body := readMail(tb.t, n.Raw)
	text := subject + "\n" + strings.Join(strings.Fields(body), " ")
	from := "Host restored from its mailbox alone"
	if backup != "" {
		from = "Host restored from a backup"
	}
	again := "nothing sent again"
	if len(rep.SentAgain) == 1 {
		again = "1 mail sent again"
	} else if len(rep.SentAgain) > 1 {
		again = fmt.Sprintf("%d mails sent again", len(rep.SentAgain))
	}
	applied := fmt.Sprintf("%d messages applied again", g1.Replayed)
	if g1.Replayed == 1 {
		applied = "1 message applied again"
	}
	want := []string{"[g1] Report: " + from + " — " + again + "\n",
		fmt.Sprintf("This game: %s; %d events before the restore, %d now.", applied, g1.Before, g1.After)}
	if backup != "" {
		want = append(want, "from the backup "+filepath.Base(backup)+":")
	}
	for _, m := range rep.SentAgain {
		want = append(want, "- "+m.Subject+" (")
	}
	if len(rep.SentAgain) == 0 {
		want = append(want, "No mail of this game goes out again")
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			tb.t.Errorf("the referee's notice does not say %q:\n%s", w, text)
		}
	}
	// Every message replayed is g1's but NEW GAME, which was for no game
	// yet.
	newGame := 0
	if backup == "" {
		newGame = 1
	}
	if g1.Replayed != rep.Replayed-newGame {
		tb.t.Errorf("g1 has %d messages replayed, the restore %d, events %d to %d", g1.Replayed, rep.Replayed, g1.Before, g1.After)
	}
}

// readMail is a message's decoded subject and its plain text.
func readMail(t *testing.T, raw []byte) (subject, text string) {
	t.Helper()
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if subject, err = r.Header.Subject(); err != nil {
		t.Fatal(err)
	}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return subject, text
		}
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := p.Header.(*gomail.InlineHeader); ok {
			if ct, _, _ := h.ContentType(); ct == "text/plain" && text == "" {
				b, err := io.ReadAll(p.Body)
				if err != nil {
					t.Fatal(err)
				}
				text = string(b)
			}
		}
	}
}

// TestRestoreReplaysTheMailbox plays a game through the mailbox, loses the
// database, and brings it back twice: from nothing, and from a backup
// made at a random moment of the game. Each time every event of the game
// comes back, in the same order, at the same times: the sign-up, the role
// draw (the same roles, salt and commitment), every vote and night action
// at its mail's arrival, and every deadline between them at its own time.
func TestRestoreReplaysTheMailbox(t *testing.T) {
	seed := testseed.Seed(t)
	tb := newTable(t, seed)
	tb.Start()
	tb.SignUp(nil)
	turns := 30
	backupAt := tb.Rng.IntN(turns + 1) // 0: at START
	backup := filepath.Join(t.TempDir(), "backup.db")
	backedUp := false
	// Now and then a deadline passes between two messages.
	tb.Play(turns, 4, func(i int) {
		// A game over before the turn drawn is backed up after its end.
		if i == backupAt || (!backedUp && tb.Game().Phase == engine.EndedPhase) {
			if err := tb.Svc.Store().Backup(t.Context(), backup); err != nil {
				t.Fatal(err)
			}
			backedUp = true
			t.Logf("backup after turn %d, in phase %s", i, tb.Game().Phase)
		}
	})
	want, wantOut := gametable.EventLogs(t, tb.Svc.Store()), outbox(t, tb.Svc.Store())
	tb.Stop()
	if len(want["g1"]) < 20 {
		t.Fatalf("the game has only %d events", len(want["g1"]))
	}
	t.Logf("the game has %d events, phase %s", len(want["g1"]), tb.Game().Phase)

	rep := tb.restoreAndCompare(want, wantOut, "")
	if rep.Known != 0 || rep.Replayed != tb.Sent {
		t.Errorf("from nothing: %d known, %d replayed of %d sent", rep.Known, rep.Replayed, tb.Sent)
	}
	if len(rep.SentAgain) != 0 || rep.FoundSent != len(wantOut) {
		t.Errorf("from nothing: %d messages found sent of %d, %d to send again", rep.FoundSent, len(wantOut), len(rep.SentAgain))
	}

	// A message the backup had not sent, which the folder of sent mail no
	// longer holds, is one the restore cannot tell went out: it is sent
	// again, and said so.
	bst, err := store.OpenReadOnly(t.Context(), backup, store.Config{Logger: tb.Log})
	if err != nil {
		t.Fatal(err)
	}
	inBackup := outbox(t, bst)
	bst.Close()
	var lost string
	for _, id := range slices.Sorted(maps.Keys(wantOut)) {
		if m, ok := inBackup[id]; (!ok || m.Status != store.OutSent) && (lost == "" || tb.Rng.IntN(4) == 0) {
			lost = id
		}
	}
	if lost != "" {
		tb.forgetSent(lost)
	}
	rep = tb.restoreAndCompare(want, wantOut, backup)
	if rep.Known == 0 || rep.Known+rep.Replayed != tb.Sent {
		t.Errorf("from the backup: %d known, %d replayed of %d sent", rep.Known, rep.Replayed, tb.Sent)
	}
	if lost == "" && len(rep.SentAgain) != 0 || lost != "" && (len(rep.SentAgain) != 1 || rep.SentAgain[0].MessageID != lost) {
		var again []string
		for _, m := range rep.SentAgain {
			again = append(again, m.MessageID)
		}
		t.Errorf("from the backup, with %s gone from the sent mail: sends again %v", lost, again)
	}

	tb.refusals(backup)
}

// refusals checks that a restore that cannot replay says what and why,
// and leaves no database behind.
func (tb *table) refusals(backup string) {
	t := tb.t
	gone := func(what string) {
		t.Helper()
		if _, err := os.Stat(tb.Cfg.Database); !os.IsNotExist(err) {
			t.Errorf("%s: a database was left behind (%v)", what, err)
		}
	}
	// Another key would hand out other tokens and draw other roles.
	other := tb.Cfg
	other.KeyFile = filepath.Join(t.TempDir(), "other.key")
	if _, err := hostkey.Create(other.KeyFile); err != nil {
		t.Fatal(err)
	}
	gametable.RemoveDatabase(t, tb.Cfg.Database)
	_, err := service.Restore(t.Context(), &other, service.RestoreConfig{Backup: backup, Now: tb.Clock, Log: tb.Log})
	if !errors.Is(err, store.ErrKeyMismatch) {
		t.Errorf("restore with another key: %v, want ErrKeyMismatch", err)
	}
	gone("another key")

	// A server that renumbered its messages: the backup's UIDs and the
	// order of arrival can no longer be trusted.
	if _, err := tb.srv.ResetMailbox("host"); err != nil {
		t.Fatal(err)
	}
	_, err = service.Restore(t.Context(), &tb.Cfg, service.RestoreConfig{Backup: backup, Now: tb.Clock, Log: tb.Log})
	if err == nil || !strings.Contains(err.Error(), "INBOX (UIDVALIDITY") || !strings.Contains(err.Error(), "g1") {
		t.Errorf("restore after the mailbox's UIDVALIDITY changed: %v", err)
	}
	gone("UIDVALIDITY changed")
}

// expunge deletes the message of a UID from a folder of the host's
// mailbox, as a person or a provider's retention rule would.
func (tb *table) expunge(folder string, uid uint32) {
	tb.t.Helper()
	c := mailtest.IMAP(tb.t, tb.srv.IMAPAddr(), "host", "pw", folder)
	defer c.Close()
	uids := imap.UIDSetNum(imap.UID(uid))
	mailtest.AddFlags(tb.t, c, uids, imap.FlagDeleted)
	if err := c.UIDExpunge(uids).Close(); err != nil {
		tb.t.Fatal(err)
	}
}

// uidOf is the UID of the message of a Message-ID in a folder of the
// host's mailbox.
func (tb *table) uidOf(folder, id string) uint32 {
	tb.t.Helper()
	h, err := watcher.OpenHistory(tb.t.Context(), watcher.Config{URL: tb.Cfg.IMAP.URL, Username: "host", Password: "pw",
		Mailbox: "INBOX", MoveTo: folder})
	if err != nil {
		tb.t.Fatal(err)
	}
	defer h.Close()
	for _, m := range h.Messages {
		if m.Mailbox == folder && m.MessageID == id {
			return m.UID
		}
	}
	tb.t.Fatalf("no %s in %s", id, folder)
	return 0
}

// TestRestoreNamesDeletedMail deletes from the mailbox a message the
// backup had read and one that came after the backup, and restores. From
// the backup, the first is named, with its game, which cannot be proven
// complete: the game is paused until its referee's RESUME, and the
// referee's notice says why and lists the message; the second, which no
// record accounts for, is a gap in the folder's UIDs, told as mail gone
// for a game that cannot be told. From no backup, both are gaps, and no
// game is paused on a gap alone.
//
// With processed mail moved to another folder, where the UIDs are new,
// the message the backup read is named by its Message-ID, and the gaps
// are those of the folder mail is moved to.
func TestRestoreNamesDeletedMail(t *testing.T) {
	seed := testseed.Seed(t)
	for _, moveTo := range []string{"", "Done"} {
		t.Run("move_to="+moveTo, func(t *testing.T) {
			tb := newTable(t, seed)
			tb.Cfg.IMAP.MoveTo = moveTo
			namesDeletedMail(t, tb)
		})
	}
}

func namesDeletedMail(t *testing.T, tb *table) {
	tb.Start()
	tb.SignUp(nil)
	tb.Begin()
	turn := func() {
		tb.Advance(time.Duration(5+tb.Rng.IntN(20)) * time.Minute)
		tb.Turn()
	}
	for range 3 {
		turn()
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := tb.Svc.Store().Backup(t.Context(), backup); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		turn()
	}
	tb.Drain()
	tb.Stop()

	bst, err := store.OpenReadOnly(t.Context(), backup, store.Config{Logger: tb.Log})
	if err != nil {
		t.Fatal(err)
	}
	reads, err := bst.Reads(t.Context())
	bst.Close()
	if err != nil {
		t.Fatal(err)
	}
	var known []store.Read
	last := uint32(0)
	for _, r := range reads {
		if r.Game == "g1" {
			known = append(known, r)
		}
		last = max(last, r.UID)
	}
	gone := known[tb.Rng.IntN(len(known))]
	later := last + 1 + uint32(tb.Rng.IntN(tb.Sent-int(last)))
	t.Logf("deleting UID %d (%s, read by the backup) and UID %d (after the backup, of %d)", gone.UID, gone.MessageID, later, tb.Sent)
	folder, goneUID, laterUID := "INBOX", gone.UID, later
	if moveTo := tb.Cfg.IMAP.MoveTo; moveTo != "" {
		folder = moveTo
		goneUID, laterUID = tb.uidOf(moveTo, "<"+gone.MessageID+">"), tb.uidOf(moveTo, fmt.Sprintf("<m%d@players.test>", later))
	}
	tb.expunge(folder, goneUID)
	tb.expunge(folder, laterUID)

	gametable.RemoveDatabase(t, tb.Cfg.Database)
	rep, err := service.Restore(t.Context(), &tb.Cfg, service.RestoreConfig{Backup: backup, Now: tb.Clock, Log: tb.Log})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].UID != gone.UID || rep.Missing[0].Game != "g1" || rep.Missing[0].MessageID != gone.MessageID {
		t.Errorf("from the backup: missing %+v, want UID %d of g1", rep.Missing, gone.UID)
	}
	// In the folder mail is moved to, the gaps are counted, less those of
	// the messages named missing.
	if len(rep.Gaps) != 1 || rep.Gaps[0].Folder != folder || rep.Gaps[0].Count != 1 ||
		folder == "INBOX" && rep.Gaps[0].First != later {
		t.Errorf("from the backup: gaps %+v, want UID %d of %s", rep.Gaps, laterUID, folder)
	}
	st, err := store.Open(t.Context(), tb.Cfg.Database, store.Config{Logger: tb.Log})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(t.Context(), "g1", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := outbox(t, st)
	st.Close()
	lastEv := evs[len(evs)-1]
	ended := slices.ContainsFunc(evs, func(e store.Event) bool { return e.Type == string(engine.EvGameEnded) })
	if len(rep.Games) != 1 || rep.Games[0].Missing != 1 || rep.Games[0].Paused == ended {
		t.Fatalf("from the backup: %+v; the game ended: %v", rep.Games, ended)
	}
	if !ended && lastEv.Type != string(engine.EvPaused) {
		t.Errorf("the game's last event is %s, want it paused", lastEv.Type)
	}
	if len(rep.Notices) != 1 {
		t.Fatalf("notices %v", rep.Notices)
	}
	subject, body := readMail(t, out[rep.Notices[0]].Raw)
	text := strings.Join(strings.Fields(body), " ")
	wantSubject := "[g1] Report: Host restored from a backup — 1 message missing"
	if !ended {
		wantSubject = "[g1] Host restored from a backup — 1 message missing — waits for you: RESUME"
	}
	if subject != wantSubject {
		t.Errorf("the notice's subject is %q, want %q", subject, wantSubject)
	}
	want := []string{
		"This game cannot be proven complete: 1 message the host had read is no longer in its mailbox",
		", " + rep.Missing[0].From + ": game",
		"The mailbox also lacks 1 message that its server numbered and that no backup accounts for",
	}
	if !ended {
		want = append(want, "So the host has paused the game")
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the referee's notice does not say %q:\n%s", w, text)
		}
	}

	// Without a backup nothing names the message the lost host had read:
	// both are gaps, and a gap alone pauses nothing.
	gametable.RemoveDatabase(t, tb.Cfg.Database)
	rep, err = service.Restore(t.Context(), &tb.Cfg, service.RestoreConfig{Now: tb.Clock, Log: tb.Log})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := min(goneUID, laterUID), max(goneUID, laterUID)
	wantGaps := []service.Gap{{Folder: folder, First: lo, Last: lo, Count: 1}, {Folder: folder, First: hi, Last: hi, Count: 1}}
	if folder != "INBOX" || hi == lo+1 {
		// One run of UIDs, or one count for the folder mail is moved to.
		wantGaps = []service.Gap{{Folder: folder, First: lo, Last: hi, Count: 2}}
	}
	var gotGaps []service.Gap
	for _, g := range rep.Gaps {
		gotGaps = append(gotGaps, service.Gap{Folder: g.Folder, First: g.First, Last: g.Last, Count: g.Count})
	}
	if len(rep.Missing) != 0 || !slices.Equal(gotGaps, wantGaps) {
		t.Errorf("from no backup: missing %+v, gaps %+v, want gaps %+v", rep.Missing, gotGaps, wantGaps)
	}
	if len(rep.Games) != 1 || rep.Games[0].Paused || rep.Games[0].Missing != 0 {
		t.Errorf("from no backup: %+v", rep.Games)
	}
}

// TestServeRefusesADatabaseOlderThanItsMailbox: a backup copied in place
// of the database, whose mailbox holds mail a host read after the backup
// (\Seen, or moved), is refused with the restore that brings it up to
// date; so is a new database beside a mailbox a host has read. Once
// restored from it, the database is current, and serve would start.
func TestServeRefusesADatabaseOlderThanItsMailbox(t *testing.T) {
	seed := testseed.Seed(t)
	for _, moveTo := range []string{"", "Done"} {
		t.Run("move_to="+moveTo, func(t *testing.T) {
			tb := newTable(t, seed)
			tb.Cfg.IMAP.MoveTo = moveTo
			tb.Start()
			tb.SignUp(nil)
			backup := filepath.Join(t.TempDir(), "backup.db")
			if err := tb.Svc.Store().Backup(t.Context(), backup); err != nil {
				t.Fatal(err)
			}
			before := tb.Sent
			tb.Begin()
			for range 2 {
				tb.Advance(10 * time.Minute)
				tb.Turn()
			}
			tb.Drain()
			tb.Stop()
			if err := service.CheckCurrent(t.Context(), &tb.Cfg, tb.Log); err != nil {
				t.Fatalf("the host's own database: %v", err)
			}

			// The backup copied in place of the database.
			gametable.RemoveDatabase(t, tb.Cfg.Database)
			data, err := os.ReadFile(backup)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tb.Cfg.Database, data, 0o600); err != nil {
				t.Fatal(err)
			}
			err = service.CheckCurrent(t.Context(), &tb.Cfg, tb.Log)
			var behind *service.BehindMailbox
			if !errors.As(err, &behind) || behind.Fresh || behind.Unread != tb.Sent-before {
				t.Fatalf("a backup in place of the database, %d messages behind: %v", tb.Sent-before, err)
			}
			cmds := behind.Commands("mafiamail.toml")
			want := fmt.Sprintf("    mv %s %s.stale\n    mafiamail restore --config mafiamail.toml %s.stale\n", tb.Cfg.Database, tb.Cfg.Database, tb.Cfg.Database)
			if cmds != want || !strings.Contains(err.Error(), fmt.Sprintf("%d messages arrived after the last one it read", tb.Sent-before)) {
				t.Errorf("the refusal says %q, then\n%s", err, cmds)
			}
			// The commands it gives bring the database up to date.
			if err := os.Rename(tb.Cfg.Database, tb.Cfg.Database+".stale"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(tb.Cfg.Database + "-wal"); !os.IsNotExist(err) {
				t.Fatalf("the check left a write-ahead log behind: %v", err)
			}
			if _, err := service.Restore(t.Context(), &tb.Cfg, service.RestoreConfig{Backup: tb.Cfg.Database + ".stale", Now: tb.Clock, Log: tb.Log}); err != nil {
				t.Fatal(err)
			}
			if err := service.CheckCurrent(t.Context(), &tb.Cfg, tb.Log); err != nil {
				t.Errorf("after the restore: %v", err)
			}

			// No database at all beside a mailbox a host has read.
			gametable.RemoveDatabase(t, tb.Cfg.Database)
			err = service.CheckCurrent(t.Context(), &tb.Cfg, tb.Log)
			if !errors.As(err, &behind) || !behind.Fresh || behind.Unread != tb.Sent ||
				behind.Commands("mafiamail.toml") != "    mafiamail restore --config mafiamail.toml\n" {
				t.Errorf("no database: %v", err)
			}
		})
	}
}
