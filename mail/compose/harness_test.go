package compose_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
)

const (
	hostAddr = "host@example.org"
	refAddr  = "ref@example.org"
	refToken = "trefereeqqqq"
)

// t0 is a Tuesday afternoon, far from any weekend (as in the engine's
// tests): 10:00 in the game's zone.
var t0 = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

var names11 = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi",
	"Ivan", "Judy", "Mallory"}

var names25 = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi",
	"Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Quentin", "Rupert", "Sybil",
	"Trent", "Ursula", "Victor", "Walter", "Xena", "Yuri", "Zoë", "Mary-Jo O'Neil"}

// tokenFor makes a participant's token: lowercase base32 letters, as the
// host's are, and unique per name.
func tokenFor(name string) string {
	var b strings.Builder
	b.WriteString("t")
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' {
			b.WriteRune(r)
		}
	}
	for b.Len() < 12 {
		b.WriteString("q")
	}
	return b.String()
}

func addrFor(name string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, name)) + "@players.example.net"
}

func seeded(seed uint64) *rand.ChaCha8 {
	var k [32]byte
	for i := range 8 {
		k[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(k)
}

// sent is one composed message with what caused it.
type sent struct {
	compose.Outgoing
	step string
	// batch tells which call of record the message came in.
	batch int
	// ended: the game had ended when the message was composed (roles may
	// then be public, W2).
	ended bool
	// phase is the game's phase once the step was applied; standing is
	// what everyone can see of the reader then (seat, alive, vote, missed
	// votes, how they died), and role their hidden role: copies for readers of the same
	// standing must read the same whatever the role.
	phase engine.Phase
	// round is the day or night the game was in once the step was
	// applied, as a player would name it: "Day 2", "Night 1", "Sign-up",
	// "Game over". The town thread's and mafia list's subjects name it.
	round string
	// roundBefore is the round before the step: a digest the step
	// flushes before its close belongs to it.
	roundBefore string
	standing    string
	role        engine.Role
	// actor: the reader is the player whose command the step applied.
	actor bool
}

// harness drives a real game through the engine and composes every event,
// as the host does: each command's events as a Batch, with one Reply to
// the sender for command lines; each clock step as a Batch.
type harness struct {
	t testing.TB
	// roundBefore is the round before the step being recorded.
	roundBefore string
	c           *compose.Composer
	s           *engine.State
	dir         compose.Directory
	seq         int64
	now         time.Time
	rand        *rand.ChaCha8
	inbox       int
	all         []sent
	step        string
	// batches counts the calls of record: the copies of one message share
	// a batch.
	batches int
	// stepBy is the seat of the player whose command the step applies
	// (0: none).
	stepBy int
	// history is every event logged, in order.
	history []compose.Logged
	// cause, when set, names the message a command line came in, for
	// its answer's In-Reply-To and Message-ID; otherwise the messages are
	// numbered in order. Games that differ in some commands give the
	// others the same names with it.
	cause func(by engine.Actor, line string) string
	// crossCheck composes each batch a second time with every copy laid
	// out alone, which the shared layout must come to byte for byte (see
	// batch). It doubles what a play costs; plays that repeat what
	// another play cross-checks, in another language or with one more
	// secret input, turn it off in the everyday run with sampled and keep
	// it under the tag integration, which CI runs.
	crossCheck bool
}

// sampled leaves the cross-check of every batch to the run with the tag
// integration: the everyday run makes it in the English games alone. So
// does a run under the race detector, which makes the cross-check's
// single-goroutine work some ten times as costly and finds nothing in it
// that the English games do not show; CI runs the tag without it too.
func (h *harness) sampled() { h.crossCheck = integration && !raceEnabled }

// languages are the languages a test plays its games in: all of them, but
// under the race detector the first n. A play shares nothing with another
// and runs on one goroutine, where the race detector finds nothing to race
// and costs ten times as much; CI plays every language without it.
func languages(n int) []*lang.Language {
	if raceEnabled {
		return lang.All()[:n]
	}
	return lang.All()
}

func newHarness(t testing.TB, setup engine.Setup, game string, seed uint64) *harness {
	t.Helper()
	c, err := compose.New(hostAddr)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, c: c, now: t0, rand: seeded(seed), crossCheck: true,
		dir: compose.Directory{RefereeToken: refToken, Observers: map[string]string{}}}
	s, evs, err := engine.NewGame(game, refAddr, setup, t0)
	if err != nil {
		t.Fatalf("NewGame: %v", err)
	}
	h.step = "new game"
	h.batch(nil, evs, nil)
	h.s = s
	return h
}

func (h *harness) logged(evs []engine.Event) []compose.Logged {
	var out []compose.Logged
	for _, e := range evs {
		h.seq++
		out = append(out, compose.Logged{Seq: h.seq, Event: e})
	}
	h.history = append(h.history, out...)
	return out
}

func (h *harness) batch(before *engine.State, evs []engine.Event, sender *engine.Actor) []compose.Outgoing {
	h.t.Helper()
	if len(evs) == 0 {
		return nil
	}
	// A game with a digest interval gathers its thread's posts and votes
	// for digests, as the host does.
	hold := h.s != nil && h.s.Setup.DigestInterval > 0
	h.roundBefore = roundWords(before)
	defer func() { h.roundBefore = "" }()
	// The history before the batch, shared rather than copied: Batch
	// only reads it, and the capped slice keeps the batch's own events,
	// appended next, out of its reach.
	prior := h.history[:len(h.history):len(h.history)]
	b := compose.Batch{Before: before, Events: h.logged(evs), Dir: h.dir, Sender: sender,
		HoldForDigest: hold, History: prior}
	msgs, err := h.c.Batch(b)
	if err != nil {
		h.t.Fatalf("%s: Batch: %v", h.step, err)
	}
	if !h.crossCheck {
		h.record(msgs)
		return msgs
	}
	// Copies that share their layout come out as each would alone.
	alone, err := compose.LayOutAlone(h.c).Batch(b)
	if err != nil {
		h.t.Fatalf("%s: Batch, every copy alone: %v", h.step, err)
	}
	if len(alone) != len(msgs) {
		h.t.Fatalf("%s: %d messages, %d when every copy is laid out alone", h.step, len(msgs), len(alone))
	}
	for i := range msgs {
		if !bytes.Equal(msgs[i].Raw, alone[i].Raw) {
			h.t.Fatalf("%s: the copy for %s differs from the one laid out alone:\n%s\n---\n%s", h.step, msgs[i].Recipient, msgs[i].Raw, alone[i].Raw)
		}
		if msgs[i].Public != alone[i].Public {
			h.t.Fatalf("%s: the public lines of the copy for %s differ from those laid out alone:\n%s\n---\n%s", h.step, msgs[i].Recipient, msgs[i].Public, alone[i].Public)
		}
	}
	h.record(msgs)
	return msgs
}

// roundWords names the round a game is in, as a player would.
func roundWords(s *engine.State) string {
	if s == nil {
		return ""
	}
	return map[engine.Phase]string{engine.SignupPhase: "Sign-up", engine.EndedPhase: "Game over",
		engine.DayPhase: fmt.Sprint("Day ", s.Day), engine.NightPhase: fmt.Sprint("Night ", s.Day)}[s.Phase]
}

func (h *harness) record(msgs []compose.Outgoing) {
	h.batches++
	for _, m := range msgs {
		sm := sent{Outgoing: m, step: h.step, batch: h.batches, ended: h.s != nil && h.s.Phase == engine.EndedPhase}
		if h.s != nil {
			sm.phase = h.s.Phase
			sm.round, sm.roundBefore = roundWords(h.s), h.roundBefore
			var slot int
			if _, err := fmt.Sscanf(m.Recipient, "s%d", &slot); err == nil {
				if p := h.s.Player(slot); p != nil {
					sm.standing = fmt.Sprintf("alive=%v cause=%s vote=%d locked=%v missed=%d", p.Alive, p.Cause, p.Vote, p.Locked, p.Missed)
					sm.role = p.Role
					sm.actor = slot == h.stepBy
				}
			}
		}
		h.all = append(h.all, sm)
	}
}

// result is what one command caused.
type result struct {
	events []engine.Event
	err    error
	msgs   []compose.Outgoing
	reply  compose.Outgoing
}

// run applies one command line, composing its events and the reply.
func (h *harness) run(by engine.Actor, ch engine.Channel, line string, cmd engine.Command) result {
	h.t.Helper()
	cmd.By, cmd.Channel = by, ch
	h.step = fmt.Sprintf("%s %q", actorName(h.s, by), line)
	h.stepBy = 0
	if by.Kind == engine.ByPlayer {
		h.stepBy = by.Slot
	}
	before := h.s.Clone()
	evs, err := engine.Apply(h.s, cmd, engine.Env{Now: h.now, Rand: h.rand})
	var r result
	r.events, r.err = evs, err
	var refusal *engine.Refusal
	if err != nil && !errors.As(err, &refusal) {
		h.t.Fatalf("%s: %v", h.step, err)
	}
	if cmd.Verb == engine.CmdPost {
		// Discussion gets no reply; its events go out as they are.
		if err != nil {
			h.t.Fatalf("%s: post refused: %v", h.step, err)
		}
		r.msgs = h.batch(before, evs, nil)
		return r
	}
	sender := by
	r.msgs = h.batch(before, evs, &sender)
	h.inbox++
	cause := fmt.Sprintf("<in%d@players.example.net>", h.inbox)
	if h.cause != nil {
		cause = h.cause(by, line)
	}
	rep, rerr := h.c.Reply(compose.Answer{
		State: h.s, Dir: h.dir, Sender: by, Channel: ch,
		Cause:    cause,
		Subject:  subjectFor(h.s, by, ch),
		Received: h.now.Add(-2 * time.Minute), Now: h.now,
		Lines: []compose.Line{{Text: line, Err: err, Events: evs}},
	})
	if rerr != nil {
		h.t.Fatalf("%s: Reply: %v", h.step, rerr)
	}
	h.record([]compose.Outgoing{rep})
	r.reply = rep
	return r
}

// host applies a command of the host's own (its sending plan, a close
// that waits for held mail) and composes its events.
func (h *harness) host(cmd engine.Command) []compose.Outgoing {
	h.t.Helper()
	cmd.By = engine.Actor{Kind: engine.ByHost}
	h.step = "host " + string(cmd.Verb)
	h.stepBy = 0
	before := h.s.Clone()
	evs, err := engine.Apply(h.s, cmd, engine.Env{Now: h.now, Rand: h.rand})
	if err != nil {
		h.t.Fatalf("%s: %v", h.step, err)
	}
	return h.batch(before, evs, nil)
}

// held answers a JOIN from mail the host could not authenticate: held
// until the sender replies to the one-time address.
func (h *harness) held(addr, line string) compose.Outgoing {
	h.t.Helper()
	rep, err := h.c.Reply(compose.Answer{
		State: h.s, Dir: h.dir, Sender: engine.Actor{Kind: engine.ByOutsider, Address: addr}, Channel: engine.Signup,
		Cause:    "<held@players.example.net>",
		Received: h.now.Add(-2 * time.Minute), Now: h.now,
		Lines:   []compose.Line{{Text: line, Pending: true}},
		Confirm: h.c.ConfirmAddress(h.s.Game, "k7q2m4x9w3r5t8y6"), ConfirmBy: h.now.Add(48 * time.Hour),
	})
	if err != nil {
		h.t.Fatalf("%s: Reply: %v", h.step, err)
	}
	h.record([]compose.Outgoing{rep})
	return rep
}

// ok runs a command that must be accepted.
func (h *harness) ok(by engine.Actor, ch engine.Channel, line string, cmd engine.Command) result {
	h.t.Helper()
	r := h.run(by, ch, line, cmd)
	if r.err != nil {
		h.t.Fatalf("%s: refused: %v", h.step, r.err)
	}
	return r
}

// refused runs a command that must be refused.
func (h *harness) refused(by engine.Actor, ch engine.Channel, line string, cmd engine.Command) result {
	h.t.Helper()
	r := h.run(by, ch, line, cmd)
	if r.err == nil {
		h.t.Fatalf("%s: accepted, want a refusal", h.step)
	}
	return r
}

// tick moves the clock to t and composes what it made due.
func (h *harness) tick(t time.Time) ([]compose.Outgoing, []engine.Event) {
	h.t.Helper()
	h.now = t
	h.step = "tick " + t.Format(time.RFC3339)
	h.stepBy = 0
	before := h.s.Clone()
	evs := engine.Tick(h.s, t)
	return h.batch(before, evs, nil), evs
}

// untilClose runs the clock to the next round close, tie extension or
// dawn, and returns the messages of that step.
func (h *harness) untilClose() []compose.Outgoing {
	h.t.Helper()
	for range 10 {
		d, ok := engine.NextDeadline(h.s)
		if !ok {
			h.t.Fatalf("nothing waits on the clock")
		}
		if d.Before(h.now) {
			d = h.now
		}
		msgs, evs := h.tick(d)
		for _, e := range evs {
			switch e.Type {
			case engine.EvRoundClosed, engine.EvTieExtended, engine.EvDawn:
				return msgs
			}
		}
	}
	h.t.Fatalf("the clock never closed the round")
	return nil
}

func actorName(s *engine.State, a engine.Actor) string {
	switch a.Kind {
	case engine.ByPlayer:
		if p := s.Player(a.Slot); p != nil {
			return p.Name
		}
	case engine.ByReferee:
		return "referee"
	}
	return a.Address
}

func (h *harness) slot(name string) int {
	h.t.Helper()
	for _, p := range h.s.Players {
		if p.Name == name {
			return p.Slot
		}
	}
	h.t.Fatalf("no player %s", name)
	return 0
}

func (h *harness) player(name string) engine.Actor { return engine.PlayerActor(h.slot(name)) }

// withRole lists the living players of a role, in seat order.
func (h *harness) withRole(r engine.Role) []string {
	var out []string
	for _, p := range h.s.Players {
		if p.Alive && p.Role == r {
			out = append(out, p.Name)
		}
	}
	return out
}

// town lists the living players who are not Mafia, in seat order.
func (h *harness) town() []string {
	var out []string
	for _, p := range h.s.Players {
		if p.Alive && p.Role != engine.Mafia {
			out = append(out, p.Name)
		}
	}
	return out
}

func (h *harness) key(name string) string { return fmt.Sprintf("s%d", h.slot(name)) }

// to picks the message of a step that went to reader key.
func to(t *testing.T, msgs []compose.Outgoing, key string) compose.Outgoing {
	t.Helper()
	for _, m := range msgs {
		if m.Recipient == key {
			return m
		}
	}
	var keys []string
	for _, m := range msgs {
		keys = append(keys, m.Recipient+"/"+m.Kind)
	}
	t.Fatalf("no message to %s among %v", key, keys)
	return compose.Outgoing{}
}

// toAddr picks the message of a step that went to an address.
func toAddr(t *testing.T, msgs []compose.Outgoing, addr string) compose.Outgoing {
	t.Helper()
	for _, m := range msgs {
		if len(m.To) == 1 && m.To[0] == addr {
			return m
		}
	}
	t.Fatalf("no message to %s", addr)
	return compose.Outgoing{}
}

// toKind picks the message of a step that went to reader key with a kind.
func toKind(t *testing.T, msgs []compose.Outgoing, key, kind string) compose.Outgoing {
	t.Helper()
	for _, m := range msgs {
		if m.Recipient == key && m.Kind == kind {
			return m
		}
	}
	var keys []string
	for _, m := range msgs {
		keys = append(keys, m.Recipient+"/"+m.Kind)
	}
	t.Fatalf("no %s message to %s among %v", kind, key, keys)
	return compose.Outgoing{}
}

// Shorthands for commands.
func vote(target string) engine.Command { return engine.Command{Verb: engine.CmdVote, Target: target} }
func verb(v engine.Verb) engine.Command { return engine.Command{Verb: v} }
func at(v engine.Verb, target string) engine.Command {
	return engine.Command{Verb: v, Target: target}
}
func post(text string) engine.Command { return engine.Command{Verb: engine.CmdPost, Text: text} }

// subjectFor is the subject a participant's mail client gives an answer
// in a channel: Re: and the host's own subject, or their own at sign-up.
func subjectFor(s *engine.State, by engine.Actor, ch engine.Channel) string {
	switch {
	case ch == engine.Signup:
		return "Sign me up"
	case ch == engine.Thread:
		return "Re: [" + s.Game + "] Day " + fmt.Sprint(s.Day)
	case ch == engine.MafiaCh:
		return "Re: [" + s.Game + "] Mafia list, Night " + fmt.Sprint(s.Day)
	case by.Kind == engine.ByReferee:
		return "Re: [" + s.Game + "] Referee channel"
	case by.Kind == engine.ByPlayer:
		return "Re: [" + s.Game + "] Private: " + s.Player(by.Slot).Name
	}
	return "Re: [" + s.Game + "] From the host"
}
