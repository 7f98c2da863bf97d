package engine

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestLanguage: LANGUAGE in the private channel sets the language of a
// player's own mail, LANGUAGE alone shows it, an unknown language is
// refused, the game's own language is none of one's own, the choice is
// part of the log (a replay, as after a restart, has it), and a substitute
// starts with the game's.
func TestLanguage(t *testing.T) {
	g := town7(t)
	language := func(who string, ch Channel, text string) ([]Event, error) {
		return g.apply(Command{Verb: CmdLanguage, By: PlayerActor(g.slot(who)), Channel: ch, Text: text})
	}
	evs, err := language("Carol", Private, "Français")
	if e := find(evs, EvLanguageSet); err != nil || e == nil || e.Text != "fr" || e.To.Referee || e.To.Public {
		t.Fatalf("LANGUAGE Français: %+v %v", evs, err)
	}
	if got := g.s.LanguageOf(g.p("Carol")); got != "fr" {
		t.Fatalf("Carol's language is %q", got)
	}
	if got := g.s.LanguageOf(g.p("Dave")); got != "en" {
		t.Fatalf("Dave, who chose none, has %q", got)
	}
	evs, err = language("Carol", Private, "")
	if e := find(evs, EvLanguageShown); err != nil || e == nil || e.Text != "fr" {
		t.Fatalf("LANGUAGE alone: %+v %v", evs, err)
	}
	for _, bad := range []string{"Klingon", "it", "fr de"} {
		if _, err := language("Dave", Private, bad); err == nil {
			t.Errorf("LANGUAGE %s was accepted", bad)
		} else if r, ok := err.(*Refusal); !ok || r.Reason != BadArgument || r.Phrase == nil {
			t.Errorf("LANGUAGE %s: %v", bad, err)
		}
	}
	if _, err := language("Dave", Thread, "de"); err == nil {
		t.Error("LANGUAGE in the thread was accepted")
	}
	if evs, err := language("Dave", Private, "English"); err != nil || find(evs, EvLanguageSet).Text != "" {
		t.Errorf("LANGUAGE with the game's language: %+v %v", evs, err)
	}
	again, err := Replay(g.log)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Player(g.slot("Carol")), g.s.Player(g.slot("Carol"))) {
		t.Fatalf("after a replay Carol is %+v, was %+v", again.Player(g.slot("Carol")), g.s.Player(g.slot("Carol")))
	}
	if _, err := g.apply(Command{Verb: CmdReplace, By: Referee, Channel: Private, Target: "Carol", Address: "sub@example.org", Token: "newtok"}); err != nil {
		t.Fatal(err)
	}
	if p := g.p("Carol"); p.Language != "" || g.s.LanguageOf(p) != "en" {
		t.Fatalf("the substitute inherited the language %q", p.Language)
	}
}

// TestSetupLanguage: language= sets the game's language, shown in the
// setup's summary; a named setup keeps it; an unknown one is refused.
func TestSetupLanguage(t *testing.T) {
	st, err := ParseSetup(Classic(), "classic language=de")
	if err != nil || st.Language != "de" {
		t.Fatalf("language=de: %+v %v", st, err)
	}
	if !strings.HasSuffix(st.Summary(), "; in German") {
		t.Errorf("the summary does not say the language: %q", st.Summary())
	}
	if _, err := ParseSetup(Classic(), "language=tlh"); err == nil {
		t.Error("language=tlh was accepted")
	}
	_, log, err := NewGame("g1", "ref@example.org", st, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Replay(log)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := Apply(s, Command{Verb: CmdSetup, By: Referee, Channel: Private, Text: "mafia150"}, Env{Now: s.Clock})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := s.Fold(e); err != nil {
			t.Fatal(err)
		}
	}
	if s.GameLanguage() != "de" {
		t.Errorf("SETUP mafia150 dropped the game's language: %q", s.GameLanguage())
	}
}
