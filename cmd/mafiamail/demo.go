package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
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
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

const demoPassword = "demo"

// demoFlags are the flags of demo.
type demoFlags struct {
	setup, language, out string
	seed                 uint64
	speed                float64
	verbose              bool
	digest               optDuration
	timeout              time.Duration
}

// demoFlagSet is the flag set of demo, which sets f.
func demoFlagSet(f *demoFlags, stderr io.Writer) *flag.FlagSet {
	fs := cli.Flags("demo", stderr)
	fs.StringVar(&f.setup, "setup", "classic", "the setup: classic (11 players) or mafia150 (25)")
	fs.Uint64Var(&f.seed, "seed", 0, "the seed of the role draw and of every bot's choices (default: a new one each time, printed first); "+
		"a seed plays the same game again, on any machine: the same roles, votes, deaths and winner, and the same mail, "+
		"digests too, but for dates, tokens and Message-IDs. With --speed only the role draw is sure to repeat")
	fs.StringVar(&f.language, "language", lang.Default, "the game's `language`: "+strings.Join(lang.Tags(), ", ")+"; the bots write in it too")
	fs.Var(&f.digest, "digest", "gather the thread into digests every `duration` of game time (0: relay each post; if not given: 2h for mafia150, 0 for classic)")
	fs.StringVar(&f.out, "out", "", "write every participant's mailbox as an mbox file into this `folder`, the game's event log "+
		"(demo-events.jsonl, as games export writes it) and the game's archive (its folder archive)")
	fs.Float64Var(&f.speed, "speed", 0, "0: game time stands still while the bots act in turn, then moves on to the next deadline, "+
		"so that a seed repeats a game; above 0: game time runs that many times faster than real time, as serve's does, "+
		"and how the game goes depends on the machine's pace")
	fs.DurationVar(&f.timeout, "timeout", 3*time.Minute, "give up after this long")
	fs.BoolVar(&f.verbose, "v", false, "log what the host does")
	return fs
}

// cmdDemo plays a whole game with bot players through real mail on the
// embedded servers and prints how it goes.
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f demoFlags
	fs := demoFlagSet(&f, stderr)
	if err := parseFlags(fs, args); err != nil {
		return cli.Usage(err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("demo takes no arguments, only flags")
	}
	if f.speed < 0 {
		return cli.Usagef("--speed must be 0 or more, not %g", f.speed)
	}
	seeded := false
	fs.Visit(func(fl *flag.Flag) { seeded = seeded || fl.Name == "seed" })
	if !seeded {
		f.seed = rand.Uint64()
	}
	setup, err := demoSetup(f.setup, f.language, f.digest)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	res, err := runDemo(ctx, demoOptions{setup: setup, seed: f.seed, speed: f.speed, verbose: f.verbose, progress: stdout, logTo: stderr})
	if err != nil {
		return err
	}
	if out := f.out; out != "" {
		if err := res.writeMboxes(out); err != nil {
			return err
		}
		if err := writeEvents(filepath.Join(out, "demo-events.jsonl"), res.stored); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Mailboxes written to %s (open them in any mail client), the game's log to %s.\n",
			out, filepath.Join(out, "demo-events.jsonl"))
		site := filepath.Join(out, "archive")
		if _, err := writeArchive(res.log, site); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		fmt.Fprintf(stdout, "The game's archive is in %s (open index.html in a browser).\n", site)
	}
	return nil
}

// demoSetup is the setup a demo plays: a built-in one, in a language,
// with the thread in digests as --digest says, or as the setup is best
// played.
func demoSetup(name, language string, digest optDuration) (engine.Setup, error) {
	setup, ok := engine.BuiltinSetup(name)
	if !ok {
		return setup, cli.Usagef("unknown setup %q: classic or mafia150", name)
	}
	tag, ok := lang.Match(language)
	if !ok {
		return setup, cli.Usagef("unknown language %q: %s", language, strings.Join(lang.Tags(), ", "))
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
	return setup, nil
}

type demoOptions struct {
	setup engine.Setup
	seed  uint64
	// speed, above 0, runs game time that many times faster than real
	// time; 0 steps it (see steppedClock).
	speed    float64
	verbose  bool
	progress io.Writer
	logTo    io.Writer
	// sendLimit, when set, makes the embedded SMTP server refuse the
	// host's mail past a number of recipients in a rolling window, as a
	// provider does; recipientsPerDay is the host's [smtp]
	// recipients_per_day. Both count in real time, and need a speed.
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
	// log is the game's event log, for its archive; stored is the same
	// as the store keeps it, for --out.
	log    []engine.Event
	stored []store.Event
}

// demoStart is when a demo game starts: a Monday at 07:00 (Chicago), when
// a weekend ends, so that a demo does not wait one out (D7). It is the
// first such Monday after now whose week keeps one offset from UTC: a
// demo game is over within days of game time, and the weekend it may meet
// then ends a whole week after its start in March and November too, so
// that a seed plays the same game whenever it is played.
func demoStart(now time.Time) time.Time {
	chicago, err := time.LoadLocation(engine.SeedWeekendZone)
	if err != nil {
		return service.WeekendEndAfter(now)
	}
	start := service.WeekendEndAfter(now)
	for range 52 {
		_, before := start.In(chicago).Zone()
		_, after := start.AddDate(0, 0, 7).In(chicago).Zone()
		if before == after {
			break
		}
		start = service.WeekendEndAfter(start)
	}
	return start
}

// runDemo starts the mail servers, the host and the bots, and plays until
// the game ends.
func runDemo(ctx context.Context, o demoOptions) (*demoResult, error) {
	if o.speed == 0 && (o.sendLimit != nil || o.recipientsPerDay > 0) {
		return nil, errors.New("demo: a sending limit counts in real time, and needs a speed")
	}
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
	cfg.Limits.PerSenderPerHour = 100000 // a day's mail of a bot comes in a moment
	cfg.SMTP.RecipientsPerDay = o.recipientsPerDay
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(o.logTo, &slog.HandlerOptions{Level: level}))
	start := demoStart(time.Now())
	sc := service.Config{Log: log, Draw: seededReader(o.seed)}
	var stepped *steppedClock
	clockWords := fmt.Sprintf("game time runs %gx", o.speed)
	if o.speed > 0 {
		cfg.Speed = o.speed // the sending budget's day is the game's
		sc.Clock = host.Clock{Anchor: time.Now(), Start: start, Speed: o.speed}
	} else {
		stepped = newSteppedClock(start)
		sc.Clock = stepped.host()
		clockWords = "game time stepped by the demo"
		sc.TuneHost = func(c *host.Config) {
			// Commands count when the host handles them, at the game
			// time the demo has set: the instant their mail reached the
			// mailbox, real time, means nothing to a game whose time the
			// demo moves (docs/arrival.md is for a clock that runs by
			// itself).
			c.ArrivalOrder = false
			// The host weighs its sending plan every 96th of its day of
			// real time, from its clock's real time, which here is the
			// stand-in that stands still (steppedClock): with a day of
			// real time, the weighing would fall due, never to be done,
			// once the demo had run a quarter of an hour, and the clock
			// would spin. A stepped demo has no budget to weigh.
			c.SendingDay = 10 * 365 * 24 * time.Hour
		}
	}
	rt, err := service.Start(ctx, &cfg, sc)
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
	fmt.Fprintf(o.progress, "mafiamail demo: %s, %s, seed %d; IMAP %s, SMTP %s; %s\n",
		o.setup.Summary(), digests, o.seed, srv.IMAPAddr(), srv.SMTPAddr(), clockWords)
	table := func() (*engine.State, bool) { return rt.Host().Game("demo") }
	newBot := func(name, addr string) *bot {
		return &bot{name: name, addr: addr, imapAddr: srv.IMAPAddr(), smtpAddr: srv.SMTPAddr(), password: demoPassword,
			seed: o.seed, table: table, lang: lang.Get(o.setup.Language)}
	}
	box, validity, err := dialMailbox(srv.IMAPAddr(), "host", demoPassword)
	if err != nil {
		return nil, err
	}
	defer func() {
		box.Logout().Wait()
		box.Close()
	}()
	c := &conductor{svc: rt, clock: stepped, box: box, validity: validity, failed: runErr, progress: o.progress,
		delivered: func() int {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, ms := range res.received {
				n += len(ms)
			}
			return n
		}}
	c.ref = newBot("Referee", "referee@example.org")
	if err := c.ref.connect(); err != nil {
		return nil, err
	}
	defer c.ref.close()
	for i := 0; i < o.setup.Players; i++ {
		name := demoNames[i]
		b := newBot(name, strings.ToLower(name)+"@example.org")
		if err := b.connect(); err != nil {
			return nil, err
		}
		defer b.close()
		c.bots = append(c.bots, b)
	}

	// The referee opens the game, and the players sign up one after
	// another, in the order of their seats.
	if err := c.send(ctx, c.ref, "host@example.org", "NEW GAME demo"); err != nil {
		return nil, err
	}
	if c.refChan, err = c.ref.waitReplyTo(ctx, "-p-"); err != nil {
		return nil, fmt.Errorf("the referee got no answer to NEW GAME: %w", err)
	}
	setupArgs := o.setup.Name
	if o.setup.DigestInterval > 0 {
		setupArgs += " digest_interval=" + o.setup.DigestInterval.String()
	}
	if o.setup.Language != "" {
		setupArgs += " language=" + o.setup.Language
	}
	if err := c.send(ctx, c.ref, c.refChan, "SETUP "+setupArgs); err != nil {
		return nil, err
	}
	for _, b := range c.bots {
		if err := c.send(ctx, b, "host+demo@example.org", "JOIN "+b.name); err != nil {
			return nil, err
		}
	}
	if s, ok := table(); !ok || len(s.Players) != o.setup.Players {
		return nil, errors.New("not everyone could sign up")
	}
	if err := c.send(ctx, c.ref, c.refChan, "START"); err != nil {
		return nil, err
	}
	for _, b := range c.bots {
		if err := b.ready(ctx); err != nil {
			return nil, err
		}
	}
	final, err := c.play(ctx)
	if err != nil {
		if s, ok := table(); ok && ctx.Err() != nil {
			return nil, fmt.Errorf("the game did not end in time (%s): %w", phaseLine(s), err)
		}
		return nil, err
	}
	// Let the last mail (the end of the game) reach every mailbox.
	if err := c.drained(ctx); err != nil {
		return nil, err
	}
	res.state = final
	if res.outbox, err = rt.Store().OutMessages(ctx, ""); err != nil {
		return nil, err
	}
	if res.stored, err = rt.Store().Events(ctx, "demo", 0); err != nil {
		return nil, err
	}
	for _, se := range res.stored {
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
	printOutcome(o.progress, final, res.log, res.sent)
	return res, nil
}

var demoNames = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
	"Mallory", "Niaj", "Olivia", "Peggy", "Quentin", "Rupert", "Sybil", "Trent", "Ursula", "Victor",
	"Walter", "Xena", "Yuri", "Zoe", "Zack"}

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

// endedIn names the round the game ended in, as the thread's subjects
// do: "on Day 4" for a game that ended at a day's close, "in Night 4" for
// one that ended as a night resolved. The final state no longer says which
// (a night keeps its day's number), so the log is read up to the end.
func endedIn(log []engine.Event) string {
	for i, e := range log {
		if e.Type != engine.EvGameEnded {
			continue
		}
		before, err := engine.Replay(log[:i])
		if err != nil {
			break
		}
		if before.Phase == engine.NightPhase {
			return fmt.Sprintf("in Night %d", before.Day)
		}
		return fmt.Sprintf("on Day %d", before.Day)
	}
	return "at its end"
}

// printOutcome prints who won, when, and everyone's role.
func printOutcome(w io.Writer, s *engine.State, log []engine.Event, sent int) {
	fmt.Fprintf(w, "\n%s wins %s.\n", s.Winner, endedIn(log))
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
