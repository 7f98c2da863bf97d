package relay

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/store"
)

// The relay answers every message once, to its sender, threaded under it,
// and records it in the inbox; mail delivered again is not answered twice.
func TestRelayAnswersEachMessageOnce(t *testing.T) {
	var mu sync.Mutex
	answers := map[string][]mailserver.Delivery{}
	srv, err := mailserver.Start(mailserver.Config{AutoCreateUsers: true, AutoCreatePassword: "pw",
		Users: map[string]string{"relay": "pw"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnMessage: func(m mailserver.Delivery) {
			if !m.Delivered || len(m.To) != 1 || strings.HasPrefix(m.To[0], "relay") {
				return
			}
			mu.Lock()
			answers[m.To[0]] = append(answers[m.To[0]], m)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Open(ctx, Config{Address: "relay@example.org", Database: filepath.Join(t.TempDir(), "relay.db"),
		IMAPURL: "imap://" + srv.IMAPAddr(), IMAPUser: "relay", IMAPPassword: "pw",
		SMTPURL: "smtp://" + srv.SMTPAddr(), SMTPUser: "relay", SMTPPassword: "pw",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	runCtx, stop := context.WithCancel(ctx)
	go func() { done <- r.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		r.Close()
	}()

	senders := []string{"alice@example.org", "bob@example.org", "carol@example.org"}
	for i, from := range senders {
		msg := fmt.Sprintf("From: %s\r\nTo: relay@example.org\r\nSubject: hello %d\r\nMessage-ID: <m%d@test>\r\n\r\nSTATUS\r\n", from, i, i)
		c, err := smtp.Dial(srv.SMTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SendMail(from, []string{"relay@example.org"}, strings.NewReader(msg)); err != nil {
			t.Fatal(err)
		}
		c.Quit()
	}
	// The first message delivered a second time (same Message-ID, new UID).
	if err := srv.Deliver("alice@example.org", "relay@example.org",
		[]byte("From: alice@example.org\r\nTo: relay@example.org\r\nSubject: hello 0\r\nMessage-ID: <m0@test>\r\n\r\nSTATUS\r\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := 0
		for _, ms := range answers {
			n += len(ms)
		}
		mu.Unlock()
		if n >= len(senders) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d answers after 30 s, want %d", n, len(senders))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Wait until the duplicate has been read too, then check nothing more came.
	for {
		in, err := r.Store().InboundByOutcome(ctx, store.OutcomeApplied, 100)
		if err != nil {
			t.Fatal(err)
		}
		if r.watch.Stats().Handled >= 4 && len(in) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("handled %d, applied %d", r.watch.Stats().Handled, len(in))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, from := range senders {
		ms := answers[from]
		if len(ms) != 1 {
			t.Fatalf("%s got %d answers, want 1", from, len(ms))
		}
		h, err := mail.ReadMessage(strings.NewReader(string(ms[0].Data)))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := h.Header.Get("In-Reply-To"), fmt.Sprintf("<m%d@test>", i); got != want {
			t.Errorf("%s: In-Reply-To %q, want %q", from, got, want)
		}
		if got := h.Header.Get("Subject"); got != fmt.Sprintf("Re: hello %d", i) {
			t.Errorf("%s: Subject %q", from, got)
		}
	}
}

// A message that names readers in X-Bench-Fanout is copied to each of
// them, text and all, threaded under it, instead of being acknowledged.
func TestRelayCopiesToFanout(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]byte{}
	srv, err := mailserver.Start(mailserver.Config{AutoCreateUsers: true, AutoCreatePassword: "pw",
		Users: map[string]string{"relay": "pw"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnMessage: func(m mailserver.Delivery) {
			if !m.Delivered || len(m.To) != 1 || strings.HasPrefix(m.To[0], "relay") {
				return
			}
			mu.Lock()
			got[m.To[0]] = m.Data
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Open(ctx, Config{Address: "relay@example.org", Database: filepath.Join(t.TempDir(), "relay.db"),
		IMAPURL: "imap://" + srv.IMAPAddr(), IMAPUser: "relay", IMAPPassword: "pw",
		SMTPURL: "smtp://" + srv.SMTPAddr(), SMTPUser: "relay", SMTPPassword: "pw",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	runCtx, stop := context.WithCancel(ctx)
	go func() { done <- r.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		r.Close()
	}()
	readers := []string{"alice@example.org", "bob@example.org", "carol@example.org"}
	msg := "X-Bench-Fanout: alice@example.org,\r\n bob@example.org, carol@example.org\r\n" +
		"From: alice@example.org\r\nTo: relay@example.org\r\nSubject: Day 1\r\nMessage-ID: <post@test>\r\n\r\n" +
		"I have been reading the thread.\r\n"
	if err := srv.Deliver("alice@example.org", "relay@example.org", []byte(msg)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(readers) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d copies after 30 s, want %d", n, len(readers))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, to := range readers {
		h, err := mail.ReadMessage(strings.NewReader(string(got[to])))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(h.Body)
		if h.Header.Get("In-Reply-To") != "<post@test>" || h.Header.Get("X-Mafiamail-Kind") != "thread" ||
			string(body) != "I have been reading the thread.\r\n" {
			t.Errorf("%s's copy:\n%s", to, got[to])
		}
	}
	if len(got) != len(readers) {
		t.Errorf("%d mailboxes got mail, want only the %d readers", len(got), len(readers))
	}
}
