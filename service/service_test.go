package service_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	netmail "net/mail"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service"
)

// TestStartedHostAnswersMail starts a host on the embedded servers as serve
// does and checks the whole wiring: the watcher hands mail to the rules,
// the commit wakes the sender, and the answer reaches the mailbox; a
// message over the size limit, which the watcher fetches as its header
// alone, is answered too rather than dropped. Run returns nil once its
// context ends, and Close closes the store.
func TestStartedHostAnswersMail(t *testing.T) {
	var mu sync.Mutex
	var toReferee []mailserver.Delivery
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org",
		Users: map[string]string{"host": "pw", "referee": "pw"},
		OnMessage: func(m mailserver.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			for _, to := range m.To {
				if strings.EqualFold(to, "referee@example.org") && m.Delivered {
					toReferee = append(toReferee, m)
				}
			}
		}})
	cfg := config.Defaults()
	cfg.Address, cfg.Referees = "host@example.org", []string{"referee@example.org"}
	cfg.Database = filepath.Join(t.TempDir(), "games.db")
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Password = "imap://"+srv.IMAPAddr(), "host", "pw"
	cfg.SMTP.URL, cfg.SMTP.Username, cfg.SMTP.Password = "smtp://"+srv.SMTPAddr(), "host", "pw"
	cfg.Limits.MaxMessageBytes = 4096
	svc, err := service.Start(t.Context(), &cfg, service.Config{Clock: host.Clock{Speed: 1, Anchor: time.Now()},
		Log: testlog.New(t, slog.LevelInfo)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()

	mail := func(to, id, body string) []byte {
		return []byte(fmt.Sprintf("From: Referee <referee@example.org>\r\nTo: %s\r\nSubject: x\r\n"+
			"Message-ID: <%s@example.org>\r\nDate: %s\r\n\r\n%s\r\n", to, id, time.Now().Format(time.RFC1123Z), body))
	}
	if err := srv.Deliver("referee@example.org", "host@example.org", mail("host@example.org", "new", "NEW GAME club")); err != nil {
		t.Fatal(err)
	}
	answers := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(toReferee)
	}
	// The host has no authserv-id: it asks the referee to confirm by
	// replying, and creates the game when the reply comes.
	replyTo := func(i int) string {
		t.Helper()
		mu.Lock()
		m, err := netmail.ReadMessage(bytes.NewReader(toReferee[i].Data))
		mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		a, err := netmail.ParseAddress(m.Header.Get("Reply-To"))
		if err != nil {
			t.Fatalf("answer %d's Reply-To: %v", i+1, err)
		}
		return a.Address
	}
	mailtest.WaitFor(t, "the answer to NEW GAME", 30*time.Second, 20*time.Millisecond, func() bool { return answers() >= 1 })
	confirm := replyTo(0)
	if !strings.HasPrefix(confirm, "host+club-c-") {
		t.Fatalf("the answer to NEW GAME asks for no confirmation: Reply-To %s", confirm)
	}
	if err := srv.Deliver("referee@example.org", confirm, mail(confirm, "yes", "")); err != nil {
		t.Fatal(err)
	}
	mailtest.WaitFor(t, "the answer to the confirmation", 30*time.Second, 20*time.Millisecond, func() bool { return answers() >= 2 })
	if _, ok := svc.Host().Game("club"); !ok {
		t.Fatal("the host answered the confirmation but holds no game club")
	}
	// The referee's channel is the answer's Reply-To.
	channel := replyTo(1)
	mu.Lock()
	toReferee = toReferee[1:]
	mu.Unlock()
	big := mail(channel, "big", "SETUP mafia150\r\n"+strings.Repeat("padding padding padding\r\n", 400))
	if err := srv.Deliver("referee@example.org", channel, big); err != nil {
		t.Fatal(err)
	}
	mailtest.WaitFor(t, "the answer to the oversized message", 30*time.Second, 20*time.Millisecond, func() bool { return answers() >= 2 })
	// Refused for its declared size, which only the header-only route
	// (Host.HandleOversized) knows.
	mu.Lock()
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(toReferee[1].Data), "=\r\n", "")), " ")
	mu.Unlock()
	if !strings.Contains(text, "more than the limit") {
		t.Errorf("the answer to the oversized message does not give the size limit:\n%s", toReferee[1].Data)
	}
	if g, _ := svc.Host().Game("club"); g.Setup.Name == "mafia150" {
		t.Error("the oversized message's command was applied")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after its context ended: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if err := svc.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestStartAppliesTheTuning checks that Start hands the settings it made
// from the configuration to TuneHost and TuneWatcher before it builds the
// host and the watcher, and builds them with what the hooks changed.
func TestStartAppliesTheTuning(t *testing.T) {
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org", Users: map[string]string{"host": "pw"}})
	cfg := service.Embedded(srv, "pw", filepath.Join(t.TempDir(), "games.db"))
	gameNow := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	var tunedHost, tunedWatcher string
	caughtUp := make(chan struct{}, 1)
	svc, err := service.Start(t.Context(), &cfg, service.Config{Log: testlog.New(t, slog.LevelInfo),
		TuneHost: func(c *host.Config) {
			if !c.ArrivalOrder || c.Address != cfg.Address {
				t.Errorf("TuneHost got ArrivalOrder %v and address %q, not what Start makes from the configuration", c.ArrivalOrder, c.Address)
			}
			tunedHost = c.Address
			c.Clock = host.Clock{Real: func() time.Time { return gameNow }}
		},
		TuneWatcher: func(c *watcher.Config) {
			if c.Triage == nil || c.OnWatermark == nil {
				t.Error("TuneWatcher got a watcher without the host's arrival order")
			}
			tunedWatcher = c.URL
			c.OnCaughtUp = func(watcher.Stats) {
				select {
				case caughtUp <- struct{}{}:
				default:
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if tunedHost != cfg.Address || tunedWatcher != cfg.IMAP.URL {
		t.Fatalf("the hooks saw host %q and watcher %q, want %q and %q", tunedHost, tunedWatcher, cfg.Address, cfg.IMAP.URL)
	}
	if now := svc.Host().Now(); !now.Equal(gameNow) {
		t.Errorf("the host's game time is %v, not the tuned clock's %v", now, gameNow)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	select {
	case <-caughtUp:
	case <-time.After(30 * time.Second):
		t.Error("the running watcher never called the OnCaughtUp the tuning set")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
