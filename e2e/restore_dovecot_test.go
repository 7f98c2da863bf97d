//go:build integration

package e2e

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/internal/testkit/gametable"
	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
	"github.com/mafiamail/mafiamail/service"
)

// restoreTurns is how many turns a game is played at most after START.
const restoreTurns = 22

// Kinds of instant at which the host loses its database.
const (
	lostAtSignup   = "sign-up"
	lostAfterStart = "after START"
	lostByDay      = "mid-day"
	lostByNight    = "night"
	lostOverClose  = "across a deadline"
	lostAfterEnd   = "after the end"
)

// dovecotGame is one run of a game on Postfix and Dovecot, with a clock
// the test moves. The players' mail reaches the host's INBOX on Dovecot
// with the clock's time as its arrival (IMAP APPEND with an INTERNALDATE,
// as a delivery at that moment would), so that two runs of the same seed
// and key decide the same; the host reads it over IMAP and sends through
// Postfix to the players' mailboxes on Dovecot.
type dovecotGame struct {
	*gametable.Table
	t     *testing.T
	stack *mailstack.Stack
	// kinds is, for each step (a message of the game's, or the end),
	// the kind of instant before it; steps counts them.
	kinds []string
	// again and notices are what the restores reported.
	again, notices map[string]bool
}

func newDovecotGame(t *testing.T, seed uint64, key []byte) *dovecotGame {
	t.Helper()
	stack := mailstack.Start(t, mailstack.Config{})
	for _, u := range append([]string{hostUser, "referee"}, gametable.Players...) {
		if err := stack.AddUser(strings.ToLower(u), e2ePass); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	cfg := config.Defaults()
	cfg.Address, cfg.Referees = stack.Address(hostUser), []string{stack.Address("referee")}
	cfg.Database, cfg.KeyFile = filepath.Join(dir, "games.db"), filepath.Join(dir, "mafiamail.key")
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Password = "imap://"+stack.IMAPAddr(), hostUser, e2ePass
	cfg.IMAP.ArrivalSlack = config.Duration(100 * time.Millisecond)
	cfg.SMTP.URL = "smtp://" + stack.SMTPAddr()
	cfg.Auth.AuthservID = e2eAuthServ
	k, err := hostkey.New(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Write(cfg.KeyFile); err != nil {
		t.Fatal(err)
	}
	// Postfix would stamp a message with the moment it came; APPEND files
	// it under the clock's.
	deliver := func(_, _ string, raw []byte, at time.Time) error {
		c := mailtest.IMAP(t, stack.IMAPAddr(), hostUser, e2ePass, "")
		defer c.Close()
		cmd := c.Append("INBOX", int64(len(raw)), &imap.AppendOptions{Time: at})
		if _, err := cmd.Write(raw); err != nil {
			return err
		}
		if err := cmd.Close(); err != nil {
			return err
		}
		_, err := cmd.Wait()
		return err
	}
	// The host checks its database against the mailbox before each start,
	// as serve does: a restore must leave one serve would run on.
	tb := gametable.New(t, seed, gametable.Config{Host: cfg, Deliver: deliver, PlayerDomain: stack.Domain(),
		Subject: "Re: [" + e2eGame + "]", Game: e2eGame, Wait: e2eWait, CheckCurrent: true})
	return &dovecotGame{Table: tb, t: t, stack: stack, again: map[string]bool{}, notices: map[string]bool{}}
}

// lose is what a run does to the host at one step: stop it, delete its
// database, move the clock while it is down (over, when set, past the
// game's next deadline), and restore it from backup ("" for none).
type lose struct {
	backup string
	over   bool
}

// play plays the seed's game. Before each step in cuts the host loses its
// database; at step backupAt a backup is made, which the first loss with
// a backup restores from. It records each step's kind.
func (g *dovecotGame) play(cuts map[int]lose, backupAt int) {
	g.Start()
	backup := filepath.Join(g.t.TempDir(), "backup.db")
	step := 0
	// at runs the step's bookkeeping: the backup, the loss, its kind.
	at := func(kind string, next func()) {
		g.kinds = append(g.kinds, kind)
		if step == backupAt {
			if err := g.Svc.Store().Backup(g.t.Context(), backup); err != nil {
				g.t.Fatal(err)
			}
		}
		if c, ok := cuts[step]; ok {
			g.Stop()
			gametable.RemoveDatabase(g.t, g.Cfg.Database)
			from := ""
			if c.backup != "" {
				from = backup
			}
			if c.over {
				next() // the clock moves on while the host is down
				next = nil
			}
			rep, err := service.Restore(g.t.Context(), &g.Cfg, service.RestoreConfig{Backup: from, Now: g.Clock, Log: g.Log})
			if err != nil {
				g.t.Fatalf("restore before step %d (%s) from %q: %v", step, kind, from, err)
			}
			g.t.Logf("lost the database before step %d (%s); restored from %q: %d known, %d replayed, %d found sent, %d sent again, %d missing",
				step, kind, from, rep.Known, rep.Replayed, rep.FoundSent, len(rep.SentAgain), len(rep.Missing))
			if len(rep.Failed) > 0 || len(rep.Missing) > 0 || len(rep.Gaps) > 0 {
				g.t.Errorf("restore: failed %v, missing %v, gaps %v", rep.Failed, rep.Missing, rep.Gaps)
			}
			for _, m := range rep.SentAgain {
				g.again[m.MessageID] = true
			}
			for _, id := range rep.Notices {
				g.notices[id] = true
			}
			g.Start()
		}
		step++
		if next != nil {
			next()
		}
	}
	g.SignUp(func(do func()) { at(lostAtSignup, do) })
	at(lostAtSignup, g.Begin)
	for i := 0; i < restoreTurns && g.Game().Phase != engine.EndedPhase; i++ {
		d, deadline := g.Step(3)
		kind := lostByDay
		switch {
		case i == 0:
			kind = lostAfterStart
		case deadline:
			kind = lostOverClose
		case g.Game().Phase == engine.NightPhase:
			kind = lostByNight
		}
		// The turn is chosen after the clock has moved, by the game as it
		// then stands, in both runs alike.
		at(kind, func() { g.Advance(d) })
		g.Turn()
	}
	at(lostAfterEnd, func() { g.Advance(time.Hour) })
	g.settle()
}

// settle waits until the host has sent everything and Postfix has
// delivered it.
func (g *dovecotGame) settle() {
	g.t.Helper()
	g.Drain()
	if err := g.stack.WaitDelivered(); err != nil {
		g.t.Fatal(err)
	}
}

// hostPart is a delivered message as the host wrote it: from its Date
// on, without the fields Postfix and Dovecot put above it.
func hostPart(raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte("Date: ")) {
		return raw
	}
	if i := bytes.Index(raw, []byte("\r\nDate: ")); i >= 0 {
		return raw[i+2:]
	}
	return raw
}

// mailboxes is, for each participant, the copies in their INBOX by
// Message-ID, as the host wrote them.
func (g *dovecotGame) mailboxes() map[string]map[string][][]byte {
	out := map[string]map[string][][]byte{}
	for _, u := range append([]string{"referee"}, gametable.Players...) {
		u = strings.ToLower(u)
		out[u] = map[string][][]byte{}
		for _, l := range readMailbox(g.t, g.stack.IMAPAddr(), u) {
			out[u][l.MessageID] = append(out[u][l.MessageID], hostPart(l.Raw))
		}
	}
	return out
}

// roles is what each player's role messages say their role is.
func (g *dovecotGame) roles() map[string][]string {
	out := map[string][]string{}
	for _, u := range gametable.Players {
		u = strings.ToLower(u)
		for _, l := range readMailbox(g.t, g.stack.IMAPAddr(), u) {
			if l.Kind != "role" {
				continue
			}
			m := roleLine.FindStringSubmatch(l.Text)
			if m == nil {
				g.t.Errorf("%s's role message names no role:\n%s", u, l.Text)
				continue
			}
			if !slices.Contains(out[u], m[1]) {
				out[u] = append(out[u], m[1])
			}
		}
	}
	return out
}

// TestRestoreOnDovecot plays a game through Postfix and Dovecot once
// undisturbed, and then again, with the same seed and host key, in runs
// that each lose the database twice, so that together they lose it at an
// instant of every kind: in sign-up, after START, mid-day, at night,
// across a deadline (the clock passes it while the host is down) and
// after the end, paired by the seed. In each run the first loss is
// restored from a backup made at an earlier random step, the second from
// none. Each game's event log must be its twin's; each participant's
// mailbox must hold the twin's mail, the same bytes under the same
// Message-ID, with no copy more but of what the restores said they sent
// again, and nothing else but the referee's restore notices; and no
// player may hold role mail that contradicts another.
func TestRestoreOnDovecot(t *testing.T) {
	t.Parallel()
	seed := testseed.Seed(t)
	pick := rand.New(rand.NewPCG(seed, 1))
	key := make([]byte, hostkey.Size)
	for i := range key {
		key[i] = byte(pick.UintN(256))
	}

	twin := newDovecotGame(t, seed, key)
	twin.play(nil, -1)
	want := twinRecord{logs: gametable.EventLogs(t, twin.Svc.Store()), mail: twin.mailboxes(), roles: twin.roles()}
	twin.Stop()

	// Every kind the twin's game passed through, in an order the seed
	// picks, two to a run.
	byKind := map[string][]int{}
	for step, k := range twin.kinds {
		if step > 0 {
			byKind[k] = append(byKind[k], step)
		}
	}
	// A game that ends before its first night, or whose nights all pass
	// a deadline, has no instant of that kind: the runs lose the
	// database at every kind the game has.
	var kinds []string
	for _, k := range []string{lostAtSignup, lostAfterStart, lostByDay, lostByNight, lostOverClose, lostAfterEnd} {
		if len(byKind[k]) == 0 {
			t.Logf("the game passed no instant of the kind %q to lose the database at", k)
			continue
		}
		kinds = append(kinds, k)
	}
	if len(kinds) < 4 {
		t.Fatalf("the game passed instants of %d kinds alone: %v", len(kinds), kinds)
	}
	pick.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for run := 0; run < len(kinds); run += 2 {
		var steps []int
		for _, k := range kinds[run:min(run+2, len(kinds))] {
			s := byKind[k]
			steps = append(steps, s[pick.IntN(len(s))])
		}
		slices.Sort(steps)
		backupAt := pick.IntN(steps[0])
		cuts := map[int]lose{steps[0]: {backup: "earlier", over: twin.kinds[steps[0]] == lostOverClose}}
		name := twin.kinds[steps[0]]
		if len(steps) == 2 {
			cuts[steps[1]] = lose{over: twin.kinds[steps[1]] == lostOverClose}
			name += ", " + twin.kinds[steps[1]]
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Logf("losing the database before steps %v (the first from the backup made at step %d, the second from none)", steps, backupAt)
			lost := newDovecotGame(t, seed, key)
			lost.play(cuts, backupAt)
			got := twinRecord{logs: gametable.EventLogs(t, lost.Svc.Store()), mail: lost.mailboxes(), roles: lost.roles()}
			lost.Stop()
			compareWithTwin(t, lost, got, want)
		})
	}
}

// twinRecord is what a run of the game left: each game's event log, each
// participant's mail by Message-ID, and the roles each player's mail
// gave them.
type twinRecord struct {
	logs  map[string][]string
	mail  map[string]map[string][][]byte
	roles map[string][]string
}

// compareWithTwin checks a run that lost its database (got, of the game
// lost) against the undisturbed twin's (want).
func compareWithTwin(t *testing.T, lost *dovecotGame, got, want twinRecord) {
	t.Helper()
	if len(got.logs) != len(want.logs) {
		t.Errorf("%d games, the twin %d", len(got.logs), len(want.logs))
	}
	for id, w := range want.logs {
		g := got.logs[id]
		if len(g) != len(w) {
			t.Errorf("game %s has %d events, its twin %d", id, len(g), len(w))
		}
		for i := range min(len(w), len(g)) {
			if w[i] != g[i] {
				t.Fatalf("game %s, event %d:\ntwin: %s\nhere: %s", id, i+1, w[i], g[i])
			}
		}
	}
	for who, box := range want.mail {
		for id, copies := range box {
			have := got.mail[who][id]
			if len(have) == 0 {
				t.Errorf("%s never got %s", who, id)
				continue
			}
			for _, c := range have {
				if !bytes.Equal(c, copies[0]) {
					t.Errorf("%s got %s with other bytes than its twin:\ntwin:\n%s\nhere:\n%s", who, id, copies[0], c)
					break
				}
			}
			if len(have) > len(copies) && !lost.again["<"+strings.Trim(id, "<>")+">"] {
				t.Errorf("%s got %s %d times, its twin %d, and no restore said it sent it again", who, id, len(have), len(copies))
			}
		}
	}
	told := 0
	for who, box := range got.mail {
		for id, copies := range box {
			if _, ok := want.mail[who][id]; ok {
				continue
			}
			if who == "referee" && lost.notices["<"+strings.Trim(id, "<>")+">"] {
				told++
				if len(copies) != 1 {
					t.Errorf("the referee got the restore notice %s %d times", id, len(copies))
				}
				continue
			}
			t.Errorf("%s got %s, which its twin never did", who, id)
		}
	}
	if told != len(lost.notices) {
		t.Errorf("the referee got %d of the %d restore notices", told, len(lost.notices))
	}
	for who, roles := range got.roles {
		if len(roles) > 1 || !slices.Equal(roles, want.roles[who]) {
			t.Errorf("%s's role mail says %v, the twin's %v", who, roles, want.roles[who])
		}
	}
}
