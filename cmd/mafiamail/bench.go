package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/relay"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/store"
)

// cmdBench measures the host against a bare relay over the embedded
// servers: latency of a command to its confirmation, commands per second,
// memory, and the time to work off a backlog of unseen mail.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flags("bench", stderr)
	games := fs.String("games", "1,10,100", "the scales: how many concurrent games, comma-separated")
	players := fs.Int("players", 25, "players per game (25: the mafia150 setup, 11: classic)")
	commands := fs.Int("commands", 500, "commands measured per scale")
	backlog := fs.Int("backlog", 10000, "unseen messages waiting when the host starts (0: skip)")
	inFlight := fs.Int("concurrency", 32, "commands in flight at once (each player has at most one)")
	verbose := fs.Bool("v", false, "log what the host does")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the host's measured commands at the last scale to this file")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	o := benchOptions{players: *players, commands: *commands, backlog: *backlog, inFlight: *inFlight,
		progress: stdout, logTo: io.Discard, cpuProfile: *cpuProfile}
	if *verbose {
		o.logTo = stderr
	}
	for _, f := range strings.Split(*games, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return usageError{fmt.Errorf("--games: %q is not a number of games", f)}
		}
		o.games = append(o.games, n)
	}
	if o.players < 3 || o.commands < 1 || o.inFlight < 1 || o.backlog < 0 {
		return usageError{errors.New("--players must be at least 3, --commands and --concurrency at least 1")}
	}
	res, err := runBench(ctx, o)
	if err != nil {
		return err
	}
	res.print(stdout, o)
	return nil
}

type benchOptions struct {
	games    []int
	players  int
	commands int
	backlog  int
	inFlight int
	progress io.Writer
	logTo    io.Writer
	// cpuProfile, if set, receives a CPU profile of the host's measured
	// commands at the last scale.
	cpuProfile string
}

// figures are what one system (host or relay) did at one scale.
type figures struct {
	commands  int
	errors    int // commands answered with an error instead of a confirmation
	latencies []time.Duration
	wall      time.Duration // of the measured commands
	cpu       time.Duration // process CPU time over the measured commands
	peakRSS   uint64        // VmHWM, bytes
	rssReset  bool          // whether VmHWM could be reset before the phase
	peakHeap  uint64        // sampled HeapInuse, bytes
	ownHeap   uint64        // live heap the system itself holds after the commands
	setup     time.Duration // creating the games by mail (host only)
}

func (f figures) quantile(q float64) time.Duration {
	if len(f.latencies) == 0 {
		return 0
	}
	s := slices.Clone(f.latencies)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func (f figures) perSecond() float64 {
	if f.wall <= 0 {
		return 0
	}
	return float64(len(f.latencies)) / f.wall.Seconds()
}

func (f figures) cpuPerCommand() time.Duration {
	if len(f.latencies) == 0 {
		return 0
	}
	return f.cpu / time.Duration(len(f.latencies))
}

type scaleResult struct {
	games       int
	host, relay figures
}

type benchResult struct {
	scales []scaleResult
	// backlog: the time from start to the last answer of the backlog.
	backlogGames              int
	backlogHost, backlogRelay time.Duration
}

// runBench runs every scale, the relay first and then the host, each on
// fresh servers and a fresh store, and the backlog at the first scale.
func runBench(ctx context.Context, o benchOptions) (*benchResult, error) {
	res := &benchResult{}
	for i, g := range o.games {
		backlog := 0
		if i == 0 {
			backlog = o.backlog
		}
		sr := scaleResult{games: g}
		fmt.Fprintf(o.progress, "scale %d game(s) x %d players: relay...", g, o.players)
		rf, rb, err := benchPhase(ctx, o, g, backlog, false)
		if err != nil {
			return nil, fmt.Errorf("relay at %d games: %w", g, err)
		}
		fmt.Fprintf(o.progress, " host...")
		hf, hb, err := benchPhase(ctx, o, g, backlog, true)
		if err != nil {
			return nil, fmt.Errorf("host at %d games: %w", g, err)
		}
		fmt.Fprintf(o.progress, " done\n")
		sr.relay, sr.host = rf, hf
		if backlog > 0 {
			res.backlogGames, res.backlogRelay, res.backlogHost = g, rb, hb
		}
		res.scales = append(res.scales, sr)
	}
	return res, nil
}

// benchPlayer is one player of the load: its mailbox and the address its
// commands go to (the private channel for the host, the relay's address).
type benchPlayer struct {
	game int
	name string
	addr string
	to   atomic.Pointer[string]
	// arrived gets the arrival time and kind of every answer delivered to
	// the player.
	arrived chan arrival
}

type arrival struct {
	at   time.Time
	kind string
}

const benchPassword = "bench"

// benchEnv is one phase's servers and players.
type benchEnv struct {
	srv     *mailserver.Server
	players []*benchPlayer
	byAddr  map[string]*benchPlayer
	// refChannels maps a game to the referee's private channel in it.
	mu          sync.Mutex
	refChannels map[string]string
	answers     atomic.Int64 // confirmations delivered to players
}

func benchPlayerName(i int) string {
	if i < len(demoNames) {
		return demoNames[i]
	}
	// Letters only: a name with a number in it reads as a vote count.
	var b []byte
	for n := i; ; n = n/26 - 1 {
		b = append([]byte{byte('a' + n%26)}, b...)
		if n < 26 {
			break
		}
	}
	return "Pl" + string(b)
}

func newBenchEnv(games, players int, logTo io.Writer) (*benchEnv, error) {
	e := &benchEnv{byAddr: map[string]*benchPlayer{}, refChannels: map[string]string{}}
	for g := range games {
		for i := range players {
			p := &benchPlayer{game: g, name: benchPlayerName(i), addr: fmt.Sprintf("g%dp%d@example.org", g, i),
				arrived: make(chan arrival, 16)}
			e.players = append(e.players, p)
			e.byAddr[p.addr] = p
		}
	}
	srv, err := mailserver.Start(mailserver.Options{
		Domain: "example.org", AutoCreateUsers: true, AutoCreatePassword: benchPassword,
		Users:  map[string]string{"host": benchPassword, "referee": benchPassword},
		Logger: slog.New(slog.NewTextHandler(logTo, nil)), OnMessage: e.onMessage,
	})
	if err != nil {
		return nil, fmt.Errorf("start mail servers: %w", err)
	}
	e.srv = srv
	return e, nil
}

// onMessage sees every SMTP transaction once it is in the mailboxes: that
// is when an answer counts as arrived.
func (e *benchEnv) onMessage(m mailserver.Message) {
	if !m.Delivered {
		return
	}
	now := time.Now()
	for _, to := range m.To {
		to = strings.ToLower(to)
		if p := e.byAddr[to]; p != nil {
			kind := headerValue(m.Data, "X-Mafiamail-Kind")
			if p.to.Load() == nil {
				if rt := replyTo(m.Data); strings.Contains(rt, "-p-") {
					p.to.Store(&rt)
				}
			}
			if kind == "confirm" || kind == "error" {
				if kind == "confirm" {
					e.answers.Add(1)
				}
				select {
				case p.arrived <- arrival{at: now, kind: kind}:
				default:
				}
			}
			continue
		}
		if to == "referee@example.org" {
			if rt := replyTo(m.Data); strings.Contains(rt, "-p-") {
				game, _, _ := strings.Cut(strings.TrimPrefix(rt, "host+"), "-p-")
				e.mu.Lock()
				e.refChannels[game] = rt
				e.mu.Unlock()
			}
		}
	}
}

// headerValue finds a header field in the header of raw without parsing
// the whole message.
func headerValue(raw []byte, key string) string {
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	for _, line := range bytes.Split(head, []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(k), key) {
			return strings.TrimSpace(string(v))
		}
	}
	return ""
}

func replyTo(raw []byte) string {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return ""
	}
	as, err := m.Header.AddressList("Reply-To")
	if err != nil || len(as) == 0 {
		return ""
	}
	return strings.ToLower(as[0].Address)
}

// system is the host or the relay, started and stopped the same way.
type system struct {
	stop func() error
	// drained tells whether nothing waits in the outbox.
	drained func(ctx context.Context) bool
}

func startSystem(ctx context.Context, o benchOptions, srv *mailserver.Server, db string, isHost bool) (*system, error) {
	log := slog.New(slog.NewTextHandler(o.logTo, &slog.HandlerOptions{Level: slog.LevelInfo}))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	var st *store.Store
	var closeStore func() error
	if isHost {
		cfg := config.Defaults()
		cfg.Address, cfg.Referees, cfg.Database = "host@example.org", []string{"referee@example.org"}, db
		cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Password = "imap://"+srv.IMAPAddr(), "host", benchPassword
		cfg.SMTP.URL, cfg.SMTP.Username, cfg.SMTP.Password = "smtp://"+srv.SMTPAddr(), "host", benchPassword
		// Load, not abuse: every player writes far more than a person would.
		cfg.Limits.PerSenderPerHour = 1 << 30
		cfg.Limits.MaxCommandLines = o.players + 10
		// Game time at real speed, from a Monday morning: no deadline
		// comes during the run.
		now := time.Now()
		clock := host.Clock{Anchor: now, Start: WeekendEndAfter(now), Speed: 1}
		rt, err := startHostWith(ctx, &cfg, clock, log, nil)
		if err != nil {
			cancel()
			return nil, err
		}
		st, closeStore = rt.st, rt.Close
		go func() { done <- rt.Run(runCtx) }()
	} else {
		r, err := relay.Open(ctx, relay.Config{Address: "host@example.org", Database: db,
			IMAPURL: "imap://" + srv.IMAPAddr(), IMAPUser: "host", IMAPPassword: benchPassword,
			SMTPURL: "smtp://" + srv.SMTPAddr(), SMTPUser: "host", SMTPPassword: benchPassword, Logger: log})
		if err != nil {
			cancel()
			return nil, err
		}
		st, closeStore = r.Store(), r.Close
		go func() { done <- r.Run(runCtx) }()
	}
	return &system{
		stop: func() error {
			cancel()
			err := <-done
			if cerr := closeStore(); err == nil {
				err = cerr
			}
			return err
		},
		drained: func(ctx context.Context) bool {
			for _, s := range []store.OutStatus{store.OutPending, store.OutSending} {
				if ms, err := st.OutMessages(ctx, s); err != nil || len(ms) > 0 {
					return false
				}
			}
			return true
		},
	}, nil
}

// benchPhase runs one system at one scale: set up, measure the commands,
// and, with backlog > 0, restart it in front of that many unseen messages.
func benchPhase(ctx context.Context, o benchOptions, games, backlog int, isHost bool) (f figures, backlogTime time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	runtime.GC()
	debug.FreeOSMemory()
	f.rssReset = resetPeakRSS()
	mem := startMemSampler()
	defer mem.stop()

	e, err := newBenchEnv(games, o.players, o.logTo)
	if err != nil {
		return f, 0, err
	}
	defer e.srv.Close()
	dir, err := os.MkdirTemp("", "mafiamail-bench-")
	if err != nil {
		return f, 0, err
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "bench.db")
	sys, err := startSystem(ctx, o, e.srv, db, isHost)
	if err != nil {
		return f, 0, err
	}
	defer func() {
		if sys != nil {
			if serr := sys.stop(); err == nil && serr != nil && !errors.Is(serr, context.Canceled) {
				err = serr
			}
		}
	}()

	start := time.Now()
	if isHost {
		if err := createGames(ctx, e, games, o.players); err != nil {
			return f, 0, err
		}
	} else {
		for _, p := range e.players {
			to := "host@example.org"
			p.to.Store(&to)
		}
	}
	f.setup = time.Since(start)

	// A few commands first, not measured: connections, statement caches
	// and the allocator warm up, as they would in a host that has run a
	// while.
	warm, wo := figures{}, o
	wo.commands = min(50, o.commands)
	if err := measure(ctx, e, wo, &warm); err != nil {
		return f, 0, fmt.Errorf("warm-up: %w", err)
	}
	profile := isHost && o.cpuProfile != "" && games == o.games[len(o.games)-1]
	if profile {
		pf, err := os.Create(o.cpuProfile)
		if err != nil {
			return f, 0, err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return f, 0, fmt.Errorf("CPU profile: %w", err)
		}
	}
	err = measure(ctx, e, o, &f)
	if profile {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return f, 0, err
	}
	f.peakHeap = mem.peak()
	f.peakRSS = peakRSS()

	// What the system itself keeps alive: the live heap with it running,
	// less the live heap once it has stopped (the mail servers, which keep
	// every message, and the players stay).
	withSystem := liveHeap()
	if err := sys.stop(); err != nil && !errors.Is(err, context.Canceled) {
		return f, 0, err
	}
	sys = nil
	if without := liveHeap(); withSystem > without {
		f.ownHeap = withSystem - without
	}

	if backlog > 0 {
		for i := range backlog {
			p := e.players[i%len(e.players)]
			msg := commandMail(p, fmt.Sprintf("backlog.%d", i))
			if err := e.srv.Deliver(p.addr, *p.to.Load(), msg); err != nil {
				return f, 0, fmt.Errorf("deliver backlog: %w", err)
			}
		}
		base := e.answers.Load()
		start := time.Now()
		if sys, err = startSystem(ctx, o, e.srv, db, isHost); err != nil {
			return f, 0, err
		}
		if err := poll(ctx, func() bool { return e.answers.Load()-base >= int64(backlog) }); err != nil {
			return f, 0, fmt.Errorf("backlog: %d of %d answered: %w", e.answers.Load()-base, backlog, err)
		}
		backlogTime = time.Since(start)
	}
	return f, backlogTime, nil
}

// createGames creates the games by mail as a referee would: NEW GAME, then
// SETUP, one ADD per player and START in the referee's channel. Several
// games are set up at once; it returns once every player knows its
// private channel and the outbox is empty.
func createGames(ctx context.Context, e *benchEnv, games, players int) error {
	setup := fmt.Sprintf("players=%d mafia=%d", players, max(1, players/4))
	switch players {
	case 25:
		setup = "mafia150"
	case 11:
		setup = "classic"
	}
	work := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range min(8, games) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialSMTP(e.srv.SMTPAddr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for g := range work {
				id := fmt.Sprintf("g%d", g)
				if err := sendMail(c, "referee@example.org", "host@example.org", "bench."+id+".new", "NEW GAME "+id); err != nil {
					errs <- err
					return
				}
				var ch string
				if err := poll(ctx, func() bool {
					e.mu.Lock()
					defer e.mu.Unlock()
					ch = e.refChannels[id]
					return ch != ""
				}); err != nil {
					errs <- fmt.Errorf("no answer to NEW GAME %s: %w", id, err)
					return
				}
				var body strings.Builder
				fmt.Fprintf(&body, "SETUP %s\r\n", setup)
				for i := range players {
					p := e.players[g*players+i]
					fmt.Fprintf(&body, "ADD %s %s\r\n", p.name, p.addr)
				}
				body.WriteString("START\r\n")
				if err := sendMail(c, "referee@example.org", ch, "bench."+id+".setup", body.String()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	go func() {
		defer close(work)
		for g := range games {
			select {
			case work <- g:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	if err := errors.Join(drain(errs)...); err != nil {
		return err
	}
	return poll(ctx, func() bool {
		for _, p := range e.players {
			if p.to.Load() == nil {
				return false
			}
		}
		return true
	})
}

// measure sends o.commands STATUS commands, o.inFlight at a time, each
// from a player with no command outstanding, and times each from the hand
// over to SMTP to its confirmation being in the player's mailbox.
func measure(ctx context.Context, e *benchEnv, o benchOptions, f *figures) error {
	free := make(chan *benchPlayer, len(e.players))
	for _, p := range e.players {
		free <- p
	}
	workers := min(o.inFlight, len(e.players), o.commands)
	var issued atomic.Int64
	var mu sync.Mutex
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	cpu0 := processCPU()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialSMTP(e.srv.SMTPAddr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for ctx.Err() == nil {
				n := issued.Add(1)
				if n > int64(o.commands) {
					return
				}
				var p *benchPlayer
				select {
				case p = <-free:
				case <-ctx.Done():
					return
				}
				for len(p.arrived) > 0 {
					<-p.arrived // an answer to something earlier
				}
				t0 := time.Now()
				if err := sendMail(c, p.addr, *p.to.Load(), fmt.Sprintf("bench.%d", n), "STATUS"); err != nil {
					errs <- err
					return
				}
				select {
				case a := <-p.arrived:
					mu.Lock()
					f.commands++
					if a.kind == "confirm" {
						f.latencies = append(f.latencies, a.at.Sub(t0))
					} else {
						f.errors++
					}
					mu.Unlock()
				case <-time.After(time.Minute):
					errs <- fmt.Errorf("no answer to %s's command %d in a minute", p.addr, n)
					return
				case <-ctx.Done():
					return
				}
				free <- p
			}
		}()
	}
	wg.Wait()
	f.wall = time.Since(start)
	f.cpu = processCPU() - cpu0
	close(errs)
	if err := errors.Join(drain(errs)...); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if f.errors > 0 {
		return fmt.Errorf("%d of %d commands were answered with an error", f.errors, f.commands)
	}
	return nil
}

func dialSMTP(addr string) (*smtp.Client, error) {
	c, err := smtp.Dial(addr)
	if err != nil {
		return nil, fmt.Errorf("dial SMTP: %w", err)
	}
	if err := c.Hello("bench.example.org"); err != nil {
		c.Close()
		return nil, fmt.Errorf("EHLO: %w", err)
	}
	return c, nil
}

func commandMail(p *benchPlayer, id string) []byte {
	return mailText(p.addr, *p.to.Load(), id, "STATUS")
}

func mailText(from, to, id, body string) []byte {
	return fmt.Appendf(nil, "From: %s\r\nTo: %s\r\nSubject: Re: game\r\nMessage-ID: <%s.%d@bench.example.org>\r\n"+
		"Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		from, to, id, time.Now().UnixNano(), time.Now().Format(time.RFC1123Z), body)
}

func sendMail(c *smtp.Client, from, to, id, body string) error {
	if err := c.SendMail(from, []string{to}, bytes.NewReader(mailText(from, to, id, body))); err != nil {
		return fmt.Errorf("send %s from %s: %w", id, from, err)
	}
	return nil
}

// poll waits, with a generous limit, until cond holds.
func poll(ctx context.Context, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	return waitFor(ctx, cond)
}

// memSampler keeps the peak of HeapInuse, sampled every 50 ms.
type memSampler struct {
	max  atomic.Uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func startMemSampler() *memSampler {
	m := &memSampler{done: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-m.done:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func (m *memSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > m.max.Load() {
		m.max.Store(ms.HeapInuse)
	}
}

func (m *memSampler) peak() uint64 { m.sample(); return m.max.Load() }

func (m *memSampler) stop() { close(m.done); m.wg.Wait() }

// liveHeap is the heap in use right after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// resetPeakRSS sets the process's VmHWM back to its current RSS (Linux:
// "5" to clear_refs), so that each phase's peak is its own.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is VmHWM from /proc/self/status, in bytes (0 where unknown).
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// processCPU is the user and system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func (r *benchResult) print(w io.Writer, o benchOptions) {
	fmt.Fprintf(w, "\nmafiamail bench: %d players a game, %d commands a scale (STATUS in the private channel), %d in flight;\n"+
		"latency: SMTP hand-over to the confirmation in the player's mailbox (the server's delivery hook).\n"+
		"Peak RSS and heap are the whole process's (host or relay, the mail servers, which keep every message,\n"+
		"and the load driver); own live heap is what the host or relay alone keeps alive after the commands.\n",
		o.players, o.commands, o.inFlight)
	for _, s := range r.scales {
		h, b := s.host, s.relay
		fmt.Fprintf(w, "\n%d game(s), %d players; games created by mail in %.1f s\n", s.games, s.games*o.players, h.setup.Seconds())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "figure\thost\trelay\thost/relay\t")
		for _, q := range []struct {
			name string
			q    float64
		}{{"p50", .5}, {"p95", .95}, {"p99", .99}} {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", q.name, ms(h.quantile(q.q)), ms(b.quantile(q.q)),
				ratio(float64(h.quantile(q.q)), float64(b.quantile(q.q))))
		}
		fmt.Fprintf(tw, "commands/s\t%.0f\t%.0f\t%s\t\n", h.perSecond(), b.perSecond(), ratio(h.perSecond(), b.perSecond()))
		fmt.Fprintf(tw, "CPU/command\t%s\t%s\t%s\t\n", ms(h.cpuPerCommand()), ms(b.cpuPerCommand()),
			ratio(float64(h.cpuPerCommand()), float64(b.cpuPerCommand())))
		rss := "peak RSS"
		if !h.rssReset || !b.rssReset {
			rss += " (process lifetime)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", rss, mib(h.peakRSS), mib(b.peakRSS), ratio(float64(h.peakRSS), float64(b.peakRSS)))
		fmt.Fprintf(tw, "peak heap in use\t%s\t%s\t%s\t\n", mib(h.peakHeap), mib(b.peakHeap), ratio(float64(h.peakHeap), float64(b.peakHeap)))
		fmt.Fprintf(tw, "own live heap\t%s\t%s\t%s\t\n", mib(h.ownHeap), mib(b.ownHeap), ratio(float64(h.ownHeap), float64(b.ownHeap)))
		tw.Flush()
	}
	if len(r.scales) > 1 {
		fmt.Fprintf(w, "\ncost of a command by scale (ratio to %d game(s))\n", r.scales[0].games)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "games\thost p50\thost CPU/cmd\tratio\trelay CPU/cmd\tratio\t")
		h0, b0 := r.scales[0].host.cpuPerCommand(), r.scales[0].relay.cpuPerCommand()
		for _, s := range r.scales {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t\n", s.games, ms(s.host.quantile(.5)), ms(s.host.cpuPerCommand()),
				ratio(float64(s.host.cpuPerCommand()), float64(h0)), ms(s.relay.cpuPerCommand()),
				ratio(float64(s.relay.cpuPerCommand()), float64(b0)))
		}
		tw.Flush()
	}
	if o.backlog > 0 {
		fmt.Fprintf(w, "\nbacklog of %d unseen messages at start (%d game(s)), start to last confirmation\n", o.backlog, r.backlogGames)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "figure\thost\trelay\thost/relay\t")
		fmt.Fprintf(tw, "time\t%.1f s\t%.1f s\t%s\t\n", r.backlogHost.Seconds(), r.backlogRelay.Seconds(),
			ratio(r.backlogHost.Seconds(), r.backlogRelay.Seconds()))
		hr, br := float64(o.backlog)/r.backlogHost.Seconds(), float64(o.backlog)/r.backlogRelay.Seconds()
		fmt.Fprintf(tw, "messages/s\t%.0f\t%.0f\t%s\t\n", hr, br, ratio(hr, br))
		tw.Flush()
	}
}

// drain reads a closed channel of errors to the end.
func drain(ch <-chan error) []error {
	var out []error
	for e := range ch {
		out = append(out, e)
	}
	return out
}
