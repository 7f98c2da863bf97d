package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/store"
)

// check names the provider's documented sending limit for the hosts it
// knows, suggests it while unset, and says when nothing is known.
func TestCheckNamesTheSendingLimit(t *testing.T) {
	for _, tc := range []struct {
		url  string
		set  int
		want []string
	}{
		{"smtps://smtp.gmail.com", 0, []string{"Gmail documents 500 recipients a day", "set it to 500"}},
		{"smtp://smtp-mail.outlook.com", 0, []string{"Outlook.com documents 300", "set it to 300"}},
		{"smtp://smtp.office365.com", 0, []string{"Microsoft 365 documents 10000", "messages_per_minute to 30"}},
		{"smtps://smtp.mail.yahoo.com", 500, []string{"500 recipients a day; Yahoo Mail documents 500"}},
		{"smtps://smtp.fastmail.com", 0, []string{"Fastmail documents no single figure"}},
		{"smtps://smtp.gmail.com", 900, []string{"more than the 500 Gmail documents"}},
		{"smtp://mail.example.net", 0, []string{"not set; the host learns it"}},
	} {
		cfg := config.Defaults()
		cfg.SMTP.URL, cfg.SMTP.RecipientsPerDay = tc.url, tc.set
		var out bytes.Buffer
		checkBudget(&cfg, &out)
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s with %d: %q lacks %q", tc.url, tc.set, out.String(), w)
			}
		}
	}
}

// games show tells what was sent in the window, the limit learned, the
// hold under way, what waits by kind and when it will have gone out.
func TestShowSending(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "host.db")
	st, err := store.Open(ctx, db, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	err = st.Update(ctx, func(tx *store.Tx) error {
		for i, kind := range []string{"thread", "thread", "role", "thread"} {
			id := fmt.Sprintf("<m%d@example.org>", i)
			raw := "Message-ID: " + id + "\r\nSubject: x\r\n\r\nx\r\n"
			n, err := tx.Enqueue(ctx, store.OutMessage{MessageID: id, Kind: kind, From: "host@example.org",
				To: []string{"p@example.org"}, Raw: []byte(raw)}, now)
			if err != nil {
				return err
			}
			if i == 0 {
				if err := tx.MarkSent(ctx, n, now); err != nil {
					return err
				}
			}
		}
		if err := tx.LearnLimit(ctx, 1, now); err != nil {
			return err
		}
		_, err := tx.BeginHold(ctx, now, "550 5.4.5 Daily user sending limit exceeded")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := showSending(ctx, st, db, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 recipients in the last 24 hours of the 1 a day learned", "held since",
		"550 5.4.5", "waiting: 3 (role 1, thread 2)", "at 1 a day, what waits will have gone out by"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("games show lacks %q:\n%s", want, out.String())
		}
	}
}

// games show names the host's forecast for the game's round against the
// sending budget, and the plan it chose.
func TestShowPlan(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "games.db")
	st, h, send := testHost(t, db, host.Config{Address: "host@example.org", Referees: []string{"ref@example.org"}, RecipientsPerDay: 20})
	send("ref@example.org", "host@example.org", "NEW GAME club")
	ps, err := st.Participants(ctx, "club")
	if err != nil || len(ps) != 1 {
		t.Fatalf("participants: %v %v", ps, err)
	}
	ref := "host+club-p-" + ps[0].Token + "@example.org"
	send("ref@example.org", ref, "SETUP players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false")
	for _, n := range []string{"Alice", "Bob", "Carol", "Dave", "Erin"} {
		send(strings.ToLower(n)+"@example.org", "host+club@example.org", "JOIN "+n)
	}
	send("ref@example.org", ref, "START")
	if err := h.TickDue(ctx); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"games", "show", "--db", db, "club"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("games show: exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"Forecast for the rest of Day 1", "recipients as the players chose",
		"of the 20 a day the mailbox may send", "plan: the thread in digests every 12h0m0s for everyone"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("games show lacks %q:\n%s", want, out.String())
		}
	}
}
