package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/emersion/go-smtp"
	_ "modernc.org/sqlite" // settle reads the systems' outboxes

	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/service"
)

// cmdBench measures the host against a bare relay, each in a process of
// its own, over the embedded servers or a real Postfix and Dovecot:
// latency of a command to its confirmation, commands per second, CPU and
// memory of the host's process, and the time to work off a backlog of
// unseen mail.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.Flags("mafiamail-bench", stderr)
	games := fs.String("games", "1,10,100", "the scales: how many concurrent games, comma-separated")
	players := fs.Int("players", 25, "players per game (25: the mafia150 setup, 11: classic)")
	commands := fs.Int("commands", 500, "commands measured per scale")
	backlog := fs.Int("backlog", 10000, "unseen messages waiting when the host starts, at the first scale (0: skip)")
	inFlight := fs.Int("concurrency", 32, "commands in flight at once (each player has at most one)")
	runs := fs.Int("runs", 1, "how often each scale is measured; the table shows the median and the spread")
	stack := fs.String("stack", stackEmbedded, "the mail servers: embedded (in the bench's process) or postfix (a real Postfix and Dovecot on loopback; needs root)")
	exe := fs.String("bin", "", "the mafiamail-bench binary whose child command runs the host and the relay (default: this one)")
	baseline := fs.String("baseline", "", "a mafiamail-bench binary of an earlier build: its host is measured too, in the same run, and compared with this one's")
	verbose := fs.Bool("v", false, "log what the host does")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the host's process over its measured commands at the last scale to this file")
	backlogProfile := fs.String("backlog-cpuprofile", "", "write a CPU profile of the host's process over the last run's backlog to this file")
	digestEvery := fs.Duration("digest-every", defaultDigestEvery, "with --load day: the games' digest interval (whole seconds)")
	load := fs.String("load", loadStatus, "what the players send: status (STATUS in the private channel) or day (a Day's and a Night's mix of posts, votes, unvotes, locks, mafia-list posts and night actions)")
	if err := fs.Parse(args); err != nil {
		return cli.Usage(err)
	}
	o := benchOptions{players: *players, commands: *commands, backlog: *backlog, inFlight: *inFlight,
		runs: *runs, stack: *stack, exe: *exe, baseline: *baseline, progress: stdout, logTo: io.Discard, cpuProfile: *cpuProfile, backlogProfile: *backlogProfile, load: *load, digestEvery: *digestEvery}
	if *verbose {
		o.logTo = stderr
	}
	for _, f := range strings.Split(*games, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return cli.Usagef("--games: %q is not a number of games", f)
		}
		o.games = append(o.games, n)
	}
	if o.players < 3 || o.commands < 1 || o.inFlight < 1 || o.backlog < 0 || o.runs < 1 {
		return cli.Usagef("--players must be at least 3, --commands, --concurrency and --runs at least 1")
	}
	if o.stack != stackEmbedded && o.stack != stackPostfix {
		return cli.Usagef("--stack: %q is neither embedded nor postfix", o.stack)
	}
	if o.load != loadStatus && o.load != loadDay {
		return cli.Usagef("--load: %q is neither status nor day", o.load)
	}
	if o.load == loadDay && o.players < 6 {
		return cli.Usagef("--load day needs at least 6 players a game")
	}
	if o.digestEvery < time.Second {
		return cli.Usagef("--digest-every must be at least a second")
	}
	if o.baseline != "" {
		abs, err := filepath.Abs(o.baseline)
		if err != nil {
			return cli.Usage(err)
		}
		if _, err := os.Stat(abs); err != nil {
			return cli.Usagef("--baseline: %v", err)
		}
		o.baseline = abs
	}
	for _, p := range []*string{&o.cpuProfile, &o.backlogProfile} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return cli.Usage(err)
		}
		*p = abs
	}
	if o.exe == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find this binary to run the host: %w", err)
		}
		o.exe = self
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
	runs     int
	// stack is stackEmbedded or stackPostfix.
	stack string
	// exe is the mafiamail-bench binary whose child command runs each system.
	exe string
	// baseline, if set, is the binary of an earlier build whose host is
	// measured beside this one's.
	baseline string
	progress io.Writer
	logTo    io.Writer
	// cpuProfile, if set, receives a CPU profile of the host's process
	// over its measured commands at the last scale (of the last run).
	cpuProfile string
	// backlogProfile, if set, receives a CPU profile of the host's
	// process from its start to the backlog's last answer, in the last run.
	backlogProfile string
	// load is loadStatus or loadDay.
	load string
	// digestEvery is the digest interval of the day load's games.
	digestEvery time.Duration
}

// The loads: STATUS in each player's private channel, or a Day's mix
// (day.go).
const (
	loadStatus = "status"
	loadDay    = "day"
)

// figures are what one system (host or relay) did at one scale in one run.
// CPU and memory are the system's own process's.
type figures struct {
	commands  int
	errors    int // commands answered with an error instead of a confirmation
	latencies []time.Duration
	wall      time.Duration // of the measured commands
	cpu       time.Duration // the process's CPU time over the measured commands
	peakRSS   uint64        // VmHWM of the process, bytes, from its start to the end of the commands
	peakHeap  uint64        // peak heap in use, sampled by the process itself
	liveHeap  uint64        // heap alive after a collection, after the commands
	setup     time.Duration // creating the games by mail (host only)
	// hop is the median time of one message from SMTP hand-over to its
	// arrival as the bench sees it, between two players, with no system
	// in between: the stack's own share, which a command pays twice
	// (player to system, system to player).
	hop time.Duration

	// The day load's figures.
	byOp     map[dayOp][]time.Duration // latencies by kind of message
	refusals []string                  // what the first errors said
	// deliveries counts every message that reached a mailbox of the
	// players' from the first hand-over until the mailboxes were quiet
	// again, deliveryWall.
	deliveries   int64
	deliveryWall time.Duration
	// postCopies counts the copies of posts, posts the posts, by kind.
	postCopies, posts [dayOps]int
	digests           int64 // digests delivered
	// shortPosts counts the posts that reached fewer readers than the
	// host sends them to at once, longPosts those that reached more (a
	// reader who got a post twice); fanout counts the copies and answers
	// that the messages' readers make (every delivery the relay makes).
	shortPosts, longPosts int
	fanout                int64
	// stackRate is the stack's own deliveries per second, the day load's
	// copies handed to it with no system in between (measured in this
	// system's phase, before its load).
	stackRate float64
	// machineBusy is the share of the machine's CPU time that was busy
	// while the measured commands ran, stackBusy while the stack alone
	// delivered (0: unknown; see machine.go).
	machineBusy, stackBusy float64
	// machineCPU is the machine's busy CPU time from the first command
	// until the mailboxes were quiet, stackCPU from the stack alone's
	// first copy to its last, in nanoseconds (0: unknown).
	machineCPU, stackCPU float64
	// lateDigests are the digests that came after the load's last copy
	// or answer, counted in neither deliveries nor digests.
	lateDigests int64
}

// machineCPUPerDelivery is the machine's busy CPU time a delivery: what
// the stack, the system and the bench together spend on each copy. The
// time runs until the mailboxes were quiet, so the late digests count.
func (f figures) machineCPUPerDelivery() float64 {
	if n := f.deliveries + f.lateDigests; n > 0 {
		return f.machineCPU / float64(n)
	}
	return 0
}

func (f figures) deliveriesPerSecond() float64 {
	if f.deliveryWall <= 0 {
		return 0
	}
	return float64(f.deliveries) / f.deliveryWall.Seconds()
}

func (f figures) opQuantile(op dayOp, q float64) time.Duration {
	return figures{latencies: f.byOp[op]}.quantile(q)
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
	// baseline is the earlier build's host, with --baseline.
	baseline figures
}

// backlogFigures are a system's time from its start to the last answer of
// the backlog, and its process's CPU time over it. The CPU time moves less
// with what else the machine runs than the time does.
type backlogFigures struct {
	time, cpu time.Duration
}

// backlogResult is one run's backlog for each system.
type backlogResult struct {
	host, relay, baseline backlogFigures
}

type benchResult struct {
	// scales[i][r] is scale i in run r.
	scales       [][]scaleResult
	backlogGames int
	backlog      []backlogResult // one per run
}

// runBench runs every scale o.runs times, the relay first and then the
// host, each on fresh servers and a fresh store, and the backlog at the
// first scale of every run. The runs go round the scales, so that a
// passing disturbance of the shared machine spoils one run of a scale
// rather than all of them.
func runBench(ctx context.Context, o benchOptions) (*benchResult, error) {
	res := &benchResult{scales: make([][]scaleResult, len(o.games))}
	for r := range o.runs {
		for i, g := range o.games {
			backlog := 0
			if i == 0 {
				backlog = o.backlog
			}
			sr := scaleResult{games: g}
			run := ""
			if o.runs > 1 {
				run = fmt.Sprintf("run %d/%d, ", r+1, o.runs)
			}
			fmt.Fprintf(o.progress, "%s%s stack, %d game(s) x %d players: relay...", run, o.stack, g, o.players)
			rf, rb, err := benchPhase(ctx, o, g, backlog, false, profiles{})
			if err != nil {
				return nil, fmt.Errorf("relay at %d games: %w", g, err)
			}
			fmt.Fprintf(o.progress, " host...")
			var prof profiles
			if r == o.runs-1 {
				if i == len(o.games)-1 {
					prof.commands = o.cpuProfile
				}
				prof.backlog = o.backlogProfile
			}
			hf, hb, err := benchPhase(ctx, o, g, backlog, true, prof)
			if err != nil {
				return nil, fmt.Errorf("host at %d games: %w", g, err)
			}
			var bf figures
			var bb backlogFigures
			if o.baseline != "" {
				fmt.Fprintf(o.progress, " baseline host...")
				bo := o
				bo.exe = o.baseline
				if bf, bb, err = benchPhase(ctx, bo, g, backlog, true, profiles{}); err != nil {
					return nil, fmt.Errorf("baseline host at %d games: %w", g, err)
				}
			}
			fmt.Fprintf(o.progress, " done\n")
			sr.relay, sr.host, sr.baseline = rf, hf, bf
			if backlog > 0 {
				res.backlogGames = g
				res.backlog = append(res.backlog, backlogResult{host: hb, relay: rb, baseline: bb})
			}
			res.scales[i] = append(res.scales[i], sr)
		}
	}
	return res, nil
}

// benchPlayer is one player of the load: its address and the address its
// commands go to (the private channel for the host, the relay's address).
type benchPlayer struct {
	game int
	name string
	addr string
	to   atomic.Pointer[string]
	day  dayPlayer
	// arrived gets the arrival time and kind of every answer delivered to
	// the player.
	arrived chan arrival
}

type arrival struct {
	at   time.Time
	kind string
	// text is the start of an error's text, in the day load, to say
	// what was refused.
	text string
}

const benchPassword = "bench"

// benchEnv is one phase's mail stack and players.
type benchEnv struct {
	stack   benchStack
	domain  string
	referee string
	players []*benchPlayer
	byAddr  map[string]*benchPlayer
	// refChannels maps a game to the referee's private channel in it.
	mu          sync.Mutex
	refChannels map[string]string
	answers     atomic.Int64 // confirmations delivered to players
	delivered   atomic.Int64 // every message the stack reported, of any kind
	// toPlayers counts the messages that reached the players' mailbox
	// (the players' and the referee's addresses, not the system's own),
	// lastDelivery is when the last of them arrived, in Unix nanoseconds.
	toPlayers    atomic.Int64
	lastDelivery atomic.Int64
	// unmarked and lastUnmarked are the same for the players' messages
	// that carry no X-Mafiamail-Kind: the stack alone's copies, told
	// apart from a digest the host sends meanwhile.
	unmarked     atomic.Int64
	lastUnmarked atomic.Int64
	// day is the day load's state; nil in the STATUS load.
	day *dayState
	// probes are the arrival times of the messages probeHop sent.
	probes map[string]time.Time
}

// benchPlayerName is the name of the i-th player of a game: Pla, Plb, ...
func benchPlayerName(i int) string {
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

func newBenchEnv(kind string, games, players int, day *dayState, logTo io.Writer) (*benchEnv, error) {
	e := &benchEnv{byAddr: map[string]*benchPlayer{}, refChannels: map[string]string{}, probes: map[string]time.Time{}, day: day}
	st, err := startStack(kind, e.arrived, day != nil, logTo)
	if err != nil {
		return nil, err
	}
	e.stack, e.domain = st, st.domain()
	e.referee = "players+referee@" + e.domain
	for g := range games {
		for i := range players {
			p := &benchPlayer{game: g, name: benchPlayerName(i), addr: fmt.Sprintf("players+g%d-p%d@%s", g, i, e.domain),
				arrived: make(chan arrival, 16)}
			e.players = append(e.players, p)
			e.byAddr[p.addr] = p
		}
	}
	return e, nil
}

// keepLatest sets last to at, in Unix nanoseconds, unless it is later
// already: the stack's hooks run concurrently.
func keepLatest(last *atomic.Int64, at time.Time) {
	for {
		t := last.Load()
		if t >= at.UnixNano() || last.CompareAndSwap(t, at.UnixNano()) {
			return
		}
	}
}

func (e *benchEnv) address(user string) string { return user + "@" + e.domain }

// arrived sees every message in a player's (or the referee's) mailbox:
// that is when an answer counts as arrived. It learns each player's
// private channel, and the referee's in each game, from their Reply-To.
func (e *benchEnv) arrived(m delivered) {
	to, kind, replyTo, at := m.to, m.kind, m.replyTo, m.at
	e.delivered.Add(1)
	if strings.HasPrefix(to, "players+") {
		e.toPlayers.Add(1)
		keepLatest(&e.lastDelivery, at)
		if kind == "" {
			e.unmarked.Add(1)
			keepLatest(&e.lastUnmarked, at)
		}
	}
	if strings.HasPrefix(to, "players+probe-") {
		e.mu.Lock()
		e.probes[to] = at
		e.mu.Unlock()
		return
	}
	if p := e.byAddr[to]; p != nil {
		if p.to.Load() == nil {
			if rt := replyTo(); strings.Contains(rt, "-p-") {
				p.to.Store(&rt)
			}
		}
		if e.day != nil && e.day.seen(p, m) {
			kind = "confirm"
		}
		if kind == "confirm" || kind == "error" {
			if kind == "confirm" {
				e.answers.Add(1)
			}
			a := arrival{at: at, kind: kind}
			if kind == "error" && e.day != nil {
				t := m.text()
				a.text = string(t[:min(len(t), 600)])
			}
			select {
			case p.arrived <- a:
			default:
			}
		}
		return
	}
	if to == e.referee {
		if e.day != nil {
			e.day.refereeSeen(m)
		}
		if rt := replyTo(); strings.Contains(rt, "-p-") {
			game, _, _ := strings.Cut(strings.TrimPrefix(rt, "host+"), "-p-")
			e.mu.Lock()
			e.refChannels[game] = rt
			e.mu.Unlock()
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

// probeHop times n messages from a player to other players' addresses,
// one after the other, and returns the median time from SMTP hand-over to
// arrival.
func probeHop(ctx context.Context, e *benchEnv, n int) (time.Duration, error) {
	c, err := dialSMTP(e.stack.smtpAddr())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var hops []time.Duration
	for i := range n {
		to := fmt.Sprintf("players+probe-%d@%s", i, e.domain)
		t0 := time.Now()
		if err := sendMail(c, e.players[0].addr, to, fmt.Sprintf("probe.%d", i), "probe"); err != nil {
			return 0, err
		}
		var at time.Time
		if err := poll(ctx, func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			at = e.probes[to]
			return !at.IsZero()
		}); err != nil {
			return 0, fmt.Errorf("probe %d did not arrive: %w", i, err)
		}
		hops = append(hops, at.Sub(t0))
	}
	slices.Sort(hops)
	return hops[len(hops)/2], nil
}

// writeSystemConfig writes the configuration file the host (serve) and
// the relay read, and, for the host, a game clock at real speed from a
// Monday morning, so that no deadline or weekend comes during the run.
func writeSystemConfig(e *benchEnv, o benchOptions, dir, user string, isHost bool) (string, error) {
	db := filepath.Join(dir, user+".db")
	var b strings.Builder
	fmt.Fprintf(&b, "address = %s\nreferees = [%s]\ndatabase = %s\nspeed = 1\n\n[log]\nlevel = \"info\"\n\n",
		strconv.Quote(e.address(user)), strconv.Quote(e.referee), strconv.Quote(db))
	fmt.Fprintf(&b, "[imap]\nurl = %s\nusername = %s\npassword = %s\n\n",
		strconv.Quote("imap://"+e.stack.imapAddr()), strconv.Quote(user), strconv.Quote(benchPassword))
	fmt.Fprintf(&b, "[smtp]\nurl = %s\n", strconv.Quote("smtp://"+e.stack.smtpAddr()))
	if e.stack.smtpAuth() {
		fmt.Fprintf(&b, "username = %s\npassword = %s\n", strconv.Quote(user), strconv.Quote(benchPassword))
	}
	// Load, not abuse: every player writes far more than a person would.
	fmt.Fprintf(&b, "\n[limits]\nper_sender_per_hour = %d\nmax_command_lines = %d\n", 1<<30, o.players+10)
	fmt.Fprintf(&b, "\n[auth]\nauthserv_id = %s\n", strconv.Quote(benchAuthServ))
	path := filepath.Join(dir, user+".toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("write %s's configuration: %w", user, err)
	}
	if isHost {
		now := time.Now()
		if err := service.SetGameClock(db, host.Clock{Anchor: now, Start: service.WeekendEndAfter(now), Speed: 1}); err != nil {
			return "", err
		}
	}
	return path, nil
}

// profiles names the files that receive CPU profiles of a system's
// process: over its measured commands, and over its backlog ("": none).
type profiles struct{ commands, backlog string }

// benchPhase runs one system at one scale: set up, measure the commands,
// and, with backlog > 0, restart it in front of that many unseen messages.
func benchPhase(ctx context.Context, o benchOptions, games, backlog int, isHost bool, prof profiles) (f figures, bf backlogFigures, err error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Minute)
	defer cancel()
	var day *dayState
	if o.load == loadDay {
		day = newDayState(o.players, isHost)
	}
	e, err := newBenchEnv(o.stack, games, o.players, day, o.logTo)
	if err != nil {
		return f, bf, err
	}
	defer func() {
		if cerr := e.stack.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	dir, err := os.MkdirTemp("", "mafiamail-bench-")
	if err != nil {
		return f, bf, err
	}
	defer os.RemoveAll(dir)
	user, sub := "relay", "relay"
	if isHost {
		user, sub = "host", "serve"
	}
	cfg, err := writeSystemConfig(e, o, dir, user, isHost)
	if err != nil {
		return f, bf, err
	}
	profile := prof.commands != ""
	child, err := startChild(o.exe, dir, user, sub, cfg, prof.commands, false, o.logTo)
	if err != nil {
		return f, bf, err
	}
	defer func() {
		if child != nil {
			if serr := child.stop(); err == nil && serr != nil {
				err = serr
			}
		}
	}()

	start := time.Now()
	if isHost {
		setup := benchSetup(o.players)
		if day != nil {
			setup = daySetup(o)
		}
		if err := createGames(ctx, e, games, o.players, setup, child); err != nil {
			return f, bf, err
		}
		if day != nil {
			if err := prepareDay(ctx, e, o, child); err != nil {
				return f, bf, err
			}
		}
		if err := settle(ctx, e, filepath.Join(dir, user+".db"), child); err != nil {
			return f, bf, err
		}
		if err := e.stack.emptyPlayers(ctx); err != nil {
			return f, bf, err
		}
	} else {
		for _, p := range e.players {
			to := e.address("relay")
			p.to.Store(&to)
		}
		if day != nil {
			if err := prepareDay(ctx, e, o, child); err != nil {
				return f, bf, err
			}
		}
	}
	f.setup = time.Since(start)

	// The stack's own share, timed as it stands when the commands are.
	if f.hop, err = probeHop(ctx, e, 5); err != nil {
		return f, bf, err
	}
	// A few commands first, not measured: connections, statement caches
	// and the allocator warm up, as they would in a host that has run a
	// while.
	warm, wo := figures{}, o
	wo.commands = min(50, o.commands)
	measureLoad := measure
	if day != nil {
		// The same seed for host and relay: the same mix, the same sizes.
		measureLoad = func(ctx context.Context, e *benchEnv, o benchOptions, child *benchChild, f *figures) error {
			seed := uint64(o.commands)
			return measureDay(ctx, e, o, child, f, seed)
		}
	}
	if err := measureLoad(ctx, e, wo, child, &warm); err != nil {
		return f, bf, fmt.Errorf("warm-up: %w", err)
	}
	if day != nil {
		// The stack's own rate is measured in each system's phase, just
		// before its load, so that each system is read against the stack
		// as it stood then (its rate moves by a tenth from hour to hour
		// on a shared machine), and on the mailbox as the measured load
		// finds it: emptied, so that neither the warm-up's copies nor the
		// stack's own slow the deliveries down.
		if err := e.stack.emptyPlayers(ctx); err != nil {
			return f, bf, err
		}
		if f.stackRate, f.stackBusy, f.stackCPU, err = stackRate(ctx, e, o, uint64(o.commands)); err != nil {
			return f, bf, err
		}
		if err := e.stack.emptyPlayers(ctx); err != nil {
			return f, bf, err
		}
	}
	if profile {
		if err := child.toggleProfile(); err != nil {
			return f, bf, err
		}
	}
	err = measureLoad(ctx, e, o, child, &f)
	if profile {
		if perr := child.toggleProfile(); err == nil {
			err = perr
		}
	}
	if err != nil {
		return f, bf, err
	}
	f.peakRSS = child.peakRSS()
	hs, err := child.heap(ctx)
	if err != nil {
		return f, bf, err
	}
	f.peakHeap, f.liveHeap = hs.PeakHeapInUse, hs.LiveHeap
	if err := child.stop(); err != nil {
		return f, bf, err
	}
	child = nil

	if backlog > 0 {
		msgs := make([]benchMail, backlog)
		for i := range backlog {
			p := e.players[i%len(e.players)]
			msgs[i] = benchMail{from: p.addr, to: *p.to.Load(), raw: commandMail(p, fmt.Sprintf("backlog.%d", i))}
		}
		if err := e.stack.inject(ctx, msgs); err != nil {
			return f, bf, err
		}
		base := e.answers.Load()
		start := time.Now()
		if child, err = startChild(o.exe, dir, user, sub, cfg, prof.backlog, prof.backlog != "", o.logTo); err != nil {
			return f, bf, err
		}
		if err := poll(ctx, func() bool { return e.answers.Load()-base >= int64(backlog) || child.exited() != nil }); err != nil {
			return f, bf, fmt.Errorf("backlog: %d of %d answered: %w", e.answers.Load()-base, backlog, err)
		}
		if err := child.exited(); err != nil {
			return f, bf, fmt.Errorf("backlog: %w", err)
		}
		bf = backlogFigures{time: time.Since(start), cpu: child.cpu()}
	}
	return f, bf, nil
}

// createGames creates the games by mail as a referee would: NEW GAME, then
// SETUP, one ADD per player and START in the referee's channel. Several
// games are set up at once; it returns once every player knows its
// private channel and the outbox is empty.
func createGames(ctx context.Context, e *benchEnv, games, players int, setup string, child *benchChild) error {
	work := make(chan int)
	errs := make(chan error, 32)
	setupGame := setupGameFunc(ctx, e, setup, players, child)
	var wg sync.WaitGroup
	for range min(32, games) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range work {
				// A connection of its own for each game: the wait for the
				// answer to NEW GAME can outlast an MTA's idle timeout
				// (Postfix: 300 s) on a loaded machine.
				c, err := dialSMTP(e.stack.smtpAddr())
				if err != nil {
					errs <- err
					return
				}
				err = setupGame(c, g)
				c.Close()
				if err != nil {
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
	return awaitChannels(ctx, e, child)
}

// benchSetup is the setup of the bench's games: a built-in one for its
// number of players, or as many Mafia as a quarter of them.
func benchSetup(players int) string {
	switch players {
	case 25:
		return "mafia150"
	case 11:
		return "classic"
	}
	return fmt.Sprintf("players=%d mafia=%d", players, max(1, players/4))
}

// setupGameFunc sends one game's NEW GAME and, once the referee's channel
// is known, its SETUP, ADDs and START; in the day load, a game that is to
// be at night gets CLOSE after START.
func setupGameFunc(ctx context.Context, e *benchEnv, setup string, players int, child *benchChild) func(c *smtp.Client, g int) error {
	return func(c *smtp.Client, g int) error {
		id := fmt.Sprintf("g%d", g)
		if err := sendMail(c, e.referee, e.address("host"), "bench."+id+".new", "NEW GAME "+id); err != nil {
			return err
		}
		var ch string
		if err := poll(ctx, func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			ch = e.refChannels[id]
			return ch != "" || child.exited() != nil
		}); err != nil || ch == "" {
			return fmt.Errorf("no answer to NEW GAME %s: %w", id, errors.Join(err, child.exited()))
		}
		var body strings.Builder
		fmt.Fprintf(&body, "SETUP %s\r\n", setup)
		for i := range players {
			p := e.players[g*players+i]
			fmt.Fprintf(&body, "ADD %s %s\r\n", p.name, p.addr)
		}
		body.WriteString("START\r\n")
		if e.day != nil && atNight(g) {
			// Day 1 closes with no votes on anyone: no one is
			// eliminated, and the night begins (the day load's
			// comment).
			body.WriteString("CLOSE\r\n")
		}
		return sendMail(c, e.referee, ch, "bench."+id+".setup", body.String())
	}
}

// awaitChannels waits until every player knows its private channel.
func awaitChannels(ctx context.Context, e *benchEnv, child *benchChild) error {
	if err := poll(ctx, func() bool {
		if child.exited() != nil {
			return true
		}
		for _, p := range e.players {
			if p.to.Load() == nil {
				return false
			}
		}
		return true
	}); err != nil {
		return fmt.Errorf("not every player has its private channel: %w", err)
	}
	return child.exited()
}

// settle waits until the mail of the games' set-up is all delivered: the
// host's outbox is empty, the stack holds nothing in transit, and no
// message has reached a mailbox for two seconds. Every player knows its
// channel well before that, from its role mail; measuring then would time
// the commands against the tail of the set-up (at a thousand games through
// Postfix, minutes of it).
func settle(ctx context.Context, e *benchEnv, db string, child *benchChild) error {
	// The outbox is read with SQL of its own rather than through package
	// store, which reads only its own schema version: an earlier build's
	// host (--baseline) keeps an earlier one.
	st, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	defer st.Close()
	var pending error
	if err := poll(ctx, func() bool {
		var waiting bool
		pending = st.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM outbox WHERE status IN ('pending', 'sending'))`).Scan(&waiting)
		return pending != nil || !waiting || child.exited() != nil
	}); err != nil || pending != nil {
		return fmt.Errorf("settle: the host's outbox did not empty: %w", errors.Join(err, pending, child.exited()))
	}
	if err := e.stack.settle(ctx); err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	last, since := e.delivered.Load(), time.Now()
	return poll(ctx, func() bool {
		if n := e.delivered.Load(); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) >= 2*time.Second
	})
}

// measure sends o.commands STATUS commands, o.inFlight at a time, each
// from a player with no command outstanding, and times each from the hand
// over to SMTP to its confirmation being in the player's mailbox.
func measure(ctx context.Context, e *benchEnv, o benchOptions, child *benchChild, f *figures) error {
	free := make(chan *benchPlayer, len(e.players))
	for _, p := range e.players {
		free <- p
	}
	workers := min(o.inFlight, len(e.players), o.commands)
	var issued atomic.Int64
	var mu sync.Mutex
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	cpu0 := child.cpu()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialSMTP(e.stack.smtpAddr())
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
				case <-time.After(2 * time.Minute):
					errs <- errors.Join(fmt.Errorf("no answer to %s's command %d in two minutes", p.addr, n), child.exited())
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
	f.cpu = child.cpu() - cpu0
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

// benchAuthServ is the receiving server the host trusts: the players'
// mail carries its passing Authentication-Results field, as mail through a
// provider that checks its senders does.
const benchAuthServ = "mx.bench.test"

func mailText(from, to, id, body string) []byte {
	return fmt.Appendf(nil, "Authentication-Results: %s; dmarc=pass header.from=%s\r\nFrom: %s\r\nTo: %s\r\nSubject: Re: game\r\nMessage-ID: <%s.%d@bench.example.org>\r\n"+
		"Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		benchAuthServ, from[strings.LastIndexByte(from, '@')+1:], from, to, id, time.Now().UnixNano(), time.Now().Format(time.RFC1123Z), body)
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
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func ms(d float64) string { return fmt.Sprintf("%.1f ms", d/float64(time.Millisecond)) }

// ms2 is ms for what costs a few milliseconds or less, as a delivery does.
func ms2(d float64) string { return fmt.Sprintf("%.2f ms", d/float64(time.Millisecond)) }

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

func perSec(v float64) string { return fmt.Sprintf("%.0f", v) }

func secs(v float64) string { return fmt.Sprintf("%.1f s", v) }

func plain(v float64) string { return fmt.Sprintf("%.2f", v) }

// spread is the median and the range of one figure over the runs.
type spread struct{ med, lo, hi float64 }

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{med: med, lo: s[0], hi: s[len(s)-1]}
}

// cell shows the median, and the range where there was more than one run.
func (s spread) cell(format func(float64) string, runs int) string {
	if runs < 2 {
		return format(s.med)
	}
	// The range without the unit, which the median shows.
	num := func(v float64) string { n, _, _ := strings.Cut(format(v), " "); return n }
	return fmt.Sprintf("%s (%s-%s)", format(s.med), num(s.lo), num(s.hi))
}

// ratios are a/b for each run (NaN-free: a run with b = 0 is left out).
func ratios(a, b []float64) []float64 {
	var out []float64
	for i := range a {
		if b[i] != 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}

// benchRow is one figure of the per-scale table.
type benchRow struct {
	name   string
	format func(float64) string
	value  func(figures) float64
}

// benchRows are the figures of the STATUS load's per-scale table.
var benchRows = []benchRow{
	{"p50", ms, func(f figures) float64 { return float64(f.quantile(.5)) }},
	{"p95", ms, func(f figures) float64 { return float64(f.quantile(.95)) }},
	{"p99", ms, func(f figures) float64 { return float64(f.quantile(.99)) }},
	{"one mail hop", ms, func(f figures) float64 { return float64(f.hop) }},
	{"p50 less two hops", ms, func(f figures) float64 { return float64(f.quantile(.5) - 2*f.hop) }},
	{"commands/s", perSec, figures.perSecond},
	{"CPU/command", ms, func(f figures) float64 { return float64(f.cpuPerCommand()) }},
	{"peak RSS", mib, func(f figures) float64 { return float64(f.peakRSS) }},
	{"peak heap in use", mib, func(f figures) float64 { return float64(f.peakHeap) }},
	{"live heap", mib, func(f figures) float64 { return float64(f.liveHeap) }},
}

// baselineColumn is column for the baseline build's host.
func baselineColumn(runs []scaleResult, value func(figures) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = value(r.baseline)
	}
	return out
}

func column(runs []scaleResult, host bool, value func(figures) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		if host {
			out[i] = value(r.host)
		} else {
			out[i] = value(r.relay)
		}
	}
	return out
}

func (r *benchResult) print(w io.Writer, o benchOptions) {
	how := "the embedded servers, in the bench's process; arrival: the server's delivery hook"
	if o.stack == stackPostfix {
		how = "a real Postfix and Dovecot on loopback; arrival: Dovecot's EXISTS to an IDLE session on the players' INBOX"
	}
	rows := benchRows
	if o.load == loadDay {
		rows = dayRows
		printDayHeader(w, o, how)
	} else {
		fmt.Fprintf(w, "\nmafiamail-bench: %d players a game, %d commands a scale (STATUS in the private channel), %d in flight;\n"+
			"mail stack: %s.\n"+
			"Latency: SMTP hand-over of the command to its confirmation in the player's mailbox; one mail hop is the\n"+
			"median of 5 messages between players, no system in between: a command pays two hops, and what is left\n"+
			"of the p50 is the system's own share.\n"+
			"The host (mafiamail serve) and the relay each run in a process of their own: CPU is that process's,\n"+
			"peak RSS its VmHWM from its start (game set-up included), heaps as it reports them (live: after a GC).\n",
			o.players, o.commands, o.inFlight, how)
	}
	if o.runs > 1 {
		fmt.Fprintf(w, "Each figure is the median of %d runs, with the range (min-max) in brackets; ratios are per run.\n", o.runs)
	}
	for _, runs := range r.scales {
		if len(runs) == 0 {
			continue
		}
		g := runs[0].games
		setup := spreadOf(column(runs, true, func(f figures) float64 { return f.setup.Seconds() }))
		fmt.Fprintf(w, "\n%d game(s), %d players; games created by mail in %s\n", g, g*o.players, setup.cell(secs, o.runs))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "figure\thost\trelay\thost/relay\t")
		for _, row := range rows {
			h, b := column(runs, true, row.value), column(runs, false, row.value)
			ratio := "-" // the relay has none (digests)
			if rs := ratios(h, b); len(rs) > 0 {
				ratio = spreadOf(rs).cell(plain, o.runs)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", row.name, spreadOf(h).cell(row.format, o.runs),
				spreadOf(b).cell(row.format, o.runs), ratio)
		}
		tw.Flush()
		if o.load == loadDay {
			printStackRate(w, runs, o)
		}
		if o.baseline != "" {
			fmt.Fprintf(w, "this build's host against the baseline build's (%s), same run\n", o.baseline)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "figure\thost\tbaseline\thost/baseline\t")
			for _, row := range rows {
				h, b := column(runs, true, row.value), baselineColumn(runs, row.value)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", row.name, spreadOf(h).cell(row.format, o.runs),
					spreadOf(b).cell(row.format, o.runs), spreadOf(ratios(h, b)).cell(plain, o.runs))
			}
			tw.Flush()
		}
	}
	if len(r.scales) > 1 {
		fmt.Fprintf(w, "\ncost of a command by scale (medians; ratio to %d game(s))\n", r.scales[0][0].games)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "games\thost p99\tratio\thost CPU/cmd\tratio\trelay p99\tratio\trelay CPU/cmd\tratio\t")
		p99 := func(f figures) float64 { return float64(f.quantile(.99)) }
		cpu := func(f figures) float64 { return float64(f.cpuPerCommand()) }
		med := func(runs []scaleResult, host bool, v func(figures) float64) float64 {
			return spreadOf(column(runs, host, v)).med
		}
		first := r.scales[0]
		for _, runs := range r.scales {
			fmt.Fprintf(tw, "%d\t", runs[0].games)
			for _, host := range []bool{true, false} {
				for _, v := range []func(figures) float64{p99, cpu} {
					x, x0 := med(runs, host, v), med(first, host, v)
					fmt.Fprintf(tw, "%s\t%s\t", ms(x), ratio(x, x0))
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if o.backlog > 0 && len(r.backlog) > 0 {
		fmt.Fprintf(w, "\nbacklog of %d unseen messages at start (%d game(s)), process start to last confirmation\n", o.backlog, r.backlogGames)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "figure\thost\trelay\thost/relay\t")
		var ht, bt, hr, br, hc, bc []float64
		for _, b := range r.backlog {
			ht, bt = append(ht, b.host.time.Seconds()), append(bt, b.relay.time.Seconds())
			hr, br = append(hr, float64(o.backlog)/b.host.time.Seconds()), append(br, float64(o.backlog)/b.relay.time.Seconds())
			hc, bc = append(hc, float64(b.host.cpu)/float64(o.backlog)), append(bc, float64(b.relay.cpu)/float64(o.backlog))
		}
		fmt.Fprintf(tw, "time\t%s\t%s\t%s\t\n", spreadOf(ht).cell(secs, o.runs), spreadOf(bt).cell(secs, o.runs),
			spreadOf(ratios(ht, bt)).cell(plain, o.runs))
		fmt.Fprintf(tw, "messages/s\t%s\t%s\t%s\t\n", spreadOf(hr).cell(perSec, o.runs), spreadOf(br).cell(perSec, o.runs),
			spreadOf(ratios(hr, br)).cell(plain, o.runs))
		fmt.Fprintf(tw, "CPU/message\t%s\t%s\t%s\t\n", spreadOf(hc).cell(ms2, o.runs), spreadOf(bc).cell(ms2, o.runs),
			spreadOf(ratios(hc, bc)).cell(plain, o.runs))
		tw.Flush()
		if o.baseline != "" {
			var lt, lr, lc []float64
			for _, b := range r.backlog {
				lt, lr = append(lt, b.baseline.time.Seconds()), append(lr, float64(o.backlog)/b.baseline.time.Seconds())
				lc = append(lc, float64(b.baseline.cpu)/float64(o.backlog))
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "figure\thost\tbaseline\thost/baseline\t")
			fmt.Fprintf(tw, "time\t%s\t%s\t%s\t\n", spreadOf(ht).cell(secs, o.runs), spreadOf(lt).cell(secs, o.runs),
				spreadOf(ratios(ht, lt)).cell(plain, o.runs))
			fmt.Fprintf(tw, "messages/s\t%s\t%s\t%s\t\n", spreadOf(hr).cell(perSec, o.runs), spreadOf(lr).cell(perSec, o.runs),
				spreadOf(ratios(hr, lr)).cell(plain, o.runs))
			fmt.Fprintf(tw, "CPU/message\t%s\t%s\t%s\t\n", spreadOf(hc).cell(ms2, o.runs), spreadOf(lc).cell(ms2, o.runs),
				spreadOf(ratios(hc, lc)).cell(plain, o.runs))
			tw.Flush()
		}
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// drain reads a closed channel of errors to the end.
func drain(ch <-chan error) []error {
	var out []error
	for e := range ch {
		out = append(out, e)
	}
	return out
}
