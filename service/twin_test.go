//go:build integration

package service_test

import (
	"bytes"
	"math/rand/v2"
	netmail "net/mail"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/internal/testkit/gametable"
	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
	"github.com/mafiamail/mafiamail/service"
)

// twinTurns is how many turns a twin game is played at most.
const twinTurns = 24

// playTwin plays the game of seed on tb. At turn cut (-1: never) the
// host loses its database: it is stopped, its database deleted, restored
// from the backup made at turn backupAt (-1: from none), and started
// again, and the game goes on. It returns what the restore sent again, and
// whether the database was lost before the game ended.
func playTwin(t *testing.T, tb *table, cut, backupAt int) (again, notices []string, lost bool) {
	tb.Start()
	tb.SignUp(nil)
	backup := ""
	tb.Play(twinTurns, 4, func(i int) {
		if i == backupAt {
			backup = filepath.Join(t.TempDir(), "backup.db")
			if err := tb.Svc.Store().Backup(t.Context(), backup); err != nil {
				t.Fatal(err)
			}
		}
		if i == cut {
			phase := tb.Game().Phase
			tb.Stop()
			gametable.RemoveDatabase(t, tb.Cfg.Database)
			rep, err := service.Restore(t.Context(), &tb.Cfg, service.RestoreConfig{Backup: backup, Now: tb.Clock, Log: tb.Log})
			if err != nil {
				t.Fatalf("restore at turn %d (%s) from %q: %v", i, phase, backup, err)
			}
			t.Logf("lost the database at turn %d (%s); restored from %q: %d known, %d replayed, %d found sent, %d sent again",
				i, phase, backup, rep.Known, rep.Replayed, rep.FoundSent, len(rep.SentAgain))
			for _, m := range rep.SentAgain {
				again = append(again, m.MessageID)
			}
			notices = rep.Notices
			tb.Start()
			lost = true
		}
	})
	return again, notices, lost
}

// mailboxes is, for each recipient, the copies delivered to them by
// Message-ID.
func mailboxes(t *testing.T, tb *table) map[string]map[string][][]byte {
	out := map[string]map[string][][]byte{}
	for _, d := range tb.srv.Messages() {
		if !d.Delivered {
			continue
		}
		m, err := netmail.ReadMessage(bytes.NewReader(d.Data))
		if err != nil {
			t.Fatal(err)
		}
		id := m.Header.Get("Message-Id")
		for _, to := range d.To {
			to = strings.ToLower(to)
			if out[to] == nil {
				out[to] = map[string][][]byte{}
			}
			out[to][id] = append(out[to][id], d.Data)
		}
	}
	return out
}

// TestRestoreAtRandomInstants plays a game twice with the same seed and
// host key: once undisturbed, and once losing the database at a random
// turn (during sign-up's START, by day, by night, across a deadline, after
// the end) and restored from a backup made at an earlier random turn, or
// from none, then played on. Every event log must be the twin's, and each
// player's mailbox must hold the twin's mail, the same bytes under the
// same Message-ID, with no copy more but those the restore said it sent
// again.
func TestRestoreAtRandomInstants(t *testing.T) {
	seed := testseed.Seed(t)
	var kb [hostkey.Size]byte
	pick := rand.New(rand.NewPCG(seed, 1))
	for i := range kb {
		kb[i] = byte(pick.UintN(256))
	}
	for round := range 2 {
		cut := pick.IntN(twinTurns + 2) // twinTurns+1: after the end
		backupAt := -1
		if round == 1 && cut > 0 {
			backupAt = pick.IntN(cut)
		}
		key, _ := hostkey.New(kb[:])
		twin := newKeyedTable(t, seed, key)
		playTwin(t, twin, -1, -1)
		want, wantMail := gametable.EventLogs(t, twin.Svc.Store()), mailboxes(t, twin)
		twin.Stop()

		key, _ = hostkey.New(kb[:])
		lost := newKeyedTable(t, seed, key)
		again, notices, cutDone := playTwin(t, lost, cut, backupAt)
		if !cutDone {
			// The game ended before the cut: lose the database after it.
			lost.Stop()
			gametable.RemoveDatabase(t, lost.Cfg.Database)
			rep, err := service.Restore(t.Context(), &lost.Cfg, service.RestoreConfig{Now: lost.Clock, Log: lost.Log})
			if err != nil {
				t.Fatalf("restore after the end: %v", err)
			}
			t.Logf("lost the database after the end (%s); restored from nothing: %d replayed, %d found sent, %d sent again",
				lost.Game().Phase, rep.Replayed, rep.FoundSent, len(rep.SentAgain))
			for _, m := range rep.SentAgain {
				again = append(again, m.MessageID)
			}
			notices = rep.Notices
			lost.Start()
			lost.Drain()
		}
		got, gotMail := gametable.EventLogs(t, lost.Svc.Store()), mailboxes(t, lost)
		lost.Stop()

		for id, w := range want {
			g := got[id]
			if len(g) != len(w) {
				t.Errorf("round %d (cut at %d, backup at %d): game %s has %d events, its twin %d; the last here: %s", round, cut, backupAt, id, len(g), len(w), g[len(g)-1])
			}
			for i := range min(len(w), len(g)) {
				if w[i] != g[i] {
					t.Fatalf("round %d (cut at %d, backup at %d): game %s, event %d:\ntwin: %s\nhere: %s", round, cut, backupAt, id, i+1, w[i], g[i])
				}
			}
		}
		resent := map[string]bool{}
		for _, id := range again {
			resent[id] = true
		}
		for to, box := range wantMail {
			for id, copies := range box {
				have := gotMail[to][id]
				if len(have) == 0 {
					t.Errorf("round %d: %s never got %s", round, to, id)
					continue
				}
				for _, c := range have {
					if !bytes.Equal(c, copies[0]) {
						t.Errorf("round %d: %s got %s with other bytes than its twin", round, to, id)
					}
				}
				if len(have) > len(copies) && !resent[id] {
					t.Errorf("round %d: %s got %s %d times, its twin %d, and the restore did not say it sent it again", round, to, id, len(have), len(copies))
				}
			}
		}
		// The referee gets the restore's account of the game, once; no
		// one else gets it.
		told := map[string]bool{}
		for _, id := range notices {
			told[id] = true
			if n := len(gotMail["referee@players.test"][id]); n != 1 {
				t.Errorf("round %d: the referee got the restore's notice %s %d times", round, id, n)
			}
		}
		for to, box := range gotMail {
			for id := range box {
				if _, ok := wantMail[to][id]; !ok && !(told[id] && to == "referee@players.test") {
					t.Errorf("round %d: %s got %s, which its twin never did", round, to, id)
				}
			}
		}
	}
}
