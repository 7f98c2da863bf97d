//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
)

// siegeAttack plays two small games of the siege under attack: the first
// is played a little and ended, the second meets forgeries, the first
// game's players, a replaced player's old address, auto-responders,
// out-of-office replies, odd mail and a flood.
type siegeAttack struct {
	s *siege
	d *killDriver // the genuine mail of the attack games

	mu   sync.Mutex
	msgs []*attackMsg // the messages with an expectation of their own
	seq  int

	resp   *responders
	forger string

	// flooding is set while the flood is sent and worked off; floodWindow
	// is that span, floodSent how long sending took.
	flooding    atomic.Bool
	floodOver   atomic.Bool
	floodWindow span
	floodSent   time.Duration
}

// siegeAttackSetup gives the attack games a day that outlasts the run:
// their players vote only when the attack needs them to, and must not be
// removed for missed votes meanwhile.
const siegeAttackSetup = "classic day_length=60d"

func newSiegeAttack(s *siege) *siegeAttack {
	a := &siegeAttack{s: s, d: s.newDriver(), forger: "mallory@evil.example.org"}
	a.resp = newResponders(rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64())))
	a.resp.nextID, a.resp.pass, a.resp.send, a.resp.errorf = a.nextID, siegePass, a.deliver, s.t.Errorf
	a.resp.record = func(m *attackMsg) { a.record(m) }
	return a
}

func (a *siegeAttack) nextID(tag string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	return fmt.Sprintf("x%d.%s.%d@players.example.org", a.seq, tag, time.Now().UnixNano())
}

func (a *siegeAttack) record(m *attackMsg) *attackMsg {
	m.at = time.Now()
	a.mu.Lock()
	a.msgs = append(a.msgs, m)
	a.mu.Unlock()
	return m
}

// deliver hands raw to Postfix as from to rcpts.
func (a *siegeAttack) deliver(from string, rcpts []string, raw []byte) error {
	return smtpSend(a.s.stack.SMTPAddr(), from, rcpts, raw)
}

// post sends a message with an expectation of its own to the host.
func (a *siegeAttack) post(m *attackMsg, auth string, extra []string, body string) error {
	if m.id == "" {
		m.id = a.nextID("m")
	}
	a.record(m)
	return a.deliver(m.from, []string{m.to}, attackMail(m.id, m.from, m.to, "Re: the game", auth, extra, body))
}

func siegePass(addr string) string { return attackPassFrom(siegeAuthserv, addr) }

// voteRound has every living player but skip vote for the player offset
// seats on, so that no one gathers a majority and the day goes on.
func (a *siegeAttack) voteRound(ctx context.Context, g *killGame, offset int, skip ...string) error {
	st, err := a.s.await(ctx, g, "a day", func(st *engine.State) bool { return st.Phase == engine.DayPhase })
	if err != nil {
		return err
	}
	n := len(st.Players)
	votes := map[int]int{} // voter's slot -> target's
	for i, p := range st.Players {
		target := st.Players[(i+offset)%n]
		if !p.Alive || !target.Alive || target.Slot == p.Slot || slices.Contains(skip, p.Name) || p.Vote == target.Slot {
			continue
		}
		m, err := a.d.sendAs(g, p, "t", "VOTE "+target.Name)
		if err != nil {
			return err
		}
		if m != nil {
			m.command, m.vote, m.voter = true, target.Name, p.Name
			votes[p.Slot] = target.Slot
		}
	}
	// Mail can overtake mail: what the attack does next (a replacement,
	// say) must not overtake these votes.
	_, err = a.s.await(ctx, g, "the votes", func(st *engine.State) bool {
		for voter, target := range votes {
			if st.Player(voter).Vote != target {
				return false
			}
		}
		return true
	})
	return err
}

func (a *siegeAttack) run(ctx context.Context, until time.Time) error {
	s := a.s
	// A first game, played a little and ended by the referee.
	old := s.newGame("atk1", siegeReferee("atk"), killNames)
	a.d.games = append(a.d.games, old)
	if err := s.openGame(ctx, a.d, old, siegeAttackSetup); err != nil {
		return fmt.Errorf("atk1: %w", err)
	}
	if err := a.voteRound(ctx, old, 1); err != nil {
		return err
	}
	if m, err := a.d.send(old.refereeOf(), s.refChannelOf(old), "END"); err != nil {
		return err
	} else {
		m.command, m.game = true, old.id
	}
	if _, err := s.await(ctx, old, "the end", func(st *engine.State) bool { return st.Phase == engine.EndedPhase }); err != nil {
		return err
	}
	oldState, _, err := s.view.state(old.id)
	if err != nil {
		return err
	}

	// The second game's responders answer from its first message on.
	g := s.newGame("atk2", siegeReferee("atk"), killNames)
	a.d.games = append(a.d.games, g)
	var players []string
	for _, name := range killNames {
		players = append(players, g.addrs[name])
	}
	a.resp.start(g.addrs["Bob"], g.addrs["Dave"], g.addrs["Erin"], players)
	if err := s.openGame(ctx, a.d, g, siegeAttackSetup); err != nil {
		return fmt.Errorf("atk2: %w", err)
	}
	if err := a.voteRound(ctx, g, 1); err != nil {
		return err
	}
	st, _, err := s.view.state(g.id)
	if err != nil {
		return err
	}
	player := func(name string) engine.Player {
		for _, p := range st.Players {
			if p.Name == name {
				return p
			}
		}
		panic("no player " + name)
	}
	thread := func(p engine.Player) string { return killAddress(g.id, "t", s.learned.token(p.Address, g.id)) }
	private := func(p engine.Player) string { return killAddress(g.id, "p", s.learned.token(p.Address, g.id)) }
	alice, carol := player("Alice"), player("Carol")
	var errs []error
	post := func(m *attackMsg, auth string, extra []string, body string) {
		if err := a.post(m, auth, extra, body); err != nil {
			errs = append(errs, err)
		}
	}

	// The flood, on one connection, while the other games go on and the
	// forgeries and odd mail come in; its window lasts until the host has
	// worked it off.
	a.flooding.Store(true)
	a.floodWindow.from = time.Now()
	floodDone := make(chan error, 1)
	go func() { floodDone <- a.flood(player("Frank"), private(player("Frank"))) }()

	// Forgeries.
	post(&attackMsg{from: a.forger, to: thread(alice), what: "stolen token", expect: attackRefused, strict: true,
		notify: alice.Address, forgers: []string{a.forger}}, siegePass(a.forger), nil, "VOTE Grace")
	post(&attackMsg{from: alice.Address, to: "host+atk2@" + siegeDomain, what: "no token", expect: attackRefused,
		notify: alice.Address}, siegePass(alice.Address), nil, "VOTE Grace")
	post(&attackMsg{from: alice.Address, to: thread(alice), what: "foreign authserv-id", expect: attackRefused, strict: true,
		notify: alice.Address}, "mx.evil.example; dmarc=pass header.from="+siegeDomain, nil, "VOTE Grace")
	post(&attackMsg{from: alice.Address, to: thread(alice), what: "forged pass below the MTA's fail",
		expect: attackRefused, strict: true, notify: alice.Address},
		siegeAuthserv+"; dmarc=fail header.from="+siegeDomain,
		[]string{"Authentication-Results: " + siegePass(alice.Address)}, "VOTE Grace")
	for _, p := range oldState.Players {
		if p.Name == "Judy" {
			post(&attackMsg{from: p.Address, to: killAddress(old.id, "t", s.learned.token(p.Address, old.id)), what: "finished game",
				expect: attackRefused, notify: p.Address}, siegePass(p.Address), nil, "VOTE Alice")
		}
	}
	sub := siegePlayer("CarolSub", g.id)
	if m, err := a.d.send(g.refereeOf(), s.refChannelOf(g), "REPLACE Carol WITH "+sub); err != nil {
		return err
	} else {
		m.command, m.game = true, g.id
	}
	if _, err := s.await(ctx, g, "the replacement", func(st *engine.State) bool { return st.Player(carol.Slot).Address == sub }); err != nil {
		return err
	}
	post(&attackMsg{from: carol.Address, to: thread(carol), what: "replaced address", expect: attackRefused, strict: true,
		notify: sub, forgers: []string{carol.Address}}, siegePass(carol.Address), nil, "VOTE Grace")

	// Odd mail.
	grace, heidi, ivan := player("Grace"), player("Heidi"), player("Ivan")
	post(&attackMsg{from: grace.Address, to: private(grace), what: "malformed MIME", expect: attackOdd,
		notify: grace.Address}, siegePass(grace.Address),
		[]string{"MIME-Version: 1.0", "Content-Type: multipart/alternative; boundary=\"zz\"", "Content-Transfer-Encoding: quoted-printable"},
		"--zz\nContent-Type: text/plain; charset=no-such-charset\nContent-Transfer-Encoding: base64\n\n!!!! not base64 ====\n--zz\nContent-Type: text/html\n\n<p>STATUS<p><b>")
	big := strings.Repeat(strings.Repeat("x", 99)+"\n", 25<<20/100+1)
	post(&attackMsg{from: heidi.Address, to: private(heidi), what: "25 MiB", expect: attackRefused, strict: true, mustTell: true,
		notify: heidi.Address}, siegePass(heidi.Address), nil, "STATUS\n\n"+big)
	post(&attackMsg{from: ivan.Address, to: thread(ivan), what: "5,000 command lines", expect: attackRefused, strict: true, mustTell: true,
		notify: ivan.Address}, siegePass(ivan.Address), nil, strings.Repeat("TALLY\n", 5000))
	if len(errs) > 0 {
		return errs[0]
	}
	if err := a.voteRound(ctx, g, 2, "Frank"); err != nil {
		return err
	}
	if err := <-floodDone; err != nil {
		return err
	}
	a.floodSent = time.Since(a.floodWindow.from)
	end := time.Now().Add(2 * s.o.wait)
	for {
		if _, unseen, err := hostInboxAt(s.stack.IMAPAddr(), siegePassword); err == nil && unseen == 0 {
			break
		}
		if time.Now().After(end) {
			return fmt.Errorf("the host did not work off the flood in %v", 2*s.o.wait)
		}
		time.Sleep(250 * time.Millisecond)
	}
	a.floodWindow.to = time.Now()
	a.flooding.Store(false)
	a.floodOver.Store(true)

	if err := a.voteRound(ctx, g, 3, "Frank"); err != nil {
		return err
	}
	for time.Now().Before(until) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	m, err := a.d.send(g.refereeOf(), s.refChannelOf(g), "END")
	if m != nil {
		m.command, m.game = true, g.id
	}
	return err
}

func (a *siegeAttack) flood(p engine.Player, to string) error {
	c, err := smtp.Dial(a.s.stack.SMTPAddr())
	if err != nil {
		return err
	}
	defer c.Close()
	for i := 0; i < a.s.o.floodSize; i++ {
		m := a.record(&attackMsg{id: a.nextID("flood"), from: p.Address, to: to, what: "flood", expect: attackFlood, notify: p.Address})
		if err := c.SendMail(p.Address, []string{to}, bytes.NewReader(attackMail(m.id, m.from, to, "STATUS?", siegePass(m.from), nil, "STATUS"))); err != nil {
			return fmt.Errorf("flood message %d: %w", i, err)
		}
	}
	return c.Quit()
}

// onMail shows the responders every message delivered to a participant.
func (a *siegeAttack) onMail(d delivery) {
	a.resp.offer(incoming{rcpt: d.rcpt, envFrom: d.envFrom, replyTo: d.replyTo, id: d.id, subject: d.subject})
}
