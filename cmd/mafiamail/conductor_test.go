package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// TestSteppedClock: the host reads a stepped demo's game time exactly as
// the demo set it, whole second by whole second over a long game, and
// back from its stand-in real time; the stand-in stays behind the real
// clock, so that mail queued at it is due at once.
func TestSteppedClock(t *testing.T) {
	start := time.Date(2026, 12, 14, 13, 0, 0, 0, time.UTC)
	c := newSteppedClock(start)
	hc := c.host()
	for _, d := range []time.Duration{0, time.Second, 10 * time.Minute, 36*time.Hour + 7*time.Second, 20 * 24 * time.Hour} {
		c.moveTo(start.Add(d))
		if got := hc.Now(); !got.Equal(start.Add(d)) || !c.now().Equal(got) {
			t.Errorf("after %v the host reads %v, the demo %v; want %v", d, got, c.now(), start.Add(d))
		}
		if back := hc.RealAt(start.Add(d)); !back.Equal(c.real()) {
			t.Errorf("after %v the stand-in real time is %v, the host's for the game time %v", d, c.real(), back)
		}
		if !c.real().Before(time.Now()) {
			t.Errorf("after %v of game time the stand-in real time %v is not behind the real clock", d, c.real())
		}
	}
	c.moveTo(start.Add(time.Hour + time.Millisecond))
	if got := c.now(); !got.Equal(start.Add(20 * 24 * time.Hour)) {
		t.Errorf("the clock went back to %v", got)
	}
	c2 := newSteppedClock(start)
	c2.moveTo(start.Add(time.Hour + time.Millisecond))
	if got := c2.now(); !got.Equal(start.Add(time.Hour + time.Second)) {
		t.Errorf("moved to a time between seconds, the clock reads %v, want the second after", got)
	}
}

// TestDemoStart: a demo game starts on the Monday 07:00 in Chicago after
// now, unless the week after it changes Chicago's offset from UTC; then on
// the Monday after.
func TestDemoStart(t *testing.T) {
	chicago, err := time.LoadLocation(engine.SeedWeekendZone)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ now, want string }{
		{"2026-12-07T13:42:00Z", "2026-12-14T07:00:00-06:00"},
		{"2026-12-14T12:59:59Z", "2026-12-14T07:00:00-06:00"},
		{"2026-12-14T13:00:00Z", "2026-12-21T07:00:00-06:00"},
		// Chicago moves to summer time on Sunday 14 March 2027.
		{"2027-03-02T12:00:00Z", "2027-03-15T07:00:00-05:00"},
		// and back on Sunday 7 November 2027.
		{"2027-10-26T12:00:00Z", "2027-11-08T07:00:00-06:00"},
	} {
		now, _ := time.Parse(time.RFC3339, tc.now)
		want, _ := time.Parse(time.RFC3339, tc.want)
		if got := demoStart(now); !got.Equal(want) {
			t.Errorf("at %s the demo starts %s, want %s", tc.now, got.In(chicago), want.In(chicago))
		}
	}
}

// TestOutcomeNamesTheRound: the demo's summary says whether the game ended
// at a day's close or as a night resolved; a night keeps its day's number,
// so the final state alone cannot tell.
func TestOutcomeNamesTheRound(t *testing.T) {
	for _, tc := range []struct {
		name    string
		players int
		moves   func(g *smallGame)
		says    string
	}{
		{"the town votes the Mafioso out", 3, func(g *smallGame) {
			for _, v := range g.town {
				g.vote(v, g.mafioso)
			}
		}, "Town wins on Day 1."},
		{"the Mafia's whack leaves one against one", 4, func(g *smallGame) {
			for _, v := range append(g.town[1:], g.mafioso) {
				g.vote(v, g.town[0])
			}
			g.apply(engine.Command{Verb: engine.CmdKill, By: engine.PlayerActor(g.mafioso), Channel: engine.Private,
				Target: g.s.Player(g.town[1]).Name})
			g.log = append(g.log, engine.Tick(g.s, g.s.NightEndsAt())...)
		}, "Mafia wins in Night 1."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newSmallGame(t, tc.players)
			tc.moves(g)
			var out bytes.Buffer
			printOutcome(&out, g.s, g.log, 0)
			if first := strings.SplitN(strings.TrimSpace(out.String()), "\n", 2)[0]; first != tc.says {
				t.Errorf("the summary says %q, want %q", first, tc.says)
			}
		})
	}
}

// smallGame is a started game of one Mafioso and a few others, played
// straight on the engine.
type smallGame struct {
	t       *testing.T
	s       *engine.State
	log     []engine.Event
	now     time.Time
	mafioso int
	town    []int
}

func newSmallGame(t *testing.T, players int) *smallGame {
	t.Helper()
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC) // a Tuesday
	setup, err := engine.ParseSetup(engine.Classic(), "players="+strconv.Itoa(players)+" mafia=1")
	if err != nil {
		t.Fatal(err)
	}
	s, log, err := engine.NewGame("small", "ref@example.org", setup, now)
	if err != nil {
		t.Fatal(err)
	}
	g := &smallGame{t: t, s: s, log: log, now: now}
	for _, n := range demoNames[:players] {
		g.apply(engine.Command{Verb: engine.CmdJoin, By: engine.Actor{Kind: engine.ByOutsider, Address: n + "@example.org"},
			Channel: engine.Signup, Name: n, Token: "tok" + strings.ToLower(n)})
	}
	g.apply(engine.Command{Verb: engine.CmdStart, By: engine.Referee, Channel: engine.Private})
	for _, p := range s.Players {
		if p.Role == engine.Mafia {
			g.mafioso = p.Slot
		} else {
			g.town = append(g.town, p.Slot)
		}
	}
	return g
}

func (g *smallGame) apply(c engine.Command) {
	g.t.Helper()
	evs, err := engine.Apply(g.s, c, engine.Env{Now: g.now, Rand: seededReader(1)})
	if err != nil {
		g.t.Fatalf("%s %s: %v", c.Verb, c.Target, err)
	}
	g.log = append(g.log, evs...)
}

// vote has voter vote for target and lock.
func (g *smallGame) vote(voter, target int) {
	g.t.Helper()
	g.apply(engine.Command{Verb: engine.CmdVote, By: engine.PlayerActor(voter), Channel: engine.Thread, Target: g.s.Player(target).Name})
	g.apply(engine.Command{Verb: engine.CmdLock, By: engine.PlayerActor(voter), Channel: engine.Thread})
}
