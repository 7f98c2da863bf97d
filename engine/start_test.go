package engine

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// joined is a game of setup in sign-up with the first n names of
// testNames signed up.
func joined(t *testing.T, setup Setup, n int) *game {
	t.Helper()
	s, evs, err := NewGame("demo1", "ref@example.org", setup, t0)
	if err != nil {
		t.Fatal(err)
	}
	g := &game{t: t, s: s, log: evs, now: t0}
	for i := range n {
		if _, err := g.apply(Command{Verb: CmdJoin, By: Actor{Kind: ByOutsider, Address: testNames[i] + "@example.org"},
			Channel: Signup, Name: testNames[i], Token: "tok" + strings.ToLower(testNames[i])}); err != nil {
			t.Fatalf("join %s: %v", testNames[i], err)
		}
	}
	return g
}

// setupTo applies SETUP args from the referee and reports its refusal.
func (g *game) setupTo(args string) error {
	_, err := g.apply(Command{Verb: CmdSetup, By: Referee, Channel: Private, Text: args})
	return err
}

// suggested is the SETUP a refusal offers with every count given.
var suggested = regexp.MustCompile(`SETUP (players=\d+(?: mafia=\d+)?)`)

// TestF1_StartBeforeEverySeatIsTaken: a START before every seat is taken
// is refused with the ways on (S1, F1): wait for the rest, or change the
// count with SETUP. What it offers is true: the count of those who signed
// up where the setup's roles fit in it, which SETUP then takes and START
// follows; otherwise the fewest players the roles allow (SETUP takes that
// count and refuses one less) and, once three have signed up, a setup
// with fewer roles for exactly them, which SETUP and START take.
func TestF1_StartBeforeEverySeatIsTaken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  Setup
		signed int
		says   string
		least  int // the fewest players of the setup's roles, when said
	}{
		{"the roles fit the players signed up", Classic(), 7,
			"7 of 11 players have signed up: wait for 4 more, or change the count with SETUP players=7", 0},
		{"too few for the roles, enough for a game", Classic(), 4,
			"4 of 11 players have signed up: wait for 7 more, or change the count with SETUP players=N, N at least 6 with this setup's roles; " +
				"for 4 players name fewer roles too, as in SETUP players=4 mafia=1", 6},
		{"too few for a game", Classic(), 2,
			"2 of 11 players have signed up: wait for 9 more, or change the count with SETUP players=N, N at least 6 with this setup's roles", 6},
		{"a big setup", Mafia150(), 10,
			"10 of 25 players have signed up: wait for 15 more, or change the count with SETUP players=N, N at least 14 with this setup's roles; " +
				"for 10 players name fewer roles too, as in SETUP players=10 mafia=3", 14},
		{"nobody yet", Classic(), 0,
			"0 of 11 players have signed up: wait for 11 more, or change the count with SETUP players=N, N at least 6 with this setup's roles", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := joined(t, tc.setup, tc.signed)
			r := g.refused(WrongPhase, "ref", Private, CmdStart, "")
			if r.Message != tc.says {
				t.Fatalf("START with %d of %d signed up says\n%q\nwant\n%q", tc.signed, tc.setup.Players, r.Message, tc.says)
			}
			if tc.least > 0 {
				// "N at least least": SETUP takes that count, and not one less.
				if err := joined(t, tc.setup, 0).setupTo("players=" + strconv.Itoa(tc.least)); err != nil {
					t.Errorf("SETUP players=%d, the fewest the refusal names: %v", tc.least, err)
				}
				if err := joined(t, tc.setup, 0).setupTo("players=" + strconv.Itoa(tc.least-1)); err == nil {
					t.Errorf("SETUP players=%d is taken, fewer than the %d the refusal names", tc.least-1, tc.least)
				}
			}
			m := suggested.FindStringSubmatch(r.Message)
			if m == nil {
				return
			}
			if err := g.setupTo(m[1]); err != nil {
				t.Fatalf("SETUP %s, as the refusal offers: %v", m[1], err)
			}
			if g.s.Setup.Players != tc.signed {
				t.Fatalf("SETUP %s leaves %d players, want %d", m[1], g.s.Setup.Players, tc.signed)
			}
			if find(g.ok("ref", Private, CmdStart, ""), EvRolesDrawn) == nil {
				t.Fatalf("START after SETUP %s drew no roles", m[1])
			}
		})
	}
}
