//go:build integration

package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// TestKillInGroupCommit kills `mafiamail serve` with SIGKILL while it
// works off a backlog of votes, at moments when a group of messages is in
// its transaction: messages of the group have been handled (logged) and
// none of it is committed yet. After each restart the backlog goes on;
// at the end every vote is applied exactly once, in the order the votes
// reached the mailbox, and every message has its answer.
func TestKillInGroupCommit(t *testing.T) {
	// Real time: no deadline comes while the backlog is worked off.
	h := startKillHarness(t, 1)
	d := &killDriver{h: h, view: h.view, smtpAddr: h.srv.SMTPAddr(), authserv: killAuthserv}
	g := &killGame{id: "grp", addrs: map[string]string{}}
	for _, name := range killNames {
		g.names = append(g.names, name)
		g.addrs[name] = fmt.Sprintf("%s.%s@example.org", strings.ToLower(name), g.id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := d.open(ctx, g); err != nil {
		t.Fatalf("set up the game: %v\n%s", err, h.logTail())
	}
	s, _, err := h.view.state(g.id)
	if err != nil || s.Phase != engine.DayPhase {
		t.Fatalf("the game is not in its day: %v", err)
	}
	h.terminate()

	// The backlog: every player votes again and again, each vote for
	// another player than the last, and never more than two for anyone,
	// so that no vote ends the day.
	const backlog = 800
	type vote struct{ id, voter, target string }
	var votes []vote
	n := len(s.Players)
	for i := range backlog {
		p := s.Players[i%n]
		round := i / n
		target := s.Players[(i%n+1+round%2)%n]
		id := fmt.Sprintf("gk%d@example.org", i)
		raw := fmt.Sprintf("Authentication-Results: %s\r\nFrom: <%s>\r\nTo: <%s>\r\nSubject: Re: the game\r\nMessage-ID: <%s>\r\n"+
			"Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nVOTE %s\r\n\r\nMy vote, number %d.\r\n",
			attackPassFrom(killAuthserv, p.Address), p.Address, killAddress(g.id, "t", p.Token), id,
			time.Now().Format(time.RFC1123Z), target.Name, round)
		if err := h.srv.Deliver(p.Address, killAddress(g.id, "t", p.Token), []byte(raw)); err != nil {
			t.Fatal(err)
		}
		votes = append(votes, vote{id: id, voter: p.Name, target: target.Name})
	}

	db, err := sql.Open("sqlite", "file:"+h.db+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	committed := func() int {
		var c int
		if err := db.QueryRow(`SELECT count(*) FROM inbox`).Scan(&c); err != nil {
			t.Fatalf("count the inbox: %v", err)
		}
		return c
	}
	// logged counts the messages the host has taken up since offset in
	// its log: it logs each new message in the transaction that applies
	// it.
	logged := func(offset int64) int {
		b, err := os.ReadFile(h.logPath)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b[min(offset, int64(len(b))):], []byte(`msg="inbound message"`))
	}
	inTransaction, kills := 0, 0
	for inTransaction < 4 && kills < 40 {
		fi, err := os.Stat(h.logPath)
		if err != nil {
			t.Fatal(err)
		}
		offset, base := fi.Size(), committed()
		if base >= backlog {
			break
		}
		h.start()
		// Let the host commit a few groups first, at random, then wait
		// until it has taken up messages it has not yet committed, and
		// a little more.
		end := time.Now().Add(time.Minute)
		skip := min(h.rng.IntN(150), backlog-base-1)
		for committed()-base < skip || logged(offset) <= committed()-base {
			if time.Now().After(end) {
				t.Fatalf("the host took up no message in a minute\n%s", h.logTail())
			}
			h.alive()
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(h.rng.IntN(40)) * time.Millisecond)
		h.kill()
		kills++
		// Messages handled in a transaction that died with the host are
		// in the log and not in the database.
		if l, c := logged(offset), committed()-base; l > c {
			inTransaction++
			t.Logf("kill %d: %d messages handled, %d committed: a group died in its transaction", kills, l, c)
		} else {
			t.Logf("kill %d: %d messages handled, %d committed: between transactions", kills, l, c)
		}
	}
	if inTransaction < 2 {
		t.Fatalf("only %d of %d kills came while a group was in its transaction", inTransaction, kills)
	}
	unsent := func() int {
		var c int
		if err := db.QueryRow(`SELECT count(*) FROM outbox WHERE status IN ('pending', 'sending')`).Scan(&c); err != nil {
			t.Fatalf("count the outbox: %v", err)
		}
		return c
	}
	h.start()
	end := time.Now().Add(3 * time.Minute)
	for committed() < backlog+len(d.sent) || unsent() > 0 {
		if time.Now().After(end) {
			t.Fatalf("the backlog was not worked off: %d of %d messages, %d outgoing unsent\n%s",
				committed(), backlog+len(d.sent), unsent(), h.logTail())
		}
		h.alive()
		time.Sleep(50 * time.Millisecond)
	}
	h.terminate()
	h.view.close()

	st, err := store.OpenReadOnly(context.Background(), h.db, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, twice := readInbox(t, st, t.Errorf, nil)
	if twice > 0 {
		t.Errorf("%d messages are in the inbox twice", twice)
	}
	evs, err := st.Events(context.Background(), g.id, 0)
	if err != nil {
		t.Fatal(err)
	}
	byCause := map[string][]store.Event{}
	for _, e := range evs {
		byCause[e.Cause] = append(byCause[e.Cause], e)
	}
	_, answers := readOutbox(t, st, t.Errorf)
	final := map[string]string{}
	for _, v := range votes {
		in, ok := rows[bareID("<"+v.id+">")]
		if !ok {
			t.Errorf("vote %s was lost", v.id)
			continue
		}
		cause := fmt.Sprintf("inbox:%d", in.ID)
		if in.Outcome != store.OutcomeApplied {
			t.Errorf("vote %s: outcome %s (%s)", v.id, in.Outcome, in.Reason)
		}
		voted := 0
		for _, e := range byCause[cause] {
			if e.Type == string(engine.EvVoted) {
				voted++
			}
		}
		if voted != 1 {
			t.Errorf("vote %s (%s for %s) was applied %d times", v.id, v.voter, v.target, voted)
		}
		if len(answers[cause]) == 0 {
			t.Errorf("vote %s has no mail", v.id)
		}
		final[v.voter] = v.target
	}
	s = &engine.State{}
	for _, se := range evs {
		e, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Fold(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range s.Players {
		target := s.Player(p.Vote)
		if target == nil || target.Name != final[p.Name] {
			t.Errorf("%s's vote stands on slot %d, want %s: the votes were not applied in arrival order", p.Name, p.Vote, final[p.Name])
		}
	}
	checkServeLog(t, h.logPath, t.Errorf)
	t.Logf("%d votes, %d kills, %d of them in a group's transaction; %d events", backlog, kills, inTransaction, len(evs))
}
