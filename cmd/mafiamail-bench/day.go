package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/mail/command"
)

// The day load plays what a game's Day and Night are made of, by weight,
// instead of STATUS alone. Every other game is at night: its referee
// closes Day 1 as soon as the game starts, with no votes, so no one is
// eliminated and the night begins (a night ends at a 6-hour mark at the
// earliest, so it lasts the run). A host with many games sees some at day
// and some at night. Of every 100 messages:
//
//	50 discussion posts to the town thread (300 bytes to 2.2 KB of plain text)
//	13 posts to the mafia list (200 to 800 bytes; from Mafiosi only)
//	16 votes, VOTE Name, to the thread (in a game at day)
//	 6 unvotes, UNVOTE, to the thread (at day)
//	 4 locks, LOCK (after VOTE Name in the same message when there is no
//	   unlocked vote to lock), to the thread (at day)
//	 5 whacks, KILL Name or now and then NO KILL, from a Mafioso to the
//	   private channel (at night)
//	 2 inspections, INSPECT Name, from an Inspector (at night)
//	 2 protections, PROTECT Name, from the Doctor (at night)
//	 2 shots, SHOOT Name or PASS, from the Vigilante (at night)
//
// A message is sent by a player who can send it: a free player of the
// game's phase and the role the message needs. A night action the games'
// setup has no role for (a custom setup without an Inspector) is a thread
// post instead. Votes go to the thread, as the rules have them (a VOTE in
// the private channel is refused as misplaced), night actions to the
// private channel. A few players in each game take the thread in digests:
// the setup gathers the thread every --digest-every, and every other
// player asks for each post with MAIL EACH before the load, so that both
// one-by-one copies and digests are composed. The digest players are
// never voted for and never lock: a day closes early once everyone with
// no votes on them has locked, and the load must not end the day (nor
// reach the night: a Day at speed 1 lasts 36 hours).
//
// What a message's latency is, from its hand-over to SMTP:
//   - a vote, unvote or lock: to its answer in the sender's mailbox: the
//     sender's own thread copy, which the host makes the answer ("Your
//     message: VOTE Plb done"), or a private confirmation for a digest
//     reader;
//   - a night action: to its confirmation in the sender's mailbox;
//   - a post (thread or mafia list): to its first copy in any reader's
//     mailbox; every post carries a marker, [bN], on its first line.
//
// Every message that reaches a mailbox of the players' (players and
// referee, copies, digests and answers alike) is a delivery. The mix and
// the sizes are drawn from a seed, the same for the host and the relay.
const (
	weightPost      = 50
	weightMafiaPost = 13
	weightVote      = 16
	weightUnvote    = 6
	weightLock      = 4
	weightKill      = 5
	weightInspect   = 2
	weightProtect   = 2
	weightShoot     = 2
)

// dayMix is the mix as the table's header gives it.
const dayMix = "50% thread posts, 13% mafia-list posts, 16% votes, 6% unvotes, 4% locks, " +
	"5% whacks, 2% each inspections, protections and shots; half the games at night"

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
	opKill
	opInspect
	opProtect
	opShoot
	dayOps
)

var (
	dayOpNames  = [dayOps]string{"thread post", "mafia post", "vote", "unvote", "lock", "whack", "inspection", "protection", "shot"}
	dayOpWeight = [dayOps]int{weightPost, weightMafiaPost, weightVote, weightUnvote, weightLock,
		weightKill, weightInspect, weightProtect, weightShoot}
)

func (op dayOp) isPost() bool { return op == opPost || op == opMafiaPost }

// isNight says the message is a night action.
func (op dayOp) isNight() bool { return op >= opKill }

// drawOp draws an operation by the mix's weights.
func drawOp(r *rand.Rand) dayOp {
	total := 0
	for _, w := range dayOpWeight {
		total += w
	}
	n := r.IntN(total)
	for op, w := range dayOpWeight {
		if n < w {
			return dayOp(op)
		}
		n -= w
	}
	return opPost
}

// nightRole is a player's role as far as the load's night actions go.
type nightRole int32

const (
	roleUnknown nightRole = iota // the role mail has not arrived
	roleTown
	roleMafia
	roleInspector
	roleDoctor
	roleVigilante
)

// roleWords are the roles as the role mail names them.
var roleWords = map[string]nightRole{"mafia": roleMafia, "inspector": roleInspector, "doctor": roleDoctor, "vigilante": roleVigilante}

// playerClass is what a player can send: their game's phase and their
// role.
type playerClass struct {
	night bool
	role  nightRole
}

// can says whether a player of the class can send the message.
func (c playerClass) can(op dayOp) bool {
	switch op {
	case opPost:
		return true
	case opMafiaPost:
		return c.role == roleMafia
	case opVote, opUnvote, opLock:
		return !c.night
	case opKill:
		return c.night && c.role == roleMafia
	case opInspect:
		return c.night && c.role == roleInspector
	case opProtect:
		return c.night && c.role == roleDoctor
	case opShoot:
		return c.night && c.role == roleVigilante
	}
	return false
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
	// role is learnt from the role mail (the relay's players get theirs
	// from the bench); night says the player's game is at night.
	role   atomic.Int32
	night  bool
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
	// digestsAt are when thread mail reached a digest reader, the referee
	// among them (under mu): their digests (their votes are answered in
	// private). lastMail is when the last message other than a digest
	// reached a player or the referee, in Unix nanoseconds. The load's
	// deliveries are counted until its last copy or answer: the digests
	// the games' clock sends after it are the digest interval's, not the
	// load's.
	digestsAt []time.Time
	lastMail  atomic.Int64
}

// digest counts a digest that arrived at at.
func (d *dayState) digest(at time.Time) {
	d.mu.Lock()
	d.digestsAt = append(d.digestsAt, at)
	d.mu.Unlock()
}

// digestCount is how many digests arrived so far.
func (d *dayState) digestCount() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return int64(len(d.digestsAt))
}

// digestsAfter is how many digests arrived after t.
func (d *dayState) digestsAfter(t time.Time) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var n int64
	for _, at := range d.digestsAt {
		if at.After(t) {
			n++
		}
	}
	return n
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

// townRoles are the roles with a night action other than the Mafia's in
// the bench's setup for so many players (benchSetup), in the order the
// relay's players are given them after the Mafiosi.
func townRoles(players int) []nightRole {
	switch players {
	case 25:
		return []nightRole{roleInspector, roleDoctor, roleVigilante}
	case 11:
		return []nightRole{roleInspector}
	}
	return nil
}

// atNight says whether the day load's game g is at night: every other
// game, the second first, so that two games have one of each.
func atNight(g int) bool { return g%2 == 1 }

// class is what player p can send.
func (p *benchPlayer) class() playerClass {
	return playerClass{night: p.day.night, role: nightRole(p.day.role.Load())}
}

// daySetup is the setup the day load's games are created with.
func daySetup(o benchOptions) string {
	return fmt.Sprintf("%s digest_interval=%ds", benchSetup(o.players), int(o.digestEvery.Seconds()))
}

var (
	markerRE   = regexp.MustCompile(`\[b([0-9]+)\]`)
	mafiaRE    = regexp.MustCompile(`(?i)host\+[a-z0-9]+-m-[a-z0-9]+@[a-z0-9.-]+`)
	roleRE     = regexp.MustCompile(`your role is ([A-Za-z]+)`)
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
	if m.kind == "role" && p.day.role.Load() == int32(roleUnknown) {
		if a := mafiaRE.Find(m.text()); a != nil && p.day.mafia.Load() == nil {
			s := strings.ToLower(string(a))
			p.day.mafia.Store(&s)
		}
		if w := roleRE.FindSubmatch(m.text()); w != nil {
			role, ok := roleWords[strings.ToLower(string(w[1]))]
			if !ok {
				role = roleTown
			}
			p.day.role.Store(int32(role))
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
			d.digest(m.at)
			return answer
		}
		d.copy(m)
	}
	keepLatest(&d.lastMail, m.at)
	return answer
}

// refereeSeen notes a message in the referee's mailbox. The day load's
// games have a digest interval, so the referee, whom the setup's interval
// applies to (T1), reads the thread in digests: none of its thread mail is
// a post's copy, though a digest carries the markers of the posts it
// gathers. (The relay's copies of night actions to the referee are marked
// as thread mail too, and are no digests.)
func (d *dayState) refereeSeen(m delivered) {
	if d.isHost && m.kind == "thread" {
		d.digest(m.at)
		return
	}
	keepLatest(&d.lastMail, m.at)
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

// prepareDay learns every player's thread address and role, and each
// Mafioso's mafia list, from the mail of the games' start, and has every
// player who does not take digests ask for each post. For the relay, the
// addresses are the relay's, the first Mafioso-many players of a game are
// its Mafia and the next ones have the setup's other night roles.
func prepareDay(ctx context.Context, e *benchEnv, o benchOptions, child *benchChild) error {
	d := e.day
	for i, p := range e.players {
		p.day.digest.Store(d.isDigest(i%o.players, o.players))
		p.day.night = atNight(p.game)
	}
	if !d.isHost {
		relay := e.address("relay")
		town := townRoles(o.players)
		for i, p := range e.players {
			p.day.thread.Store(&relay)
			role := roleTown
			switch n := i % o.players; {
			case n < d.mafiaN:
				p.day.mafia.Store(&relay)
				role = roleMafia
			case n-d.mafiaN < len(town):
				role = town[n-d.mafiaN]
			}
			p.day.role.Store(int32(role))
		}
		return nil
	}
	if err := poll(ctx, func() bool {
		if child.exited() != nil {
			return true
		}
		mafia := make([]int, len(e.players)/o.players)
		for _, p := range e.players {
			if p.day.thread.Load() == nil || p.day.role.Load() == int32(roleUnknown) {
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
		return fmt.Errorf("not every player knows the thread and their role, or not every Mafioso the mafia list: %w", err)
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
	case opKill, opInspect, opProtect, opShoot:
		m.to = *p.to.Load()
		m.body = nightAction(game, p, op, r)
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

// nightAction is the text of player p's night action: its command and a
// target of its game the rules allow (a whack names no Mafioso, and now
// and then no one: NO KILL; a Vigilante passes now and then).
func nightAction(game []*benchPlayer, p *benchPlayer, op dayOp, r *rand.Rand) string {
	target := func(self bool, skip func(*benchPlayer) bool) string {
		var names []string
		for _, q := range game {
			if (q != p || self) && !skip(q) {
				names = append(names, q.name)
			}
		}
		return names[r.IntN(len(names))]
	}
	none := func(*benchPlayer) bool { return false }
	switch op {
	case opKill:
		if r.IntN(8) == 0 {
			return "NO KILL"
		}
		return "KILL " + target(false, func(q *benchPlayer) bool { return q.day.mafia.Load() != nil })
	case opInspect:
		return "INSPECT " + target(false, none)
	case opProtect:
		return "PROTECT " + target(true, none)
	case opShoot:
		if r.IntN(3) == 0 {
			return "PASS"
		}
		return "SHOOT " + target(false, none)
	}
	panic(fmt.Sprintf("no night action for %s", dayOpNames[op]))
}

// fanout is whom the host sends a message's news to at once, as the
// day load's games are set up: a thread message (post or vote) reaches
// every player who takes each post, its sender included; a vote from a
// digest reader reaches its sender too (the host's private answer); a
// mafia list post reaches every Mafioso, its author included (the author's
// own copy, as a mailing list sends it). The host sends the referee
// no copy of either, and neither does the relay. A night action reaches
// its sender and the referee, a whack every Mafioso (N2) and the referee.
func fanout(e *benchEnv, o benchOptions, p *benchPlayer, op dayOp) []string {
	var to []string
	if op.isNight() {
		for _, q := range e.gamePlayers(p, o.players) {
			if q == p || op == opKill && q.day.mafia.Load() != nil {
				to = append(to, q.addr)
			}
		}
		return append(to, e.referee)
	}
	for _, q := range e.gamePlayers(p, o.players) {
		switch {
		case op == opMafiaPost && q.day.mafia.Load() == nil:
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
	free := newFreePlayers(e.players)
	workers := min(o.inFlight, len(e.players), o.commands)
	var issued atomic.Int64
	var mu sync.Mutex
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	// The copies of what came before (the warm-up) would count as this
	// run's deliveries.
	quiet(ctx, e, time.Second)
	refs := d.ref.Load()
	d0, dg0 := e.toPlayers.Load(), d.digestCount()
	cpu0 := child.cpu()
	machine := startMachineWindow()
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
				p, err := free.take(ctx, op)
				if p == nil && err == nil {
					op = opPost // no player of the games can send it
					p, err = free.take(ctx, op)
				}
				if err != nil {
					return
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
				free.put(p)
			}
		}()
	}
	wg.Wait()
	f.wall = time.Since(start)
	f.machineBusy = machine.share()
	close(errs)
	if err := errors.Join(drain(errs)...); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The copies of the last posts are still on their way: the deliveries
	// are counted until the last of them, or of the answers, once the
	// mailboxes are quiet. A digest that came later is left out, and so
	// is the time until it: the games' clock sends it when the interval
	// is up, whether the system is busy or idle, and waiting for it
	// would time the interval rather than the system.
	quiet(ctx, e, time.Second)
	f.machineCPU = machine.busyNanos()
	f.cpu = child.cpu() - cpu0
	end := time.Unix(0, d.lastMail.Load())
	f.lateDigests = d.digestsAfter(end)
	f.deliveries = e.toPlayers.Load() - d0 - f.lateDigests
	f.deliveryWall = end.Sub(start)
	f.postCopies, f.posts, f.shortPosts, f.longPosts = d.copies(refs)
	f.digests = d.digestCount() - dg0 - f.lateDigests
	if f.errors > 0 {
		return fmt.Errorf("%d of %d messages were answered with an error: %s", f.errors, f.commands, strings.Join(f.refusals, "; "))
	}
	return nil
}

// freePlayers are the players with nothing in flight, by what they can
// send.
type freePlayers map[playerClass]chan *benchPlayer

func newFreePlayers(ps []*benchPlayer) freePlayers {
	f := freePlayers{}
	for _, p := range ps {
		c := p.class()
		if f[c] == nil {
			f[c] = make(chan *benchPlayer, len(ps))
		}
		f[c] <- p
	}
	return f
}

// take waits for a free player who can send op and takes it; it returns
// no player and no error when none of the players can.
func (f freePlayers) take(ctx context.Context, op dayOp) (*benchPlayer, error) {
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}}
	for c, ch := range f {
		if c.can(op) {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
		}
	}
	if len(cases) == 1 {
		return nil, nil
	}
	i, v, _ := reflect.Select(cases)
	if i == 0 {
		return nil, ctx.Err()
	}
	return v.Interface().(*benchPlayer), nil
}

// put frees player p again.
func (f freePlayers) put(p *benchPlayer) { f[p.class()] <- p }

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
// (at most a minute).
func quiet(ctx context.Context, e *benchEnv, gap time.Duration) {
	deadline := time.Now().Add(time.Minute)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if time.Since(time.Unix(0, e.lastDelivery.Load())) >= gap {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stackRate hands the stack, with no system in between, the copies a run
// of the day load makes (o.commands messages of the mix, each to its
// fan-out, one copy a recipient, as the host sends them), over as many
// connections as the host's sender uses, and returns the deliveries per
// second from the first hand-over to the last arrival, and the machine's
// busy share and busy CPU time a copy meanwhile. Each copy is the
// player's message as the bench wrote it, not the host's composed copy
// (which adds the tally, the footer and an HTML part): the stack's rate
// for the copies' number and recipients.
func stackRate(ctx context.Context, e *benchEnv, o benchOptions, seed uint64) (rate, busy, cpu float64, err error) {
	r := rand.New(rand.NewPCG(seed, 1<<32))
	// Drawing the messages moves the players' votes in the bench's book,
	// though no system sees these: the book is put back after, so that
	// the system's load that follows draws what it would have.
	type ballot struct {
		vote   string
		locked bool
	}
	book := make([]ballot, len(e.players))
	for i, p := range e.players {
		book[i] = ballot{p.day.vote, p.day.locked}
	}
	var msgs []benchMail
	for i := range o.commands {
		op := drawOp(r)
		var can []*benchPlayer
		for _, q := range e.players {
			if q.class().can(op) {
				can = append(can, q)
			}
		}
		if len(can) == 0 {
			op, can = opPost, e.players
		}
		p := can[r.IntN(len(can))]
		m := nextMessage(e, o, p, op, r)
		for _, to := range fanout(e, o, p, m.op) {
			msgs = append(msgs, benchMail{from: p.addr, to: to, raw: mailText(p.addr, to, fmt.Sprintf("stack.%d", i), m.body)})
		}
	}
	for i, p := range e.players {
		p.day.vote, p.day.locked = book[i].vote, book[i].locked
	}
	const conns = 4 // the host's sender's default
	work := make(chan benchMail)
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	base := e.unmarked.Load()
	machine := startMachineWindow()
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
		return 0, 0, 0, err
	}
	want := base + int64(len(msgs))
	if err := poll(ctx, func() bool { return e.unmarked.Load() >= want }); err != nil {
		return 0, 0, 0, fmt.Errorf("stack alone: %d of %d copies arrived: %w", e.unmarked.Load()-base, len(msgs), err)
	}
	busy, cpu = machine.share(), machine.busyNanos()/float64(len(msgs))
	last := time.Unix(0, e.lastUnmarked.Load())
	return float64(len(msgs)) / last.Sub(start).Seconds(), busy, cpu, nil
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
	{"p50 night action", ms, func(f figures) float64 { return float64(f.nightQuantile(.5)) }},
	{"p99 night action", ms, func(f figures) float64 { return float64(f.nightQuantile(.99)) }},
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
	{"machine busy", percent, func(f figures) float64 { return f.machineBusy }},
	{"machine CPU/delivery", ms2, figures.machineCPUPerDelivery},
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
	return f.opsQuantile(q, opVote, opUnvote, opLock)
}

// nightQuantile is a quantile of the night actions' latencies.
func (f figures) nightQuantile(q float64) time.Duration {
	return f.opsQuantile(q, opKill, opInspect, opProtect, opShoot)
}

func (f figures) opsQuantile(q float64, ops ...dayOp) time.Duration {
	var all []time.Duration
	for _, op := range ops {
		all = append(all, f.byOp[op]...)
	}
	return figures{latencies: all}.quantile(q)
}

func printDayHeader(w io.Writer, o benchOptions, how string) {
	fmt.Fprintf(w, "\nmafiamail-bench: %d players a game, %d messages a scale (a Day and a Night: %s), %d in flight;\n"+
		"mail stack: %s.\n"+
		"Every other game is at night (its referee closed Day 1 at the start, with no votes). Votes, unvotes and\n"+
		"locks go to the town thread, night actions to the private channel, posts to the thread (300 B to 2.2 KB)\n"+
		"or the mafia list (200 to 800 B); %d player(s) a game take the thread in digests (setup digest_interval=%v),\n"+
		"the others every post (MAIL EACH). Latency: SMTP hand-over to the first effect in a mailbox: for a vote,\n"+
		"unvote, lock or night action its answer to the sender (for a vote the sender's own thread copy, or a\n"+
		"private confirmation for a digest reader); for a post its first copy in any reader's mailbox. A night\n"+
		"action reaches the referee too, a whack every Mafioso. A delivery is any message reaching any\n"+
		"player's or the referee's mailbox (copies, digests, answers), counted from the first hand-over until\n"+
		"the load's last copy or answer (a digest the games' clock sends after it is left out). The relay copies\n"+
		"each thread message, mafia-list post and night action to the readers the bench names (X-Bench-Fanout:\n"+
		"whom the host sends it to at once) and composes no digests.\n"+
		"The host (mafiamail serve) and the relay each run in a process of their own: CPU is that process's,\n"+
		"peak RSS its VmHWM from its start (game set-up included), heaps as it reports them (live: after a GC).\n",
		o.players, o.commands, dayMix, o.inFlight, how, newDayState(o.players, true).digests, o.digestEvery)
}

// printStackRate prints the stack's own delivery rate beside the host's
// and the relay's, each against the stack alone measured in its own phase,
// and what a delivery cost the machine in each.
func printStackRate(w io.Writer, runs []scaleResult, o benchOptions) {
	fmt.Fprintf(w, "stack alone (as many copies to the same readers, each the player's own message, handed to it over 4 connections,\n"+
		"no system in between), measured in each system's phase just before its load:\n")
	type system struct {
		name string
		col  func(func(figures) float64) []float64
	}
	systems := []system{
		{"host", func(v func(figures) float64) []float64 { return column(runs, true, v) }},
		{"relay", func(v func(figures) float64) []float64 { return column(runs, false, v) }},
	}
	if o.baseline != "" {
		systems = append(systems, system{"baseline", func(v func(figures) float64) []float64 { return baselineColumn(runs, v) }})
	}
	for _, sys := range systems {
		stack := sys.col(func(f figures) float64 { return f.stackRate })
		busy := sys.col(func(f figures) float64 { return f.stackBusy })
		cpu := sys.col(func(f figures) float64 { return f.stackCPU })
		fmt.Fprintf(w, "  in the %s's phase %s deliveries/s, the machine %s busy, %s of its CPU a delivery;\n"+
			"    %s/stack %s, the machine's CPU a delivery %s of the stack alone's\n",
			sys.name, spreadOf(stack).cell(perSec, o.runs), spreadOf(busy).cell(percent, o.runs), spreadOf(cpu).cell(ms2, o.runs),
			sys.name, spreadOf(ratios(sys.col(figures.deliveriesPerSecond), stack)).cell(plain, o.runs),
			spreadOf(ratios(sys.col(figures.machineCPUPerDelivery), cpu)).cell(plain, o.runs))
	}
}
