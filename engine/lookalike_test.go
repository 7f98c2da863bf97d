package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// D1: names that cannot impersonate. A sign-up name may not look like a
// seated player's (UTS #39 skeleton), nor be, hold as a whole word, or look
// like a word the host uses for itself or the referee, or the game's name;
// it holds letters, digits, spaces and a little punctuation, nothing
// invisible. Each refusal says why.
func TestD1_NamesCannotImpersonate(t *testing.T) {
	s, _, err := NewGame("friday", "ref@example.org", Classic(), t0)
	if err != nil {
		t.Fatal(err)
	}
	g := &game{t: t, s: s, now: t0}
	joins := 0
	join := func(name string) error {
		t.Helper()
		joins++
		addr := fmt.Sprintf("p%d@example.org", joins)
		_, err := g.apply(Command{Verb: CmdJoin, By: Actor{Kind: ByOutsider, Address: addr}, Channel: Signup, Name: name,
			Token: fmt.Sprintf("tok%dx", joins)})
		return err
	}
	for _, n := range []string{"Alice", "Mary-Jo O'Neil", "José", "Ren_42", "Zoë", "Хозяин", "田中"} {
		if err := join(n); err != nil {
			t.Fatalf("JOIN %s: %v", n, err)
		}
	}
	refused := []struct{ name, says string }{
		// The referee's and the host's voice.
		{"The referee", `holds the word "referee"`},
		{"Referee Bob", `holds the word "referee"`},
		{"Host", `holds the word "host"`},
		{"Mafiamail", `holds the word "mafiamail"`},
		{"Mafia Mail", `holds the word "mafia"`},
		{"Mafi Amail", `holds the word "mafiamail"`},
		{"Mafia friday", `"mafia"`},
		{"Friday", "the name of this game"},
		{"The Moderator", `holds the word "moderator"`},
		{"Referees", `holds the word "referee"`},
		{"NULL", "placeholder vote"},
		// Look-alikes of those: Cyrillic е and о, Greek Η, a zero, a
		// capital I for l.
		{"The R\u0435feree", `looks like the word "referee"`},
		{"R\u0435feree Bob", `looks like the word "referee"`},
		{"H0st", `looks like the word "host"`},
		{"\u0397ost", `looks like the word "host"`},
		{"Mafiamai\u0406", `looks like the word "mafiamail"`},
		{"Fr\u0456day", `looks like the word "friday"`},
		// Look-alikes of seated players.
		{"\u0410lice", `looks the same as "Alice"`},
		{"AIice", `looks the same as "Alice"`},
		{"A1ice", `looks the same as "Alice"`},
		{"alice", `is taken`},
		{"Mary Jo ONeil", `is taken`},
		// Characters that can fake or hide.
		{"Ali\u202ece", "invisible or formatting"},
		{"Ali\u200dce", "invisible or formatting"},
		{"Bob (friday)", "not '('"},
		{"Bob\u00a0Smith", "ordinary spaces only"},
		{"Bob: Referee", "not ':'"},
		{"=?utf-8?q?Bob?=", "not '='"},
	}
	for _, tt := range refused {
		err := join(tt.name)
		var r *Refusal
		if !errors.As(err, &r) || !strings.Contains(r.Message, tt.says) {
			t.Errorf("JOIN %q: %v; want refused saying %q", tt.name, err, tt.says)
		}
	}
	if n := len(g.s.Players); n != 7 {
		t.Errorf("%d seats, want the 7 names that impersonate no one", n)
	}
}
