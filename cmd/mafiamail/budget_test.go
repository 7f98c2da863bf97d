//go:build integration

package main

import (
	"bytes"
	"context"
	"io"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/store"
)

// demoSpeed is the speed of the game clock of these games: a sending
// limit counts in real time, so they run on a clock of their own, a game
// hour to a fifth of a real second, as demo --speed 18000 does.
const demoSpeed = 18000

// A whole demo game (11 bots, each post relayed to every reader) against
// an SMTP server that behaves like Gmail with a small daily limit: with no
// budget set, nothing is lost — every message the host queued reaches its
// reader exactly once, after the window frees — and the referee is told;
// with the budget set to the limit, the provider refuses nothing, no
// rolling day ever holds more, and still every message arrives.
func TestDemoWithinSendingLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole game")
	}
	// About 150 mails a game day go out at the classic setup's pace.
	const perDay = 100
	day := time.Duration(float64(24*time.Hour) / demoSpeed)
	for _, tc := range []struct {
		name   string
		budget int
		stage  mailserver.LimitStage
	}{
		{"no budget, refused at MAIL", 0, mailserver.LimitAtMail},
		{"no budget, refused after DATA", 0, mailserver.LimitAtData},
		{"budget set", perDay, mailserver.LimitAtRcpt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := &mailserver.SendLimit{Recipients: perDay, Window: day, Stage: tc.stage}
			// Generous: with the budget set the game waits for its sending
			// windows, and the race detector slows everything several times.
			ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
			defer cancel()
			var progress bytes.Buffer
			res, err := runDemo(ctx, demoOptions{setup: engine.Classic(), seed: 7, speed: demoSpeed,
				progress: &progress, logTo: testLogWriter(t), sendLimit: lim, recipientsPerDay: tc.budget})
			if err != nil {
				t.Fatalf("demo: %v\n%s", err, progress.String())
			}
			// Every queued message sent, none failed, each delivered to
			// each recipient exactly once.
			got := map[string]int{}
			holdNotices := 0
			for addr, ms := range res.received {
				for _, m := range ms {
					hdr, err := mail.ReadMessage(bytes.NewReader(m.Data))
					if err != nil {
						t.Fatalf("a delivered message does not parse: %v", err)
					}
					got[hdr.Header.Get("Message-Id")+" "+addr]++
					if addr == "referee@example.org" && strings.HasPrefix(hdr.Header.Get("Message-Id"), "<demo.held.") {
						holdNotices++
					}
				}
			}
			sent := 0
			for _, m := range res.outbox {
				if m.Status != store.OutSent {
					t.Errorf("message %s (%s to %v) ended %s: %s", m.MessageID, m.Kind, m.To, m.Status, m.LastError)
					continue
				}
				for _, to := range m.To {
					sent++
					if n := got[m.MessageID+" "+strings.ToLower(to)]; n != 1 {
						t.Errorf("message %s (%s) reached %s %d times, want once", m.MessageID, m.Kind, to, n)
					}
				}
			}
			refused := lim.Refused()
			t.Logf("%d copies sent in the game, %d refusals by the provider, %d notices to the referee", sent, refused, holdNotices)
			if tc.budget == 0 {
				if refused == 0 {
					t.Fatalf("the provider never refused: the game sent too little to test the limit")
				}
				if holdNotices < 1 {
					t.Errorf("the referee was not told that mail waits")
				}
				return
			}
			if refused != 0 {
				t.Errorf("with the budget set, the provider refused %d times", refused)
			}
			if holdNotices != 0 {
				t.Errorf("with the budget set, the referee was told of %d holds", holdNotices)
			}
			// The host planned for the budget: every player was told in
			// the thread that posts come gathered, and the referee why.
			for addr, ms := range res.received {
				if strings.HasPrefix(addr, "host") {
					continue // the players' mail to the host
				}
				told := false
				for _, m := range ms {
					if l, err := parseLetter(m.Data); err == nil && strings.Contains(strings.Join(strings.Fields(l.text), " "), "daily sending limit") {
						told = true
					}
				}
				if !told {
					t.Errorf("%s was never told that the thread is gathered to fit the sending limit", addr)
				}
			}
			var at []time.Time
			for _, m := range res.outbox {
				at = append(at, m.SentAt)
			}
			for i := range at {
				n := 0
				for j := range at {
					if !at[j].Before(at[i]) && at[j].Sub(at[i]) < day {
						n++
					}
				}
				if n > perDay {
					t.Fatalf("%d copies sent within a day from %v; the budget is %d", n, at[i], perDay)
				}
			}
		})
	}
}

// testLogWriter passes the host's warnings to the test log.
func testLogWriter(t *testing.T) io.Writer { return testWriter{t} }

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
