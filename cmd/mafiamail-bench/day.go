package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/mail/command"
)

// The day load plays what a game's Day is made of, by weight, instead of
// STATUS alone. Of every 100 messages:
//
//	55 discussion posts to the town thread (300 bytes to 2.2 KB of plain text)
//	13 posts to the mafia list (200 to 800 bytes; from Mafiosi only)
//	20 votes, VOTE Name, to the thread
//	 7 unvotes, UNVOTE, to the thread
//	 5 locks, LOCK (after VOTE Name in the same message when there is no
//	   unlocked vote to lock), to the thread
//
// Votes go to the thread, as the rules have them (a VOTE in the private
// channel is refused as misplaced). A few players in each game take the
// thread in digests: the setup gathers the thread every --digest-every, and
// every other player asks for each post with MAIL EACH before the load, so
// that both one-by-one copies and digests are composed. The digest players
// are never voted for and never lock: a day closes early once everyone
// with no votes on them has locked, and the load must not end the day
// (nor reach the night: a Day at speed 1 lasts 36 hours).
//
// What a message's latency is, from its hand-over to SMTP:
//   - a vote, unvote or lock: to its answer in the sender's mailbox: the
//     sender's own thread copy, which the host makes the answer ("Your
//     message: VOTE Plb done"), or a private confirmation for a digest
//     reader;
//   - a post (thread or mafia list): to its first copy in any reader's
//     mailbox; every post carries a marker, [bN], on its first line.
//
// Every message that reaches a mailbox of the players' (players and
// referee, copies, digests and answers alike) is a delivery. The mix and
// the sizes are drawn from a seed, the same for the host and the relay.
const (
	weightPost      = 55
	weightMafiaPost = 13
	weightVote      = 20
	weightUnvote    = 7
	weightLock      = 5
)

// dayMix is the mix as the table's header gives it.
const dayMix = "55% thread posts, 13% mafia-list posts, 20% votes, 7% unvotes, 5% locks"

// defaultDigestEvery is the setup's digest interval in the day load:
// hours in a real game, seconds here, so that digests are composed in a
// run of a minute.
const defaultDigestEvery = 10 * time.Second

type dayOp int

const (
	opPost dayOp = iota
	opMafiaPost
	opVote
	opUnvote
	opLock
	dayOps
)

var dayOpNames = [dayOps]string{"thread post", "mafia post", "vote", "unvote", "lock"}

func (op dayOp) isPost() bool { return op == opPost || op == opMafiaPost }

// drawOp draws an operation by the mix's weights.
func drawOp(r *rand.Rand) dayOp {
	n := r.IntN(weightPost + weightMafiaPost + weightVote + weightUnvote + weightLock)
	for op, w := range []int{weightPost, weightMafiaPost, weightVote, weightUnvote, weightLock} {
		if n < w {
			return dayOp(op)
		}
		n -= w
	}
	return opPost
}

// dayPlayer is a player's part in the day load, kept by the worker that
// holds the player (one message in flight per player).
type dayPlayer struct {
	thread atomic.Pointer[string] // the player's way into the town thread
	mafia  atomic.Pointer[string] // a Mafioso's way into the mafia list
	// pending is the Message-ID of the command in flight: the relay's
	// copy to its sender answers it (In-Reply-To).
	pending atomic.Pointer[string]
	// digest says the player takes the thread in digests: set while
	// the mail of the games' start still arrives, and read by the
	// stack's delivery hook.
	digest atomic.Bool
	vote   string // the current vote, "" for none
	locked bool
}

// dayState is the day load's shared state in one phase.
type dayState struct {
	// digests is how many players of each game take digests: the last
	// ones of the game.
	digests int
	// targets is how many players of each game, the first ones, are voted
	// for.
	targets int
	mafiaN  int // Mafiosi per game
	isHost  bool

	mu    sync.Mutex
	posts map[int64]*postWait
	ref   atomic.Int64
	// digestCopies counts the thread mail that reached digest readers, the
	// referee among them: their digests (their votes are answered in
	// private).
	digestCopies atomic.Int64
}

// postWait follows one post's copies.
type postWait struct {
	op      dayOp
	want    int // the readers the host sends it to at once
	first   time.Time
	arrived chan time.Time
	copies  int
}

func newDayState(players int, isHost bool) *dayState {
	d := max(1, players/8)
	return &dayState{digests: d, targets: min(6, players-d), mafiaN: mafiaCount(players), isHost: isHost,
		posts: map[int64]*postWait{}}
}

// mafiaCount is how many Mafiosi the bench's setup for so many players
// has (benchSetup).
func mafiaCount(players int) int {
	switch players {
	case 25:
		return 7
	case 11:
		return 3
	}
	return max(1, players/4)
}

// daySetup is the setup the day load's games are created with.
func daySetup(o benchOptions) string {
	return fmt.Sprintf("%s digest_interval=%ds", benchSetup(o.players), int(o.digestEvery.Seconds()))
}

var (
	markerRE   = regexp.MustCompile(`\[b([0-9]+)\]`)
	mafiaRE    = regexp.MustCompile(`(?i)host\+[a-z0-9]+-m-[a-z0-9]+@[a-z0-9.-]+`)
	yourAnswer = []byte("Your message:")
)

// seen notes what the day load learns from one message in player p's
// mailbox: the player's thread and mafia list addresses, the answer to a
// command in flight, a post's copy. It reports whether the message
// answers p's command.
func (d *dayState) seen(p *benchPlayer, m delivered) (answer bool) {
	if p.day.thread.Load() == nil {
		if rt := m.replyTo(); strings.Contains(rt, "-t-") {
			p.day.thread.Store(&rt)
		}
	}
	if m.kind == "role" && p.day.mafia.Load() == nil {
		if a := mafiaRE.Find(m.text()); a != nil {
			s := strings.ToLower(string(a))
			p.day.mafia.Store(&s)
		}
	}
	if m.kind == "thread" || m.kind == "mafia" || m.kind == "" {
		text := m.text()
		if d.isHost && m.kind == "thread" && bytes.Contains(text, yourAnswer) {
			answer = true
		}
		if !d.isHost {
			if id := p.day.pending.Load(); id != nil && m.inReplyTo() == *id {
				answer = true
			}
		}
		if p.day.digest.Load() && m.kind == "thread" && !answer {
			// A digest: the posts it gathers are not counted as copies,
			// which are the posts' mail one by one.
			d.digestCopies.Add(1)
		} else {
			d.copy(m)
		}
	}
	return answer
}

// refereeSeen notes a message in the referee's mailbox. The day load's
// games have a digest interval, so the referee, whom the setup's interval
// applies to (T1), reads the thread in digests: none of its thread mail is
// a post's copy, though a digest carries the markers of the posts it
// gathers.
func (d *dayState) refereeSeen(m delivered) {
	if m.kind == "thread" {
		d.digestCopies.Add(1)
		return
	}
	d.copy(m)
}

// copy counts a post's copy, in a player's mailbox, by the marker on the
// post's first line.
func (d *dayState) copy(m delivered) {
	if sub := markerRE.FindSubmatch(m.text()); sub != nil {
		if n, err := strconv.ParseInt(string(sub[1]), 10, 64); err == nil {
			d.copied(n, m.at)
		}
	}
}

func (d *dayState) copied(ref int64, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.posts[ref]
	if w == nil {
		return
	}
	w.copies++
	if w.first.IsZero() {
		w.first = at
		w.arrived <- at
	}
}

// newPost registers a post about to be sent and returns its marker.
func (d *dayState) newPost(op dayOp) (int64, *postWait) {
	ref := d.ref.Add(1)
	w := &postWait{op: op, arrived: make(chan time.Time, 1)}
	d.mu.Lock()
	d.posts[ref] = w
	d.mu.Unlock()
	return ref, w
}

// copies counts the copies of every post after marker from, and the
// posts, by kind of post, and the posts that reached fewer readers than
// the host sends them to at once, and more.
func (d *dayState) copies(from int64) (copies, posts [dayOps]int, short, long int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for ref, w := range d.posts {
		if ref > from {
			copies[w.op] += w.copies
			posts[w.op]++
			switch {
			case w.copies < w.want:
				short++
			case w.copies > w.want:
				long++
			}
		}
	}
	return copies, posts, short, long
}

// gamePlayers are the players of player p's game.
func (e *benchEnv) gamePlayers(p *benchPlayer, players int) []*benchPlayer {
	return e.players[p.game*players : (p.game+1)*players]
}

// isDigest reports whether the i-th player of a game takes digests.
func (d *dayState) isDigest(i, players int) bool { return i >= players-d.digests }

// prepareDay learns every player's thread address, and each Mafioso's
// mafia list, from the mail of the games' start, and has every player
// who does not take digests ask for each post. For the relay, the
// addresses are the relay's and the first Mafioso-many players of a game
// are its Mafia.
func prepareDay(ctx context.Context, e *benchEnv, o benchOptions, child *benchChild) error {
	d := e.day
	for i, p := range e.players {
		p.day.digest.Store(d.isDigest(i%o.players, o.players))
	}
	if !d.isHost {
		relay := e.address("relay")
		for i, p := range e.players {
			p.day.thread.Store(&relay)
			if i%o.players < d.mafiaN {
				p.day.mafia.Store(&relay)
			}
		}
		return nil
	}
	if err := poll(ctx, func() bool {
		if child.exited() != nil {
			return true
		}
		mafia := make([]int, len(e.players)/o.players)
		for _, p := range e.players {
			if p.day.thread.Load() == nil {
				return false
			}
			if p.day.mafia.Load() != nil {
				mafia[p.game]++
			}
		}
		for _, n := range mafia {
			if n < d.mafiaN {
				return false
			}
		}
		return true
	}); err != nil {
		return fmt.Errorf("not every player knows the thread, or not every Mafioso the mafia list: %w", err)
	}
	if err := child.exited(); err != nil {
		return err
	}
	var each []*benchPlayer
	for _, p := range e.players {
		if !p.day.digest.Load() {
			each = append(each, p)
		}
	}
	return sendAll(ctx, e, each, child, "MAIL EACH")
}

// sendAll sends body to every player's private channel, a few at a time,
// and waits for each answer.
func sendAll(ctx context.Context, e *benchEnv, ps []*benchPlayer, child *benchChild, body string) error {
	work := make(chan *benchPlayer)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range min(8, len(ps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialSMTP(e.stack.smtpAddr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for p := range work {
				for len(p.arrived) > 0 {
					<-p.arrived
				}
				if err := sendMail(c, p.addr, *p.to.Load(), "bench.mail."+p.addr, body); err != nil {
					errs <- err
					return
				}
				select {
				case a := <-p.arrived:
					if a.kind != "confirm" {
						errs <- fmt.Errorf("%s: %s answered with an error", p.addr, body)
						return
					}
				case <-time.After(2 * time.Minute):
					errs <- errors.Join(fmt.Errorf("%s: no answer to %s in two minutes", p.addr, body), child.exited())
					return
				case <-ctx.Done():
					errs <- ctx.Err()
					return
				}
			}
		}()
	}
	go func() {
		defer close(work)
		for _, p := range ps {
			select {
			case work <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	return errors.Join(drain(errs)...)
}

// dayMessage is one message of the day load, ready to send.
type dayMessage struct {
	op   dayOp
	to   string
	body string
	// fanout lists, for the relay, every address the host would send the
	// message's news to at once.
	fanout []string
	// readers is how many mailboxes the message's news reaches at once.
	readers int
	ref     int64
	wait    *postWait
}

// nextMessage makes player p's next message for op (which it may change
// to fit the player: a digest reader does not lock, an UNVOTE needs a
// vote) and updates what the bench believes of p's vote.
func nextMessage(e *benchEnv, o benchOptions, p *benchPlayer, op dayOp, r *rand.Rand) dayMessage {
	d := e.day
	game := e.gamePlayers(p, o.players)
	if op == opMafiaPost && p.day.mafia.Load() == nil {
		op = opPost
	}
	if op == opLock && p.day.digest.Load() {
		op = opVote
	}
	if op == opUnvote && (p.day.vote == "" || p.day.locked) {
		op = opVote
	}
	m := dayMessage{op: op, to: *p.day.thread.Load()}
	vote := func() string {
		var cands []string
		for _, q := range game[:d.targets] {
			if q != p && q.name != p.day.vote {
				cands = append(cands, q.name)
			}
		}
		t := cands[r.IntN(len(cands))]
		p.day.vote, p.day.locked = t, false
		return "VOTE " + t
	}
	switch op {
	case opPost, opMafiaPost:
		m.ref, m.wait = d.newPost(op)
		if op == opMafiaPost {
			m.to = *p.day.mafia.Load()
			m.body = discussion(r, m.ref, 200+r.IntN(600))
		} else {
			m.body = discussion(r, m.ref, postSize(r))
		}
	case opVote:
		m.body = vote()
	case opUnvote:
		m.body = "UNVOTE"
		p.day.vote = ""
	case opLock:
		if p.day.vote == "" || p.day.locked {
			m.body = vote() + "\r\nLOCK"
		} else {
			m.body = "LOCK"
		}
		p.day.locked = true
	}
	readers := fanout(e, o, p, op)
	if m.wait != nil {
		m.wait.want = len(readers)
	}
	if !d.isHost {
		m.fanout = readers
	}
	m.readers = len(readers)
	return m
}

// fanout is whom the host sends a message's news to at once, as the
// day load's games are set up: a thread message (post or vote) reaches
// every player who takes each post, its sender included; a vote from a
// digest reader reaches its sender too (the host's private answer); a
// mafia list post reaches the other Mafiosi. The host sends the referee
// no copy of either, and neither does the relay.
func fanout(e *benchEnv, o benchOptions, p *benchPlayer, op dayOp) []string {
	var to []string
	for _, q := range e.gamePlayers(p, o.players) {
		switch {
		case op == opMafiaPost && (q == p || q.day.mafia.Load() == nil):
		case op != opMafiaPost && q.day.digest.Load() && (q != p || op.isPost()):
		default:
			to = append(to, q.addr)
		}
	}
	return to
}

// postSize draws the length of a thread post: mostly a paragraph or two,
// now and then a long one.
func postSize(r *rand.Rand) int {
	switch n := r.IntN(10); {
	case n < 6:
		return 300 + r.IntN(400)
	case n < 9:
		return 700 + r.IntN(700)
	default:
		return 1400 + r.IntN(800)
	}
}

// discussionWords are sentences as players write them. A word that is a
// verb the host reads would make a command of the line it starts
// (discussion checks every post against the parser).
var discussionWords = strings.Fields(`I have been reading the thread again and something about the quiet
players bothers me. Nobody who talks this little is doing it by accident. Look at who jumped on the
first wagon and then went silent once it had momentum. That is the kind of thing the scum would do
when they think nobody is watching. To be fair, it could just be a busy week at work for them.
Still, I would rather hear from them before tomorrow than guess. My read on the early pushes
is that at least one of them is town trying too hard. The other one felt like someone testing the
waters to see who would follow. Can we get some reasons instead of one line posts? I am not
convinced by the case so far, it leans on tone more than on anything anyone actually said.
If you go back to page two, the timing of those replies is odd. Two people agreed within a minute
of each other after a long silence. Maybe coincidence. I keep a list of who defended whom and it
is getting interesting. Happy to share it later today. Honestly the wagon on the loud player looks
like an easy way out for the town, and easy ways out are usually what the other side wants.
I think we should slow down and talk this through properly.`)

// discussion writes a post of about size bytes: its marker on the first
// line, then sentences wrapped at 72 characters in paragraphs. A post in
// which the parser would find a command is written again from another
// word.
func discussion(r *rand.Rand, ref int64, size int) string {
	for {
		text := discussionFrom(r, ref, size)
		t, m := command.Parse(text, command.Thread), command.Parse(text, command.Mafia)
		if t.Lines() == 0 && m.Lines() == 0 {
			return text
		}
	}
}

func discussionFrom(r *rand.Rand, ref int64, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[b%d]\r\n", ref)
	line := 0
	i := r.IntN(len(discussionWords))
	for b.Len() < size {
		w := discussionWords[i%len(discussionWords)]
		i++
		if line > 0 && line+1+len(w) > 72 {
			b.WriteString("\r\n")
			line = 0
			if r.IntN(6) == 0 {
				b.WriteString("\r\n")
			}
		}
		if line > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// dayMailText is mailText with, for the relay, the fan-out header.
func dayMailText(from string, m dayMessage, id string) []byte {
	raw := mailText(from, m.to, id, m.body)
	if len(m.fanout) == 0 {
		return raw
	}
	// Folded after every address: 25 addresses would overrun a line.
	h := "X-Bench-Fanout: " + strings.Join(m.fanout, ",\r\n ") + "\r\n"
	return append([]byte(h), raw...)
}

// measureDay sends o.commands messages of the day's mix, o.inFlight at a
// time, each from a player with nothing in flight, and times each as the
// comment on the mix's weights says.
func measureDay(ctx context.Context, e *benchEnv, o benchOptions, child *benchChild, f *figures, seed uint64) error {
	d := e.day
	freeMafia := make(chan *benchPlayer, len(e.players))
	freeTown := make(chan *benchPlayer, len(e.players))
	for _, p := range e.players {
		if p.day.mafia.Load() != nil {
			freeMafia <- p
		} else {
			freeTown <- p
		}
	}
	release := func(p *benchPlayer) {
		if p.day.mafia.Load() != nil {
			freeMafia <- p
		} else {
			freeTown <- p
		}
	}
	workers := min(o.inFlight, len(e.players), o.commands)
	var issued atomic.Int64
	var mu sync.Mutex
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	// The copies of what came before (the warm-up) would count as this
	// run's deliveries.
	quiet(ctx, e, time.Second)
	refs := d.ref.Load()
	d0, dg0 := e.toPlayers.Load(), d.digestCopies.Load()
	cpu0 := child.cpu()
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
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
				op := drawOp(r)
				var p *benchPlayer
				if op == opMafiaPost {
					select {
					case p = <-freeMafia:
					case <-ctx.Done():
						return
					}
				} else {
					select {
					case p = <-freeTown:
					case p = <-freeMafia:
					case <-ctx.Done():
						return
					}
				}
				lat, refused, err := dayCommand(ctx, e, o, c, p, op, r, n)
				if err != nil {
					errs <- errors.Join(err, child.exited())
					return
				}
				mu.Lock()
				f.commands++
				f.fanout += int64(lat.readers)
				if refused == "" {
					f.latencies = append(f.latencies, lat.d)
					if f.byOp == nil {
						f.byOp = map[dayOp][]time.Duration{}
					}
					f.byOp[lat.op] = append(f.byOp[lat.op], lat.d)
				} else {
					f.errors++
					if len(f.refusals) < 3 {
						f.refusals = append(f.refusals, refused)
					}
				}
				mu.Unlock()
				release(p)
			}
		}()
	}
	wg.Wait()
	f.wall = time.Since(start)
	close(errs)
	if err := errors.Join(drain(errs)...); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The copies of the last posts are still on their way: the deliveries
	// are counted until the mailboxes are quiet.
	last := quiet(ctx, e, time.Second)
	f.cpu = child.cpu() - cpu0
	f.deliveries = e.toPlayers.Load() - d0
	f.deliveryWall = last.Sub(start)
	f.postCopies, f.posts, f.shortPosts, f.longPosts = d.copies(refs)
	f.digests = d.digestCopies.Load() - dg0
	if f.errors > 0 {
		return fmt.Errorf("%d of %d messages were answered with an error: %s", f.errors, f.commands, strings.Join(f.refusals, "; "))
	}
	return nil
}

type opLatency struct {
	op      dayOp
	d       time.Duration
	readers int // of the message (dayMessage.readers)
}

// dayCommand sends player p's next message and waits for its first
// effect; refused says what, when the answer was an error.
func dayCommand(ctx context.Context, e *benchEnv, o benchOptions, c *smtp.Client, p *benchPlayer, op dayOp, r *rand.Rand, n int64) (lat opLatency, refused string, err error) {
	for len(p.arrived) > 0 {
		<-p.arrived // an answer to something earlier
	}
	m := nextMessage(e, o, p, op, r)
	id := fmt.Sprintf("day.%d.%d", n, time.Now().UnixNano())
	raw := dayMailText(p.addr, m, id)
	if !m.op.isPost() {
		msgID := headerValue(raw, "Message-ID")
		p.day.pending.Store(&msgID)
		defer p.day.pending.Store(nil)
	}
	t0 := time.Now()
	if err := c.SendMail(p.addr, []string{m.to}, bytes.NewReader(raw)); err != nil {
		return lat, "", fmt.Errorf("send %s from %s: %w", id, p.addr, err)
	}
	var at time.Time
	kind, text := "", ""
	timeout := time.After(2 * time.Minute)
	if m.op.isPost() {
		select {
		case at = <-m.wait.arrived:
			kind = "confirm"
		case <-timeout:
			return lat, "", fmt.Errorf("no copy of %s's %s %d in two minutes", p.addr, dayOpNames[m.op], m.ref)
		case <-ctx.Done():
			return lat, "", ctx.Err()
		}
	} else {
		select {
		case a := <-p.arrived:
			at, kind, text = a.at, a.kind, a.text
		case <-timeout:
			return lat, "", fmt.Errorf("no answer to %s's %s (%q) in two minutes", p.addr, dayOpNames[m.op], m.body)
		case <-ctx.Done():
			return lat, "", ctx.Err()
		}
	}
	lat = opLatency{op: m.op, readers: m.readers}
	if kind != "confirm" {
		return lat, fmt.Sprintf("%s's %q: %q", p.name, m.body, text), nil
	}
	lat.d = at.Sub(t0)
	return lat, "", nil
}

// quiet waits until no message has reached a mailbox for the given time
// (at most a minute), and returns when the last one did.
func quiet(ctx context.Context, e *benchEnv, gap time.Duration) time.Time {
	deadline := time.Now().Add(time.Minute)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		last := time.Unix(0, e.lastDelivery.Load())
		if time.Since(last) >= gap {
			return last
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return time.Unix(0, e.lastDelivery.Load())
}

// stackRate hands the stack, with no system in between, the copies a run
// of the day load makes (o.commands messages of the mix, each to its
// fan-out, one copy a recipient, as the host sends them), over as many
// connections as the host's sender uses, and returns the deliveries per
// second from the first hand-over to the last arrival.
func stackRate(ctx context.Context, e *benchEnv, o benchOptions, seed uint64) (float64, error) {
	r := rand.New(rand.NewPCG(seed, 1<<32))
	var msgs []benchMail
	for i := range o.commands {
		p := e.players[r.IntN(len(e.players))]
		op := drawOp(r)
		m := nextMessage(e, o, p, op, r)
		for _, to := range fanout(e, o, p, m.op) {
			msgs = append(msgs, benchMail{from: p.addr, to: to, raw: mailText(p.addr, to, fmt.Sprintf("stack.%d", i), m.body)})
		}
	}
	const conns = 4 // the host's sender's default
	work := make(chan benchMail)
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	base := e.toPlayers.Load()
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialSMTP(e.stack.smtpAddr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for m := range work {
				if err := c.SendMail(m.from, []string{m.to}, bytes.NewReader(m.raw)); err != nil {
					errs <- fmt.Errorf("hand a copy to the stack: %w", err)
					return
				}
			}
		}()
	}
	func() {
		defer close(work)
		for _, m := range msgs {
			select {
			case work <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	if err := errors.Join(drain(errs)...); err != nil {
		return 0, err
	}
	want := base + int64(len(msgs))
	if err := poll(ctx, func() bool { return e.toPlayers.Load() >= want }); err != nil {
		return 0, fmt.Errorf("stack alone: %d of %d copies arrived: %w", e.toPlayers.Load()-base, len(msgs), err)
	}
	last := time.Unix(0, e.lastDelivery.Load())
	return float64(len(msgs)) / last.Sub(start).Seconds(), nil
}

// dayRows are the figures of the day load's per-scale table.
var dayRows = []benchRow{
	{"p50", ms, func(f figures) float64 { return float64(f.quantile(.5)) }},
	{"p95", ms, func(f figures) float64 { return float64(f.quantile(.95)) }},
	{"p99", ms, func(f figures) float64 { return float64(f.quantile(.99)) }},
	{"p50 vote/unvote/lock", ms, func(f figures) float64 { return float64(f.commandQuantile(.5)) }},
	{"p99 vote/unvote/lock", ms, func(f figures) float64 { return float64(f.commandQuantile(.99)) }},
	{"p50 thread post", ms, func(f figures) float64 { return float64(f.opQuantile(opPost, .5)) }},
	{"p99 thread post", ms, func(f figures) float64 { return float64(f.opQuantile(opPost, .99)) }},
	{"p50 mafia post", ms, func(f figures) float64 { return float64(f.opQuantile(opMafiaPost, .5)) }},
	{"one mail hop", ms, func(f figures) float64 { return float64(f.hop) }},
	{"commands/s", perSec, figures.perSecond},
	{"deliveries/s", perSec, figures.deliveriesPerSecond},
	{"deliveries/command", plain, func(f figures) float64 {
		if f.commands == 0 {
			return 0
		}
		return float64(f.deliveries) / float64(f.commands)
	}},
	{"copies/thread post", plain, func(f figures) float64 { return f.copiesPerPost(opPost) }},
	{"copies/mafia post", plain, func(f figures) float64 { return f.copiesPerPost(opMafiaPost) }},
	{"digests", func(v float64) string { return fmt.Sprintf("%.0f", v) }, func(f figures) float64 { return float64(f.digests) }},
	{"CPU/command", ms, func(f figures) float64 { return float64(f.cpuPerCommand()) }},
	{"peak RSS", mib, func(f figures) float64 { return float64(f.peakRSS) }},
	{"peak heap in use", mib, func(f figures) float64 { return float64(f.peakHeap) }},
	{"live heap", mib, func(f figures) float64 { return float64(f.liveHeap) }},
}

// copiesPerPost is how many mailboxes a post of the kind reached on
// average.
func (f figures) copiesPerPost(op dayOp) float64 {
	if f.posts[op] == 0 {
		return 0
	}
	return float64(f.postCopies[op]) / float64(f.posts[op])
}

// commandQuantile is a quantile of the votes', unvotes' and locks'
// latencies.
func (f figures) commandQuantile(q float64) time.Duration {
	var all []time.Duration
	for _, op := range []dayOp{opVote, opUnvote, opLock} {
		all = append(all, f.byOp[op]...)
	}
	return figures{latencies: all}.quantile(q)
}

func printDayHeader(w io.Writer, o benchOptions, how string) {
	fmt.Fprintf(w, "\nmafiamail-bench: %d players a game, %d messages a scale (a Day: %s), %d in flight;\n"+
		"mail stack: %s.\n"+
		"Votes, unvotes and locks go to the town thread, posts to the thread (300 B to 2.2 KB) or the mafia list\n"+
		"(200 to 800 B); %d player(s) a game take the thread in digests (setup digest_interval=%v), the others\n"+
		"every post (MAIL EACH). Latency: SMTP hand-over to the first effect in a mailbox: for a vote, unvote or\n"+
		"lock its answer to the sender (the sender's own thread copy, or a private confirmation for a digest\n"+
		"reader); for a post its first copy in any reader's mailbox. A delivery is any message reaching any\n"+
		"player's or the referee's mailbox (copies, digests, answers), counted from the first hand-over until\n"+
		"the mailboxes are quiet. The relay copies each thread message and mafia-list post to the readers the\n"+
		"bench names (X-Bench-Fanout: whom the host sends it to at once) and composes no digests.\n"+
		"The host (mafiamail serve) and the relay each run in a process of their own: CPU is that process's,\n"+
		"peak RSS its VmHWM from its start (game set-up included), heaps as it reports them (live: after a GC).\n",
		o.players, o.commands, dayMix, o.inFlight, how, newDayState(o.players, true).digests, o.digestEvery)
}

// printStackRate prints the stack's own delivery rate beside the host's
// and the relay's.
func printStackRate(w io.Writer, runs []scaleResult, o benchOptions) {
	stack := column(runs, false, func(f figures) float64 { return f.stackRate })
	host := column(runs, true, figures.deliveriesPerSecond)
	relay := column(runs, false, figures.deliveriesPerSecond)
	fmt.Fprintf(w, "stack alone (the same copies handed to it over 4 connections, no system in between): %s deliveries/s;\n"+
		"host/stack %s, relay/stack %s\n", spreadOf(stack).cell(perSec, o.runs),
		spreadOf(ratios(host, stack)).cell(plain, o.runs), spreadOf(ratios(relay, stack)).cell(plain, o.runs))
}
