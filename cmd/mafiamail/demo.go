package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// demoSpeed makes a game hour pass in a fifth of a real second: a night's
// six-hour mark comes in about a second, and a whole game in well under a
// minute.
const demoSpeed = 18000

const demoPassword = "demo"

// cmdDemo plays a whole game with bot players through real mail on the
// embedded servers and prints how it goes.
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.Flags("demo", stderr)
	setupName := fs.String("setup", "classic", "the setup: classic (11 players) or mafia150 (25)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "makes the role draw and the bots' choices repeatable")
	out := fs.String("out", "", "write every participant's mailbox as an mbox file into this folder")
	speed := fs.Float64("speed", demoSpeed, "how much faster than real time game time runs")
	verbose := fs.Bool("v", false, "log what the host does")
	language := fs.String("language", lang.Default, "the game's `language`: "+strings.Join(lang.Tags(), ", ")+"; the bots write in it too")
	var digest optDuration
	fs.Var(&digest, "digest", "gather the thread into digests every `duration` of game time (0: relay each post; if not given: 2h for mafia150, 0 for classic)")
	timeout := fs.Duration("timeout", 3*time.Minute, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return cli.Usage(err)
	}
	setup, ok := engine.BuiltinSetup(*setupName)
	if !ok {
		return cli.Usagef("unknown setup %q: classic or mafia150", *setupName)
	}
	tag, ok := lang.Match(*language)
	if !ok {
		return cli.Usagef("unknown language %q: %s", *language, strings.Join(lang.Tags(), ", "))
	}
	if tag != lang.Default {
		setup.Language = tag
	}
	switch {
	case digest.set:
		setup.DigestInterval = digest.d
	case setup.Name == "mafia150":
		// 25 players' votes, each relayed to 26 readers, are most of a
		// big game's mail: digests are how such a game is best played.
		setup.DigestInterval = 2 * time.Hour
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	res, err := runDemo(ctx, demoOptions{setup: setup, seed: *seed, speed: *speed, verbose: *verbose, progress: stdout, logTo: stderr})
	if err != nil {
		return err
	}
	if *out != "" {
		if err := res.writeMboxes(*out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Mailboxes written to %s (open them in any mail client).\n", *out)
		site := filepath.Join(*out, "archive")
		if _, err := writeArchive(res.log, site); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		fmt.Fprintf(stdout, "The game's archive is in %s (open index.html in a browser).\n", site)
	}
	return nil
}

type demoOptions struct {
	setup    engine.Setup
	seed     uint64
	speed    float64
	verbose  bool
	progress io.Writer
	logTo    io.Writer
	// sendLimit, when set, makes the embedded SMTP server refuse the
	// host's mail past a number of recipients in a rolling window, as a
	// provider does; recipientsPerDay is the host's [smtp]
	// recipients_per_day.
	sendLimit        *mailserver.SendLimit
	recipientsPerDay int
}

// demoResult is how a demo game ended.
type demoResult struct {
	state    *engine.State
	sent     int
	received map[string][]mailserver.Delivery
	// outbox is every message the host queued, as the game ended.
	outbox []store.OutMessage
	// log is the game's event log, for its archive.
	log []engine.Event
}

// runDemo starts the mail servers, the host and the bots, and plays until
// the game ends.
func runDemo(ctx context.Context, o demoOptions) (*demoResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := &demoResult{received: map[string][]mailserver.Delivery{}}
	var mu sync.Mutex
	srv, err := mailserver.Start(mailserver.Config{
		Domain: "example.org", AutoCreateUsers: true, AutoCreatePassword: demoPassword, AuthResults: true,
		Users:     map[string]string{"host": demoPassword, "referee": demoPassword},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		SendLimit: o.sendLimit,
		OnMessage: func(m mailserver.Delivery) {
			if !m.Delivered {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, to := range m.To {
				res.received[strings.ToLower(to)] = append(res.received[strings.ToLower(to)], m)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	defer srv.Close()

	dir, err := os.MkdirTemp("", "mafiamail-demo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := config.Defaults()
	cfg.Address, cfg.Referees, cfg.Database = "host@example.org", []string{"referee@example.org"}, filepath.Join(dir, "demo.db")
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Password = "imap://"+srv.IMAPAddr(), "host", demoPassword
	cfg.SMTP.URL, cfg.SMTP.Username, cfg.SMTP.Password = "smtp://"+srv.SMTPAddr(), "host", demoPassword
	// The bots log in to send, and the server says so: the host reads who
	// sent what as it would behind a provider that signs its mail.
	cfg.Auth.AuthservID = srv.AuthServID()
	cfg.Limits.PerSenderPerHour = 100000 // bots at 18000x write a day's mail in a second
	cfg.Speed = o.speed                  // the sending budget's day is the game's
	cfg.SMTP.RecipientsPerDay = o.recipientsPerDay
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(o.logTo, &slog.HandlerOptions{Level: level}))
	// Games start on a Monday morning: a demo should not wait out a weekend (D7).
	start := service.WeekendEndAfter(time.Now())
	clock := host.Clock{Anchor: time.Now(), Start: start, Speed: o.speed}
	rt, err := service.Start(ctx, &cfg, service.Config{Clock: clock, Log: log, Draw: seededReader(o.seed)})
	if err != nil {
		return nil, err
	}
	runErr := make(chan error, 1)
	hostDone := make(chan struct{})
	hostCtx, stopHost := context.WithCancel(ctx)
	go func() {
		defer close(hostDone)
		runErr <- rt.Run(hostCtx)
	}()
	// The host stops before its store closes, so nothing is cut short.
	defer func() {
		stopHost()
		<-hostDone
		rt.Close()
	}()

	digests := "each post relayed at once"
	if o.setup.DigestInterval > 0 {
		digests = "thread in digests every " + o.setup.DigestInterval.String()
	}
	fmt.Fprintf(o.progress, "mafiamail demo: %s, %s, seed %d; IMAP %s, SMTP %s; game time runs %gx\n",
		o.setup.Summary(), digests, o.seed, srv.IMAPAddr(), srv.SMTPAddr(), o.speed)
	rng := rand.New(rand.NewPCG(o.seed, 0xde40))
	table := func() (*engine.State, bool) { return rt.Host().Game("demo") }
	newBot := func(name, addr string) *bot {
		return &bot{name: name, addr: addr, imapAddr: srv.IMAPAddr(), smtpAddr: srv.SMTPAddr(), password: demoPassword,
			rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), table: table, lang: lang.Get(o.setup.Language)}
	}
	ref := newBot("Referee", "referee@example.org")
	if err := ref.connect(); err != nil {
		return nil, err
	}
	defer ref.close()
	var bots []*bot
	for i := 0; i < o.setup.Players; i++ {
		name := demoNames[i]
		b := newBot(name, strings.ToLower(name)+"@example.org")
		if err := b.connect(); err != nil {
			return nil, err
		}
		defer b.close()
		bots = append(bots, b)
	}

	// The referee opens the game.
	if err := ref.send("host@example.org", "NEW GAME demo"); err != nil {
		return nil, err
	}
	refChannel, err := ref.waitReplyTo(ctx, "-p-")
	if err != nil {
		return nil, fmt.Errorf("the referee got no answer to NEW GAME: %w", err)
	}
	setupArgs := o.setup.Name
	if o.setup.DigestInterval > 0 {
		setupArgs += " digest_interval=" + o.setup.DigestInterval.String()
	}
	if o.setup.Language != "" {
		setupArgs += " language=" + o.setup.Language
	}
	if err := ref.send(refChannel, "SETUP "+setupArgs); err != nil {
		return nil, err
	}
	for _, b := range bots {
		if err := b.send("host+demo@example.org", "JOIN "+b.name); err != nil {
			return nil, err
		}
	}
	if err := waitFor(ctx, func() bool {
		s, ok := table()
		return ok && len(s.Players) == o.setup.Players
	}); err != nil {
		return nil, fmt.Errorf("not everyone could sign up: %w", err)
	}
	if err := ref.send(refChannel, "START"); err != nil {
		return nil, err
	}
	errs := make(chan error, len(bots)+1)
	botCtx, stopBots := context.WithCancel(ctx)
	defer stopBots()
	for _, b := range bots {
		go b.play(botCtx, errs)
	}
	go ref.referee(botCtx, refChannel, errs)

	delivered := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, ms := range res.received {
			n += len(ms)
		}
		return n
	}
	final, err := watchGame(ctx, o.progress, table, delivered, errs, runErr)
	if err != nil {
		return nil, err
	}
	stopBots()
	// Let the last mail (the end of the game) reach every mailbox: none
	// pending or being sent, both read in one snapshot (see
	// store.Waiting).
	_ = waitFor(ctx, func() bool {
		waiting, err := rt.Store().Waiting(ctx)
		return err == nil && len(waiting) == 0
	})
	res.state = final
	if res.outbox, err = rt.Store().OutMessages(ctx, ""); err != nil {
		return nil, err
	}
	stored, err := rt.Store().Events(ctx, "demo", 0)
	if err != nil {
		return nil, err
	}
	for _, se := range stored {
		e, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			return nil, fmt.Errorf("demo: event %d: %w", se.Seq, err)
		}
		res.log = append(res.log, e)
	}
	mu.Lock()
	for _, ms := range res.received {
		res.sent += len(ms)
	}
	mu.Unlock()
	if err := checkWinner(final); err != nil {
		return nil, err
	}
	printOutcome(o.progress, final, res.sent)
	return res, nil
}

var demoNames = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
	"Mallory", "Niaj", "Olivia", "Peggy", "Quentin", "Rupert", "Sybil", "Trent", "Ursula", "Victor",
	"Walter", "Xena", "Yuri", "Zoe", "Zack"}

func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// waitReplyTo waits for mail whose Reply-To contains tag and returns it.
func (b *bot) waitReplyTo(ctx context.Context, tag string) (string, error) {
	for {
		letters, err := b.read()
		if err != nil {
			return "", err
		}
		for _, l := range letters {
			if strings.Contains(l.replyTo, tag) {
				return l.replyTo, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(30 * time.Millisecond):
		}
	}
}

// referee keeps the demo moving as a referee would: each day, it announces
// that the round may close on a weekend once everyone has voted (D7).
func (b *bot) referee(ctx context.Context, channel string, errs chan<- error) {
	announced := ""
	for ctx.Err() == nil {
		if _, err := b.read(); err != nil {
			if ctx.Err() == nil {
				errs <- fmt.Errorf("referee reads mail: %w", err)
			}
			return
		}
		if s, ok := b.table(); ok && s.Phase == engine.DayPhase {
			key := fmt.Sprintf("%d/%s/%v", s.Day, s.Round, s.Extra)
			if key != announced && !s.InWeekend(s.Clock) && !s.WeekendClose {
				announced = key
				if err := b.send(channel, "WEEKEND CLOSE"); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// watchGame prints the game's progress until it ends.
func watchGame(ctx context.Context, w io.Writer, table func() (*engine.State, bool), delivered func() int,
	errs <-chan error, runErr <-chan error) (*engine.State, error) {
	last := ""
	dead := map[int]bool{}
	for {
		select {
		case <-ctx.Done():
			s, _ := table()
			if s != nil {
				return nil, fmt.Errorf("the game did not end in time (%s, day %d): %w", s.Phase, s.Day, ctx.Err())
			}
			return nil, ctx.Err()
		case err := <-errs:
			return nil, err
		case err := <-runErr:
			return nil, fmt.Errorf("the host stopped: %w", err)
		case <-time.After(25 * time.Millisecond):
		}
		s, ok := table()
		if !ok {
			continue
		}
		for _, p := range s.Players {
			if !p.Alive && !dead[p.Slot] {
				dead[p.Slot] = true
				fmt.Fprintf(w, "    † %s (%s)\n", p.Name, compose.CauseWords(p.Cause))
			}
		}
		now := phaseLine(s)
		if now != last {
			last = now
			fmt.Fprintf(w, "  %s  %-32s %6d messages so far\n", s.Clock.In(s.GameZone()).Format("Mon 2 Jan 15:04 MST"), now, delivered())
		}
		if s.Phase == engine.EndedPhase {
			return s, nil
		}
	}
}

func phaseLine(s *engine.State) string {
	alive := len(s.Living())
	switch s.Phase {
	case engine.DayPhase:
		r := "vote"
		switch {
		case s.Round == engine.Runoff:
			r = "runoff"
		case s.Extra:
			r = "extra round"
		}
		return fmt.Sprintf("Day %d, %s (%d alive)", s.Day, r, alive)
	case engine.NightPhase:
		return fmt.Sprintf("Night %d (%d alive)", s.Day, alive)
	case engine.EndedPhase:
		return "Game over"
	}
	return string(s.Phase)
}

// checkWinner checks the winner against the roles of the living (W1).
func checkWinner(s *engine.State) error {
	mafia, others := 0, 0
	for _, p := range s.Players {
		if p.Alive {
			if p.Role == engine.Mafia {
				mafia++
			} else {
				others++
			}
		}
	}
	switch {
	case s.Winner == engine.Town && mafia == 0:
	case s.Winner == engine.MafiaWin && (mafia > others || mafia == 1 && others == 1):
	default:
		return fmt.Errorf("the game ended with %s winning, but %d Mafia and %d others are alive", s.Winner, mafia, others)
	}
	return nil
}

func printOutcome(w io.Writer, s *engine.State, sent int) {
	fmt.Fprintf(w, "\n%s wins on day %d.\n", s.Winner, s.Day)
	byRole := map[engine.Role][]string{}
	for _, p := range s.Players {
		n := p.Name
		if !p.Alive {
			n += "†"
		}
		byRole[p.Role] = append(byRole[p.Role], n)
	}
	roles := make([]string, 0, len(byRole))
	for r := range byRole {
		roles = append(roles, string(r))
	}
	sort.Strings(roles)
	for _, r := range roles {
		fmt.Fprintf(w, "  %-12s %s\n", r+":", strings.Join(byRole[engine.Role(r)], ", "))
	}
	fmt.Fprintf(w, "%d messages delivered, to players and to the host.\n", sent)
}

// writeMboxes writes each mailbox's mail as DIR/<address>.mbox.
func (r *demoResult) writeMboxes(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for addr, msgs := range r.received {
		var b bytes.Buffer
		for _, m := range msgs {
			writeMbox(&b, m.From, m.At, m.Data)
		}
		name := strings.NewReplacer("@", "_at_", "/", "_").Replace(addr) + ".mbox"
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
