//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/faultproxy"
	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/service"
)

// TestSiege plays whole games through `mafiamail serve` and a real Postfix
// and Dovecot on loopback while everything that goes wrong in real life
// goes wrong at once:
//
//   - the host is killed with SIGKILL at random instants and restarted,
//     some kills just before a deadline that then passes while it is down;
//   - between the host and Postfix, a proxy answers 421 and 451 at random
//     and drops connections before and after a message is delivered;
//     Dovecot is restarted under the watcher's IDLE, and the network to
//     IMAP hangs without closing;
//   - forgeries, a finished game's player, a replaced player's old
//     address, two auto-responders answering each other and the host, an
//     out-of-office at every player of a game, malformed MIME, a 25 MiB
//     message, 5,000 command lines and a flood from one address;
//   - many concurrent games of 25 players, whose bots read their real
//     mailboxes over IMAP to learn their addresses and answer.
//
// Afterwards it checks every guarantee: each game's log is sound and ends
// with the winner its roles and commands demand; every message was
// decided once and as it must be; every command answered; every outgoing
// message sent; every participant's mailbox holds, after de-duplication
// by Message-ID, exactly the messages addressed to them and nothing they
// must not see; no loop grew; the flood slowed no other game past a
// deadline. It prints a summary.
//
// The short form, which CI runs, takes a few minutes. MAFIAMAIL_LONG=1
// runs the long form: 100 concurrent games of 25 players, a flood of
// 10,000 messages, and more kills and faults.
func TestSiege(t *testing.T) {
	o := siegeShort
	if os.Getenv("MAFIAMAIL_LONG") == "1" {
		o = siegeLong
	}
	s := startSiege(t, o)
	s.run()
	s.check()
}

// siegeOptions size a siege.
type siegeOptions struct {
	name string
	// games concurrent games of 25 players are played for playFor.
	games   int
	playFor time.Duration
	// pace is the wait between two messages of one game's players.
	pace time.Duration
	// speed is how much faster than real time game time runs, and setup
	// the SETUP line of the games of the load.
	speed float64
	setup string
	// The least number of each fault in a run, and the share in percent
	// of the host's SMTP transactions that meet a fault.
	kills, restarts, stalls int
	smtpFaults              int
	floodSize               int
	// stagger is the time between the openings of two games; wait bounds
	// every wait for the host, which only matters when something is
	// broken.
	stagger, wait time.Duration
}

var (
	// The short form's days are short, so that games end in the time it
	// plays: players who miss votes are removed, and someone wins.
	siegeShort = siegeOptions{name: "short", games: 6, playFor: 150 * time.Second, pace: time.Second,
		speed: 3600, setup: "mafia150 digest_interval=6h day_length=24h runoff_length=4h extra_length=4h",
		kills: 12, restarts: 3, stalls: 3, smtpFaults: 26, floodSize: 2000, stagger: 150 * time.Millisecond, wait: 5 * time.Minute}
	// The long form's hundred games each send every player their own copy
	// of each post, day and digest: game time runs slower, the games open
	// over five minutes, players write about once every five minutes (12 s
	// between two messages of a game) and fewer transactions fail, so that
	// the mail, and the flood, fit through one Postfix and Dovecot on a
	// small machine shared with the players themselves.
	siegeLong = siegeOptions{name: "long", games: 100, playFor: 10 * time.Minute, pace: 12 * time.Second,
		speed: 120, setup: "mafia150 digest_interval=12h day_length=24h runoff_length=4h extra_length=4h",
		kills: 60, restarts: 10, stalls: 10, smtpFaults: 8, floodSize: 10000, stagger: 3 * time.Second, wait: 15 * time.Minute}
)

const (
	siegeDomain = "example.org"
	// siegeAuthserv is the authserv-id of the stack's Postfix (its
	// myhostname). A loopback Postfix cannot check SPF or DKIM; the bots
	// put on their mail the passing Authentication-Results field that a
	// receiving MTA would add for a genuine sender, and forgers put what a
	// forger can: nothing, or fields of a foreign authserv-id.
	siegeAuthserv = "mx." + siegeDomain
	siegePassword = "pw"
	// siegePerHour is the host's allowance per address: two and a half times the
	// default, so that a bot in a game's last days, writing as often as
	// all of its fellows did, stays within it; the flood does not.
	siegePerHour = 300
)

// siege is one run: the servers, the proxies, the host and the players.
type siege struct {
	t     *testing.T
	o     siegeOptions
	stack *mailstack.Stack
	smtp  *faultproxy.SMTP
	imap  *faultproxy.TCP
	h     *killHarness
	view  *killView
	rng   *rand.Rand // the test goroutine's

	readers []*mailReader
	learned *channels

	// faulting turns the SMTP proxy's faults on.
	faulting atomic.Bool
	frng     lockedRand

	mu       sync.Mutex
	drivers  []*killDriver
	games    []*killGame
	restarts int
	stalls   int
	// idleCaught: a Dovecot restart has ended the watcher's IDLE, as
	// serve's log says.
	idleCaught bool
	// outages are the spans in which the host could not read its mail:
	// killed, Dovecot down, or the network to IMAP hung.
	outages []span

	atk *siegeAttack
}

type span struct{ from, to time.Time }

type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) IntN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

func startSiege(t *testing.T, o siegeOptions) *siege {
	t.Helper()
	bin := mafiamail.Path(t)
	stack := mailstack.Start(t, mailstack.Config{Domain: siegeDomain})
	for _, u := range []string{"host", "referee", "players"} {
		if err := stack.AddUser(u, siegePassword); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("siege %s", o.name)
	seed := testSeed(t)
	s := &siege{t: t, o: o, stack: stack, rng: rand.New(rand.NewPCG(seed, 0x5e9e)), learned: newChannels()}
	s.frng.r = rand.New(rand.NewPCG(seed, 0xfa17))

	var err error
	s.smtp, err = faultproxy.NewSMTP(stack.SMTPAddr(), s.fault, testlog.New(t, slog.LevelWarn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.smtp.Close() })
	s.imap, err = faultproxy.NewTCP(stack.IMAPAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.imap.Close() })

	dir := t.TempDir()
	if os.Getenv("MAFIAMAIL_KEEP") == "1" {
		// Keep the database and serve's log for a post-mortem.
		if dir, err = os.MkdirTemp("", "siege-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("the database and serve's log are kept in %s", dir)
	}
	h := &killHarness{t: t, bin: bin, db: filepath.Join(dir, "siege.db"),
		cfg: filepath.Join(dir, "mafiamail.toml"), logPath: filepath.Join(dir, "serve.log"), rng: rand.New(rand.NewPCG(seed, 0x6b11))}
	now := time.Now()
	h.clock = host.Clock{Anchor: now.UTC(), Start: service.WeekendEndAfter(now), Speed: o.speed}
	if err := service.SetGameClock(h.db, h.clock); err != nil {
		t.Fatal(err)
	}
	var refs []string
	for i := range o.games {
		refs = append(refs, fmt.Sprintf("%q", siegeReferee(siegeGameID(i))))
	}
	refs = append(refs, fmt.Sprintf("%q", siegeReferee("atk")))
	// The watcher checks its connection every few seconds, so that a hung
	// network costs seconds, not the default minutes; the SMTP account has
	// no credentials: Postfix relays for loopback.
	config := fmt.Sprintf(`address = "host@%s"
referees = [%s]
database = %q
speed = %g
[log]
level = "info"
[imap]
url = "imap://%s"
username = "host"
password = %q
timeout = "5s"
idle_refresh = "5s"
[smtp]
url = "smtp://%s"
timeout = "20s"
[auth]
authserv_id = %q
[limits]
per_sender_per_hour = %d
`, siegeDomain, strings.Join(refs, ", "), h.db, o.speed, s.imap.Addr(), siegePassword, s.smtp.Addr(), siegeAuthserv, siegePerHour)
	if err := os.WriteFile(h.cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	s.h = h
	h.start()
	h.waitLog("games loaded", time.Minute)
	s.view, err = openView(h.db)
	if err != nil {
		t.Fatal(err)
	}
	s.view.maxAge = 200 * time.Millisecond
	h.view = s.view

	// The participants read their mail as it comes, straight from Dovecot.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, user := range []string{"players", "referee"} {
		r := &mailReader{addr: stack.IMAPAddr(), user: user, pass: siegePassword, onMail: s.onMail}
		s.readers = append(s.readers, r)
		wg.Add(1)
		go func() { defer wg.Done(); r.run(ctx) }()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s
}

func siegeGameID(i int) string { return fmt.Sprintf("s%d", i+1) }

// siegeReferee is the address of a game's referee: each game has its own,
// as each group of friends does, all delivered to one mailbox.
func siegeReferee(game string) string { return "referee+" + game + "@" + siegeDomain }

// siegePlayer is a player's address, delivered to the players' mailbox.
func siegePlayer(name, game string) string {
	return "players+" + game + "." + strings.ToLower(name) + "@" + siegeDomain
}

// fault is the SMTP proxy's choice for each of the host's transactions.
func (s *siege) fault(from string) faultproxy.Fault {
	if !s.faulting.Load() {
		return faultproxy.None
	}
	// The six faults, equally likely, in smtpFaults percent of the
	// transactions.
	if r := s.frng.IntN(600); r < 6*s.o.smtpFaults {
		return []faultproxy.Fault{faultproxy.TempFailMail, faultproxy.TempFailRcpt, faultproxy.TempFailData,
			faultproxy.Shutdown, faultproxy.DropBeforeDelivery, faultproxy.DropAfterDelivery}[r/s.o.smtpFaults]
	}
	return faultproxy.None
}

// channels is what each participant learned from the host's mail: the
// token in the Reply-To of the mail delivered to them, per game.
type channels struct {
	mu     sync.Mutex
	tokens map[string]string // delivered-to address + " " + game -> token
	notify chan struct{}
}

func newChannels() *channels {
	return &channels{tokens: map[string]string{}, notify: make(chan struct{})}
}

var replyToRE = regexp.MustCompile(`^host\+([a-z0-9]+)-[tpm]-([A-Za-z0-9_]+)@`)

func (c *channels) learn(rcpt, replyTo string) {
	m := replyToRE.FindStringSubmatch(replyTo)
	if m == nil {
		return
	}
	key := rcpt + " " + m[1]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens[key] != m[2] {
		c.tokens[key] = m[2]
		close(c.notify)
		c.notify = make(chan struct{})
	}
}

// token is what addr learned of its token in game, "" if nothing yet.
func (c *channels) token(addr, game string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tokens[strings.ToLower(addr)+" "+game]
}

// wait waits until addr has learned its token in game, at most timeout.
func (c *channels) wait(ctx context.Context, addr, game string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		c.mu.Lock()
		tok, ch := c.tokens[strings.ToLower(addr)+" "+game], c.notify
		c.mu.Unlock()
		if tok != "" {
			return tok, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%s was never told their address: %w", addr, ctx.Err())
		case <-ch:
		}
	}
}

// onMail sees every message delivered to a participant.
func (s *siege) onMail(d delivery) {
	if d.fromHost() {
		s.learned.learn(d.rcpt, d.replyTo)
	}
	if s.atk != nil {
		s.atk.onMail(d)
	}
}

// delivery is one message in a participant's mailbox, as its header tells.
type delivery struct {
	uid     imap.UID
	rcpt    string // Delivered-To, lower case
	id      string // Message-ID without brackets
	from    string // the From address, lower case
	envFrom string // Return-Path, lower case
	replyTo string
	subject string
	auto    string // Auto-Submitted
	kind    string // X-Mafiamail-Kind
}

func (d delivery) fromHost() bool {
	return strings.HasPrefix(d.envFrom, "host@") || strings.HasPrefix(d.envFrom, "host+")
}

func parseDelivery(uid imap.UID, raw []byte) (delivery, error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return delivery{}, err
	}
	h := m.Header
	d := delivery{uid: uid, id: bareID(h.Get("Message-Id")), subject: h.Get("Subject"), auto: h.Get("Auto-Submitted"),
		kind: h.Get("X-Mafiamail-Kind")}
	d.rcpt = strings.ToLower(bareID(h.Get("Delivered-To")))
	d.envFrom = strings.ToLower(bareID(h.Get("Return-Path")))
	if a, err := mail.ParseAddress(h.Get("From")); err == nil {
		d.from = strings.ToLower(a.Address)
	}
	if l, err := mail.ParseAddressList(h.Get("Reply-To")); err == nil && len(l) > 0 {
		d.replyTo = strings.ToLower(l[0].Address)
	}
	return d, nil
}

// mailReader reads one Dovecot mailbox as its owners' mail clients would,
// straight from Dovecot (not through the proxy the host's watcher uses),
// and hands every new message to onMail once, in order.
type mailReader struct {
	addr, user, pass string
	onMail           func(delivery)

	mu    sync.Mutex
	next  imap.UID
	seen  int
	fails int
	last  error
}

func (r *mailReader) run(ctx context.Context) {
	r.mu.Lock()
	if r.next == 0 {
		r.next = 1
	}
	r.mu.Unlock()
	for ctx.Err() == nil {
		err := r.session(ctx)
		if err != nil && ctx.Err() == nil {
			// Dovecot restarts under the readers too.
			r.mu.Lock()
			r.fails++
			r.last = err
			r.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func (r *mailReader) session(ctx context.Context) error {
	c, err := imapclient.DialInsecure(r.addr, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Login(r.user, r.pass).Wait(); err != nil {
		return err
	}
	if _, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		return err
	}
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true}
	for ctx.Err() == nil {
		r.mu.Lock()
		next := r.next
		r.mu.Unlock()
		msgs, err := c.Fetch(imap.UIDSet{imap.UIDRange{Start: next, Stop: 0}},
			&imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return err
		}
		slices.SortFunc(msgs, func(a, b *imapclient.FetchMessageBuffer) int { return int(a.UID) - int(b.UID) })
		got := 0
		for _, m := range msgs {
			if m.UID < next {
				continue // n:* names the last message when n is past it
			}
			got++
			d, err := parseDelivery(m.UID, m.FindBodySection(section))
			if err == nil {
				r.onMail(d)
			}
			next = m.UID + 1
			r.mu.Lock()
			r.next, r.seen = next, r.seen+1
			r.mu.Unlock()
		}
		if got == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
			if err := c.Noop().Wait(); err != nil {
				return err
			}
		}
	}
	return nil
}

// readAll reads every message of user's INBOX, whole, and hands each to f.
func readAll(addr, user, pass string, f func(uid imap.UID, raw []byte) error) error {
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Login(user, pass).Wait(); err != nil {
		return err
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return err
	}
	section := &imap.FetchItemBodySection{Peek: true}
	const batch = 200
	for start := uint32(1); start <= sel.NumMessages; start += batch {
		msgs, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: start, Stop: min(start+batch-1, sel.NumMessages)}},
			&imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if err := f(m.UID, m.FindBodySection(section)); err != nil {
				return err
			}
		}
	}
	return nil
}

// newDriver is a driver for the players of one or more games: its own
// random numbers and record of what it sent, its players' addresses as
// they learned them from their mail.
func (s *siege) newDriver() *killDriver {
	d := &killDriver{h: s.h, view: s.view, smtpAddr: s.stack.SMTPAddr(), authserv: siegeAuthserv,
		rng: rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64())), channel: s.channelOf, refChannelOf: s.refChannelOf}
	s.mu.Lock()
	s.drivers = append(s.drivers, d)
	s.mu.Unlock()
	return d
}

func (s *siege) channelOf(g *killGame, p engine.Player, kind string) (string, bool) {
	tok := s.learned.token(p.Address, g.id)
	if tok == "" {
		return "", false
	}
	return killAddress(g.id, kind, tok), true
}

func (s *siege) refChannelOf(g *killGame) string {
	tok := s.learned.token(g.refereeOf(), g.id)
	if tok == "" {
		return ""
	}
	return killAddress(g.id, "p", tok)
}

func (s *siege) newGame(id, referee string, names []string) *killGame {
	g := &killGame{id: id, referee: referee, addrs: map[string]string{}}
	for _, n := range names {
		g.names = append(g.names, n)
		g.addrs[n] = siegePlayer(n, id)
	}
	s.mu.Lock()
	s.games = append(s.games, g)
	s.mu.Unlock()
	return g
}

// await polls the game until cond holds; the host may be down meanwhile.
func (s *siege) await(ctx context.Context, g *killGame, what string, cond func(*engine.State) bool) (*engine.State, error) {
	end := time.Now().Add(s.o.wait)
	for time.Now().Before(end) {
		st, _, err := s.view.state(g.id)
		if err != nil {
			return nil, err
		}
		if st != nil && cond(st) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(150 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("game %s: %s did not happen in %v", g.id, what, s.o.wait)
}

// openGame has the referee create the game and set it up, the players
// join, and the referee start it, each learning their addresses from the
// host's answers as people do.
func (s *siege) openGame(ctx context.Context, d *killDriver, g *killGame, setup string) error {
	command := func(m *killMsg, err error) error {
		if m != nil {
			m.command, m.game = true, g.id
		}
		return err
	}
	if err := command(d.send(g.refereeOf(), "host@"+siegeDomain, "NEW GAME "+g.id)); err != nil {
		return err
	}
	if _, err := s.learned.wait(ctx, g.refereeOf(), g.id, s.o.wait); err != nil {
		return err
	}
	if setup != "" {
		// Mail can overtake mail: the players are invited once the host
		// has confirmed the setup, or a JOIN could find the default one.
		if err := command(d.send(g.refereeOf(), s.refChannelOf(g), "SETUP "+setup)); err != nil {
			return err
		}
		// (Every setup here changes a key, which makes it "custom".)
		if _, err := s.await(ctx, g, "the setup", func(st *engine.State) bool { return st.Setup.Name == "custom" }); err != nil {
			return err
		}
	}
	for _, name := range g.names {
		if err := command(d.send(g.addrs[name], "host+"+g.id+"@"+siegeDomain, "JOIN "+name)); err != nil {
			return err
		}
	}
	if _, err := s.await(ctx, g, "sign-up", func(st *engine.State) bool { return len(st.Players) == len(g.names) }); err != nil {
		return err
	}
	if err := command(d.send(g.refereeOf(), s.refChannelOf(g), "START")); err != nil {
		return err
	}
	// Every player learns their role and addresses from the role message.
	for _, name := range g.names {
		if _, err := s.learned.wait(ctx, g.addrs[name], g.id, s.o.wait); err != nil {
			return err
		}
	}
	_, err := s.await(ctx, g, "the start", func(st *engine.State) bool { return st.Phase != engine.SignupPhase })
	return err
}

// playSeat keeps a game of the load going at one seat of the host: when
// a game ends and there is time for another, its referee opens the next.
func (s *siege) playSeat(ctx context.Context, d *killDriver, seat int, until time.Time) error {
	for round := 1; ; round++ {
		id := siegeGameID(seat)
		if round > 1 {
			id += fmt.Sprintf("r%d", round)
		}
		g := s.newGame(id, siegeReferee(siegeGameID(seat)), siegeNames)
		if err := s.playGame(ctx, d, g, until); err != nil {
			return fmt.Errorf("game %s: %w", g.id, err)
		}
		if time.Until(until) < s.o.playFor/4 && s.atk.floodOver.Load() {
			return nil
		}
	}
}

// playGame plays one game of the load until it ends or the time is up,
// when the referee ends it.
func (s *siege) playGame(ctx context.Context, d *killDriver, g *killGame, until time.Time) error {
	d.mu.Lock()
	d.games = append(d.games, g)
	d.mu.Unlock()
	if err := s.openGame(ctx, d, g, s.o.setup); err != nil {
		return err
	}
	// The games go on at least until the flood is over: its effect on
	// them is measured.
	for time.Now().Before(until) || !s.atk.floodOver.Load() {
		st, _, err := s.view.state(g.id)
		if err != nil {
			return err
		}
		if st.Phase == engine.EndedPhase {
			return nil
		}
		if err := d.act(g, st, ""); err != nil {
			return err
		}
		// Each player writes about as often whatever the number left
		// alive, as people do, and stays within the host's allowance.
		living := max(1, len(st.Living()))
		pace := s.o.pace * time.Duration(len(g.names)) / time.Duration(living)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pace/2 + time.Duration(d.rng.Int64N(int64(pace)))):
		}
	}
	st, _, err := s.view.state(g.id)
	if err != nil || st.Phase == engine.EndedPhase {
		return err
	}
	m, err := d.send(g.refereeOf(), s.refChannelOf(g), "END")
	if m != nil {
		m.command, m.game = true, g.id
	}
	return err
}

// run plays the games and the attacks while the host is killed and the
// servers fail, then lets the host finish its work.
func (s *siege) run() {
	t := s.t
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	until := start.Add(s.o.playFor)
	s.atk = newSiegeAttack(s)
	s.faulting.Store(true)

	n := s.o.games + 1
	errs := make(chan error, n)
	for i := range s.o.games {
		d := s.newDriver() // here: the test goroutine's random numbers seed it
		// The games open a few at a time, as groups would.
		delay := time.Duration(i) * s.o.stagger
		go func() {
			time.Sleep(delay)
			errs <- s.playSeat(ctx, d, i, until)
		}()
	}
	go func() { errs <- s.atk.run(ctx, until) }()

	// Kills and server faults, in this goroutine, until the games are
	// done and each fault has happened often enough. None during the
	// flood: it is the flood's effect on the other games that is
	// measured then.
	for n > 0 || len(s.h.kills) < s.o.kills || s.restarts < s.o.restarts || s.stalls < s.o.stalls || !s.idleDone() {
		select {
		case err := <-errs:
			n--
			if err != nil {
				cancel()
				t.Fatalf("%v\n%s", err, s.h.logTail())
			}
			continue
		default:
		}
		if s.atk.flooding.Load() {
			s.h.sleep(200 * time.Millisecond)
			continue
		}
		switch r := s.rng.IntN(10); {
		case r < 6 || n == 0 && len(s.h.kills) < s.o.kills:
			s.killCycle()
		case r < 8 && (s.restarts < s.o.restarts || !s.idleDone() || s.rng.IntN(3) == 0):
			s.restartDovecot()
		case s.stalls < s.o.stalls || s.rng.IntN(3) == 0:
			s.stall()
		default:
			s.h.sleep(500 * time.Millisecond)
		}
	}
	s.faulting.Store(false)
	t.Logf("play over after %v: %d kills, %d Dovecot restarts, %d IMAP stalls", time.Since(start).Round(time.Second),
		len(s.h.kills), s.restarts, s.stalls)

	// The last host runs until everything is decided and sent; then the
	// responders stop, and the host answers what they sent last.
	s.waitDrained()
	s.atk.resp.stop()
	s.waitDrained()
	if err := s.stack.WaitDelivered(); err != nil {
		s.t.Fatal(err)
	}
	s.waitRead()
	s.h.terminate()
	s.view.close()
}

// killCycle lets the host run a while, kills it and starts it again. The
// first few kills, and a third of the rest, come just before a deadline,
// and the host stays down until it has passed: left to chance alone, a
// short run can go by with one such kill or none, and a kill that comes a
// moment late under load misses its deadline.
func (s *siege) killCycle() {
	h := s.h
	if h.deadlineKills < 4 || s.rng.IntN(3) == 0 {
		if due, ok := h.nextDeadline(); ok {
			h.deadlineKills++
			h.sleep(time.Until(due) - time.Duration(s.rng.IntN(250))*time.Millisecond)
			h.kill()
			time.Sleep(time.Until(due) + time.Duration(50+s.rng.IntN(600))*time.Millisecond)
			h.start()
			s.outage(h.kills[len(h.kills)-1].at)
			return
		}
	}
	up := time.Duration(300+s.rng.IntN(2500)) * time.Millisecond
	h.sleep(up)
	h.kill()
	time.Sleep(time.Duration(s.rng.IntN(400)) * time.Millisecond)
	h.start()
	s.outage(h.kills[len(h.kills)-1].at)
}

func (s *siege) outage(from time.Time) {
	s.mu.Lock()
	s.outages = append(s.outages, span{from, time.Now()})
	s.mu.Unlock()
}

// restartDovecot restarts Dovecot under the host's IDLE and the readers.
func (s *siege) restartDovecot() {
	s.h.sleep(time.Duration(500+s.rng.IntN(2000)) * time.Millisecond)
	if !s.idleDone() {
		// Aim at the watcher's IDLE: it idles once its mailbox holds
		// nothing unseen.
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if _, unseen, err := hostInboxAt(s.stack.IMAPAddr(), siegePassword); err == nil && unseen == 0 {
				break
			}
		}
	}
	from := time.Now()
	if err := s.stack.StopDovecot(); err != nil {
		s.t.Fatal(err)
	}
	time.Sleep(time.Duration(s.rng.IntN(1500)) * time.Millisecond)
	if err := s.stack.StartDovecot(); err != nil {
		s.t.Fatal(err)
	}
	s.restarts++
	s.outage(from)
}

// idleDone reports whether a Dovecot restart has ended the watcher's IDLE
// yet, or whether enough restarts have tried that the check will tell.
func (s *siege) idleDone() bool {
	if !s.idleCaught && s.restarts > 0 {
		data, err := os.ReadFile(s.h.logPath)
		s.idleCaught = err == nil && bytes.Contains(data, []byte("closed the connection during IDLE"))
	}
	return s.idleCaught || s.restarts >= s.o.restarts+20
}

// stall hangs the network between the host and Dovecot for a few seconds:
// nothing moves, nothing closes.
func (s *siege) stall() {
	s.h.sleep(time.Duration(500+s.rng.IntN(2000)) * time.Millisecond)
	from := time.Now()
	s.imap.Stall()
	s.h.sleep(time.Duration(3000+s.rng.IntN(5000)) * time.Millisecond)
	s.imap.Resume()
	s.stalls++
	s.outage(from)
}

// sent is every message the test sent to the host.
func (s *siege) sent() (genuine []*killMsg, special []*attackMsg) {
	s.mu.Lock()
	drivers := slices.Clone(s.drivers)
	s.mu.Unlock()
	for _, d := range drivers {
		d.mu.Lock()
		genuine = append(genuine, d.sent...)
		d.mu.Unlock()
	}
	s.atk.mu.Lock()
	special = slices.Clone(s.atk.msgs)
	s.atk.mu.Unlock()
	return genuine, special
}

// waitDrained waits, with the host running, until every message sent was
// decided, every game is over and the outbox is empty.
func (s *siege) waitDrained() {
	t := s.t
	t.Helper()
	end := time.Now().Add(2 * s.o.wait)
	var why string
	for time.Now().Before(end) {
		s.h.alive()
		genuine, special := s.sent()
		if why = s.view.undrained(len(genuine) + len(special)); why == "" {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the host did not finish its work in %v: %s\n%s", 2*s.o.wait, why, s.h.logTail())
}

// waitRead waits until the readers have read every message delivered.
func (s *siege) waitRead() {
	t := s.t
	t.Helper()
	for _, r := range s.readers {
		end := time.Now().Add(s.o.wait)
		for {
			total := mailboxSize(t, s.stack.IMAPAddr(), r.user)
			r.mu.Lock()
			seen, last := r.seen, r.last
			r.mu.Unlock()
			if seen >= total {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("the %s mailbox holds %d messages; its reader read %d (last error %v)", r.user, total, seen, last)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// mailboxSize counts the messages in user's INBOX.
func mailboxSize(t *testing.T, addr, user string) int {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, siegePassword).Wait(); err != nil {
		t.Fatal(err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatal(err)
	}
	return int(sel.NumMessages)
}
