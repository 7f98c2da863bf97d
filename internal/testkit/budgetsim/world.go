package budgetsim

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// Provider is a mailbox provider's sending limit: how many recipients in
// any rolling day, and what it answers past that.
type Provider struct {
	Name       string
	Recipients int
	Stage      mailserver.LimitStage
	Reply      *smtp.SMTPError
}

// Gmail is free Gmail: 500 recipients in a rolling 24 hours, refused at
// MAIL with 550 5.4.5.
var Gmail = Provider{Name: "Gmail", Recipients: 500, Stage: mailserver.LimitAtMail, Reply: mailserver.GmailLimitReply}

// Outlook is Outlook.com: 300 recipients a day, refused with 5.1.90.
var Outlook = Provider{Name: "Outlook.com", Recipients: 300, Stage: mailserver.LimitAtRcpt,
	Reply: &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 90},
		Message: "Your message can't be sent because you've reached your daily limit for message recipients"}}

// Config is one simulated game.
type Config struct {
	Setup engine.Setup
	// PostsPerDay is how many thread posts the players write in all in
	// 24 hours of a day's rounds, besides their votes and locks.
	PostsPerDay int
	Provider    Provider
	Seed        uint64
	// Step is how far the clock moves between looks at the mail while the
	// game runs; default 5 minutes. Once it ended, only the mail is left,
	// and the clock moves by DrainStep, default 6 hours: the sender still
	// sends only what the budget has room for, a quarter of a day's worth
	// at a time, and each look at a large outbox is costly (it reads every
	// waiting message to keep each reader's order).
	Step, DrainStep time.Duration
	// MaxDays bounds the game time the game may take (days of 24 hours),
	// and MaxDrainDays the time the mail may take after it ended.
	MaxDays, MaxDrainDays int
	Dir                   string
	Log                   *slog.Logger
	// Progress, when set, is told once a game day how the game and its
	// mail stand.
	Progress func(string)
}

const (
	gameID   = "sim"
	hostAddr = "host@example.org"
	refAddr  = "referee@example.org"
	authServ = "mx.players.test"
	password = "sim"
)

// Delivery is one copy of the host's mail as the provider passed it on.
type Delivery struct {
	Seq       int
	At        time.Time
	To        string
	MessageID string
}

// world is the running system: the provider, the host, its store and its
// sender, the players, all on one clock.
type world struct {
	cfg   Config
	clock *Clock
	srv   *mailserver.Server
	limit *mailserver.SendLimit
	st    *store.Store
	h     *host.Host
	snd   *sender.Sender
	rng   *rand.Rand

	mu sync.Mutex
	// inbox holds what was delivered since the players last read.
	inbox      []mailserver.Delivery
	deliveries []Delivery

	uid     uint32
	players []*player
	referee *player
	// pending are the players' actions to come; seq orders those due at
	// one instant.
	pending []action
	seq     int
	// recent are the latest posts, for quoting.
	recent []quoted
	// posted is when each thread post was handed to the host, by its
	// mark (postMark), to find it in whatever mail brings it: a copy of
	// its own or a digest.
	posted map[string]time.Time
	// written counts the messages the players wrote, by kind; skipped
	// those they could not send, not knowing where to.
	written, skipped map[string]int
	// started is when the referee started the game.
	started time.Time
}

func start(ctx context.Context, cfg Config) (*world, error) {
	if cfg.Step <= 0 {
		cfg.Step = 5 * time.Minute
	}
	if cfg.DrainStep <= 0 {
		cfg.DrainStep = 6 * time.Hour
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	// A Monday morning in the game's zone: the first day does not meet a
	// weekend at once.
	t0 := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC).Add(5 * time.Hour)
	w := &world{cfg: cfg, clock: NewClock(t0), rng: rand.New(rand.NewPCG(cfg.Seed, 0x5147)), written: map[string]int{}, skipped: map[string]int{}}
	w.limit = &mailserver.SendLimit{Recipients: cfg.Provider.Recipients, Window: 24 * time.Hour, Stage: cfg.Provider.Stage,
		Reply: cfg.Provider.Reply, Clock: w.clock.Now}
	sinks := []string{"referee"}
	for i := range cfg.Setup.Players {
		sinks = append(sinks, userOf(names[i]))
	}
	srv, err := mailserver.Start(mailserver.Config{
		Domain: "example.org", AutoCreateUsers: true, Users: map[string]string{"host": password},
		Sinks: sinks, SendLimit: w.limit, Logger: slog.New(slog.DiscardHandler),
		OnMessage: w.onMessage,
	})
	if err != nil {
		return nil, err
	}
	w.srv = srv
	w.st, err = store.Open(ctx, filepath.Join(cfg.Dir, "host.db"), store.Config{Logger: cfg.Log})
	if err != nil {
		srv.Close()
		return nil, err
	}
	w.h, err = host.New(ctx, host.Config{Address: hostAddr, Referees: []string{refAddr}, AuthServID: authServ,
		Clock: host.Clock{Real: w.clock.Now}, Store: w.st, Log: cfg.Log, Rand: rand.NewChaCha8(seedBytes(cfg.Seed)),
		RecipientsPerDay: cfg.Provider.Recipients, SendingDay: 24 * time.Hour})
	if err != nil {
		w.close()
		return nil, err
	}
	h := w.h
	w.snd, err = sender.New(sender.Config{
		URL: "smtp://" + srv.SMTPAddr(), Username: "host", Password: password, Logger: cfg.Log,
		// Nothing is queued while a pass sends, so a large claim changes no
		// order; it spares passes over an outbox of tens of thousands.
		BatchSize: 500,
		// One connection: the order of the deliveries is the sender's, and
		// the same on every run.
		Connections: 1,
		Ledger:      sendstore.Ledger(w.st), Budget: sender.Budget{RecipientsPerDay: cfg.Provider.Recipients, Day: 24 * time.Hour, Minute: time.Minute},
		OnHold: func(hold sender.Hold) {
			if err := h.SendingHeld(context.Background(), host.SendingHold{Reply: hold.Reply,
				Sent: hold.SentInWindow, Learned: hold.Learned, Blocked: hold.Blocked}); err != nil {
				cfg.Log.Error("cannot record the hold", "err", err)
			}
		},
		OnResume: func(sender.Hold) {
			if err := h.SendingResumed(context.Background()); err != nil {
				cfg.Log.Error("cannot record the resume", "err", err)
			}
		},
	}, sendstore.Outbox(h.Outbox()), w.clock.Now)
	if err != nil {
		w.close()
		return nil, err
	}
	w.snd.ResumeHold(ctx)
	return w, nil
}

func (w *world) close() {
	if w.st != nil {
		w.st.Close()
	}
	w.srv.Close()
}

func seedBytes(seed uint64) [32]byte {
	var b [32]byte
	for i := range 8 {
		b[i] = byte(seed >> (8 * i))
	}
	b[8] = 's'
	return b
}

// onMessage keeps what the provider passed on from the host, at the
// simulation's time; it runs inside SendDue, before the sender hears of
// the delivery.
func (w *world) onMessage(d mailserver.Delivery) {
	if !d.Delivered || d.Auth != "host" {
		return
	}
	at := w.clock.Now()
	id := headerValue(d.Data, "Message-ID")
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inbox = append(w.inbox, d)
	for _, to := range d.To {
		w.deliveries = append(w.deliveries, Delivery{Seq: d.Seq, At: at, To: strings.ToLower(to), MessageID: id})
	}
}

// send hands a player's message to the host as the watcher would, with
// the receiving server's proof of the sender.
func (w *world) send(ctx context.Context, from *player, to, subject, body string) error {
	w.uid++
	raw := fmt.Sprintf("Authentication-Results: %s; dmarc=pass header.from=example.org\r\n"+
		"From: %s <%s>\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: <p%d.%d@example.org>\r\n"+
		"Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		authServ, from.name, from.addr, to, subject, w.cfg.Seed, w.uid,
		w.clock.Now().Format(time.RFC1123Z), strings.ReplaceAll(body, "\n", "\r\n"))
	return w.h.HandleMessage(ctx, "INBOX", 1, w.uid, []byte(raw))
}

// takeInbox returns the deliveries since the last call.
func (w *world) takeInbox() []mailserver.Delivery {
	w.mu.Lock()
	defer w.mu.Unlock()
	in := w.inbox
	w.inbox = nil
	return in
}

func (w *world) table() (*engine.State, bool) { return w.h.Game(gameID) }

var names = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
	"Mallory", "Niaj", "Olivia", "Peggy", "Quentin", "Rupert", "Sybil", "Trent", "Ursula", "Victor",
	"Walter", "Xena", "Yuri", "Zoe", "Zack"}

func userOf(name string) string { return strings.ToLower(name) }
