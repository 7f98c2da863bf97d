package command

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		set  Set
		line string
		want *Command // nil: discussion
		err  string   // non-empty: an error line whose message contains this
	}{
		// D1 vote syntax, both forms, with the decoration mail clients add.
		{Thread, "VOTE Alice", &Command{Verb: Vote, Target: "Alice"}, ""},
		{Thread, "vote alice", &Command{Verb: Vote, Target: "alice"}, ""},
		{Thread, "  Vote:   Mary Ann  ", &Command{Verb: Vote, Target: "Mary Ann"}, ""},
		{Thread, "*VOTE Alice*", &Command{Verb: Vote, Target: "Alice"}, ""},
		{Thread, "**Vote: Alice**", &Command{Verb: Vote, Target: "Alice"}, ""},
		{Thread, "VOTE *Alice*.", &Command{Verb: Vote, Target: "Alice"}, ""},
		{Thread, "VOTE Alice.", &Command{Verb: Vote, Target: "Alice"}, ""},
		{Thread, "VOTE Alice, she dodged my question twice", &Command{Verb: Vote, Target: "Alice", Note: "she dodged my question twice"}, ""},
		{Thread, "VOTE Alice (sorry!)", &Command{Verb: Vote, Target: "Alice", Note: "(sorry!)"}, ""},
		{Thread, "vote for Bob", &Command{Verb: Vote, Target: "Bob"}, ""},
		{Thread, "VOTE für Bob", &Command{Verb: Vote, Target: "Bob"}, ""},
		{Thread, "vote pour Bob", &Command{Verb: Vote, Target: "Bob"}, ""},
		{Thread, "Vote por Bob", &Command{Verb: Vote, Target: "Bob"}, ""},
		{Thread, "##Vote Bob", &Command{Verb: Vote, Target: "Bob"}, ""},
		{Thread, "VOTE\u00a0Zoë", &Command{Verb: Vote, Target: "Zoë"}, ""},
		{Thread, "\u200bVOTE Bob", &Command{Verb: Vote, Target: "Bob"}, ""},
		{Thread, "VOTE NULL", &Command{Verb: Vote, Target: NullTarget}, ""},
		{Thread, "vote null.", &Command{Verb: Vote, Target: NullTarget}, ""},
		{Thread, "Alice >> Bob", &Command{Verb: Vote, Voter: "Alice", Target: "Bob"}, ""},
		{Thread, "Mary Ann>>Bob", &Command{Verb: Vote, Voter: "Mary Ann", Target: "Bob"}, ""},
		{Thread, "Alice >> null", &Command{Verb: Vote, Voter: "Alice", Target: NullTarget}, ""},
		{Thread, "*Alice >> Bob*", &Command{Verb: Vote, Voter: "Alice", Target: "Bob"}, ""},
		{Thread, "VOTE", nil, "VOTE needs a name"},
		{Thread, "Vote:", nil, "VOTE needs a name"},
		{Thread, "VOTE .", nil, "VOTE needs a name"},
		{Thread, "Alice >>", nil, "Voter >> Target"},
		{Thread, "Alice >> Bob >> Carol", nil, "one vote per line"},
		{Thread, "VOTE Alice >> Bob", nil, "not both"},
		{Thread, "UNVOTE", &Command{Verb: Unvote}, ""},
		{Thread, "unvote Alice", &Command{Verb: Unvote, Note: "Alice"}, ""},
		{Thread, "LOCK", &Command{Verb: Lock}, ""},
		{Thread, "Lock!", &Command{Verb: Lock}, ""},
		{Thread, "UNLOCK", &Command{Verb: Unlock}, ""},
		{Thread, "EXTEND", &Command{Verb: Extend}, ""},
		{Thread, "TALLY", &Command{Verb: Tally}, ""},
		{Thread, "help", &Command{Verb: Help}, ""},
		// Prose that starts like a verb is discussion in the thread.
		{Thread, "Lock in your votes, folks", nil, ""},
		{Thread, "Help me understand why Bob is so quiet", nil, ""},
		{Thread, "Tally looks bad for town", nil, ""},
		{Thread, "Extend please, I am travelling", nil, ""},
		{Thread, "Voted for Bob yesterday, still think so", nil, ""},
		{Thread, "Vote-counting is hard", nil, ""},
		{Thread, "Kill him with fire", nil, ""}, // not a thread verb
		{Thread, "I think town >> mafia today", &Command{Verb: Vote, Voter: "I think town", Target: "mafia today"}, ""},
		{Thread, "", nil, ""},
		{Thread, "   ", nil, ""},

		// Private channel (N1–N5).
		{Private, "KILL Bob", &Command{Verb: Kill, Target: "Bob"}, ""},
		{Private, "NO KILL", &Command{Verb: NoKill}, ""},
		{Private, "no kill tonight", &Command{Verb: NoKill, Note: "tonight"}, ""},
		{Private, "INSPECT Carol", &Command{Verb: Inspect, Target: "Carol"}, ""},
		{Private, "Protect: Dave", &Command{Verb: Protect, Target: "Dave"}, ""},
		{Private, "SHOOT Eve!", &Command{Verb: Shoot, Target: "Eve"}, ""},
		{Private, "PASS", &Command{Verb: Pass}, ""},
		{Private, "STATUS", &Command{Verb: Status}, ""},
		{Private, "EXTEND", &Command{Verb: Extend}, ""},
		{Private, "EXTEND 12h", &Command{Verb: Extend, Duration: 12 * time.Hour}, ""},
		{Private, "SHOOT", nil, "SHOOT needs a name"},
		{Private, "INSPECT", nil, "INSPECT needs a name"},
		{Private, "PASS on this one", nil, "PASS takes nothing after it"},
		{Private, "VOTE Alice", nil, ""}, // votes go to the thread
		{Private, "No idea who to pick", nil, ""},

		// Mafia list: anything, and KILL.
		{Mafia, "KILL Bob", &Command{Verb: Kill, Target: "Bob"}, ""},
		{Mafia, "Kill: Bob - he claimed cop", &Command{Verb: Kill, Target: "Bob", Note: "he claimed cop"}, ""},
		{Mafia, "no kill", &Command{Verb: NoKill}, ""},
		{Mafia, "STATUS", nil, ""},

		// Referee (F1).
		{Referee, "ADD Mary Ann mary@example.org", &Command{Verb: Add, Name: "Mary Ann", Address: "mary@example.org"}, ""},
		{Referee, "ADD Bob <bob@example.org>", &Command{Verb: Add, Name: "Bob", Address: "bob@example.org"}, ""},
		{Referee, "ADD Bob, bob@example.org", &Command{Verb: Add, Name: "Bob", Address: "bob@example.org"}, ""},
		{Referee, "ADD Bob bob@example.org<mailto:bob@example.org>", &Command{Verb: Add, Name: "Bob", Address: "bob@example.org"}, ""},
		{Referee, "ADD Bob", nil, "ADD needs a name and an address"},
		{Referee, "ADD bob@example.org", nil, "ADD needs a name and an address"},
		{Referee, "ADD Bob bob@", nil, "is not a mail address"},
		{Referee, "SETUP classic", &Command{Verb: Setup, Text: "classic"}, ""},
		{Referee, "SETUP mafia=3 inspector=1 town=7", &Command{Verb: Setup, Text: "mafia=3 inspector=1 town=7"}, ""},
		{Referee, "SETUP", nil, "SETUP needs a setup"},
		{Referee, "START", &Command{Verb: Start}, ""},
		{Referee, "START now please", nil, "START takes nothing after it"},
		{Referee, "CLOSE", &Command{Verb: Close}, ""},
		{Referee, "EXTEND 12h", &Command{Verb: Extend, Duration: 12 * time.Hour}, ""},
		{Referee, "EXTEND 1d 6h", &Command{Verb: Extend, Duration: 30 * time.Hour}, ""},
		{Referee, "extend 90 minutes", &Command{Verb: Extend, Duration: 90 * time.Minute}, ""},
		{Referee, "EXTEND", nil, "EXTEND needs a length"},
		{Referee, "EXTEND a bit", nil, "is not a length"},
		{Referee, "EXTEND 9999h", nil, "longer than 30 days"},
		// DEADLINE keeps the time as written: the engine reads it, in the game's zone.
		{Referee, "DEADLINE 2025-03-07 18:00", &Command{Verb: Deadline, Text: "2025-03-07 18:00"}, ""},
		{Referee, "DEADLINE 2025-03-07 18:00 UTC", &Command{Verb: Deadline, Text: "2025-03-07 18:00 UTC"}, ""},
		{Referee, "DEADLINE 2025-03-07 18:00 Europe/Berlin", &Command{Verb: Deadline, Text: "2025-03-07 18:00 Europe/Berlin"}, ""},
		{Referee, "deadline 2026-12-07T18:00", &Command{Verb: Deadline, Text: "2026-12-07T18:00"}, ""},
		{Referee, "DEADLINE 2025-03-07T18:00:00-05:00", &Command{Verb: Deadline, Text: "2025-03-07T18:00:00-05:00"}, ""},
		// A missing time is the engine's to refuse, with examples in the
		// game's zone and on its clock.
		{Referee, "DEADLINE", &Command{Verb: Deadline}, ""},
		{Referee, "DEADLINE .", &Command{Verb: Deadline}, ""},
		// ZONE names a zone for the engine to read, or asks for it.
		{Private, "ZONE Europe/Berlin", &Command{Verb: Zone, Text: "Europe/Berlin"}, ""},
		{Private, "zone America/Los_Angeles.", &Command{Verb: Zone, Text: "America/Los_Angeles"}, ""},
		{Private, "ZONE", &Command{Verb: Zone}, ""},
		{Private, "MAIL digest", &Command{Verb: Mail, Text: "DIGEST"}, ""},
		{Private, "Mail each.", &Command{Verb: Mail, Text: "EACH"}, ""},
		{Private, "MAIL", &Command{Verb: Mail}, ""},
		{Private, "CALENDAR off", &Command{Verb: Calendar, Text: "OFF"}, ""},
		{Private, "Calendar on.", &Command{Verb: Calendar, Text: "ON"}, ""},
		{Private, "CALENDAR", &Command{Verb: Calendar}, ""},
		{Private, "calendar is a mess for me", nil, "CALENDAR takes ON"},
		{Private, "mail me the rules", nil, "MAIL takes DIGEST"},
		{Private, "ZONE Berlin please", nil, "ZONE takes one zone"},
		// LANGUAGE names a language for the host to read, or asks for the list.
		{Private, "LANGUAGE de", &Command{Verb: Language, Text: "de"}, ""},
		{Private, "language Deutsch.", &Command{Verb: Language, Text: "Deutsch"}, ""},
		{Private, "LANGUAGE", &Command{Verb: Language}, ""},
		{Private, "Language is hard for me", nil, "LANGUAGE takes one language"},
		{Thread, "LANGUAGE de", nil, ""},
		// HELP RULES asks for the rules, in every channel.
		{Thread, "HELP RULES", &Command{Verb: Help, Text: HelpRules}, ""},
		{Private, "help rules.", &Command{Verb: Help, Text: HelpRules}, ""},
		{Mafia, "HELP rules", &Command{Verb: Help, Text: HelpRules}, ""},
		{Signup, "HELP RULES", &Command{Verb: Help, Text: HelpRules}, ""},
		{Host, "HELP RULES", &Command{Verb: Help, Text: HelpRules}, ""},
		{Referee, "HELP RULES", &Command{Verb: Help, Text: HelpRules}, ""},
		{Private, "HELP me", nil, "HELP takes nothing after it"},
		{Referee, "GRANT", &Command{Verb: Grant}, ""},
		{Referee, "GRANT 12h", &Command{Verb: Grant, Duration: 12 * time.Hour}, ""},
		{Referee, "GRANT lots", nil, "is not a length"},
		{Referee, "DENY", &Command{Verb: Deny}, ""},
		{Referee, "WEEKEND CLOSE", &Command{Verb: WeekendClose}, ""},
		{Referee, "Weekend plans?", nil, ""},
		{Referee, "REPLACE Bob WITH sub@example.org", &Command{Verb: Replace, Target: "Bob", Address: "sub@example.org"}, ""},
		{Referee, "replace Mary Ann with <sub@example.org>.", &Command{Verb: Replace, Target: "Mary Ann", Address: "sub@example.org"}, ""},
		{Referee, "REPLACE Bob", nil, "REPLACE needs a player and an address"},
		{Referee, "MODKILL Bob", &Command{Verb: Modkill, Target: "Bob"}, ""},
		{Referee, "SUSPEND spam@example.org", &Command{Verb: Suspend, Address: "spam@example.org"}, ""},
		{Referee, "SUSPEND Bob", nil, "SUSPEND needs an address"},
		{Referee, "RELAY 3", &Command{Verb: Relay, Held: 3}, ""},
		{Referee, "RELAY #3", &Command{Verb: Relay, Held: 3}, ""},
		{Referee, "RELAY", nil, "RELAY needs the number of a held post"},
		{Referee, "RELAY three", nil, "RELAY needs the number of a held post"},
		{Referee, "REJECT 4", &Command{Verb: Reject, Held: 4}, ""},
		{Referee, "REJECT 4 SUSPEND", &Command{Verb: Reject, Held: 4, Suspend: true}, ""},
		{Referee, "REJECT 4 maybe", nil, "REJECT n SUSPEND"},
		{Referee, "ADMIT watcher@example.org", &Command{Verb: Admit, Address: "watcher@example.org"}, ""},
		{Referee, "PAUSE", &Command{Verb: Pause}, ""},
		{Referee, "RESUME", &Command{Verb: Resume}, ""},
		{Referee, "STATUS", &Command{Verb: Status}, ""},
		{Referee, "END", &Command{Verb: End}, ""},
		{Referee, "VOTE Alice", nil, ""},

		// The host's own address and the sign-up address.
		{Host, "HELP", &Command{Verb: Help}, ""},
		{Host, "NEW GAME oak", &Command{Verb: NewGame, Name: "oak"}, ""},
		{Host, "new game Oak2025", &Command{Verb: NewGame, Name: "oak2025"}, ""},
		{Host, "NEW GAME my game", nil, "NEW GAME needs the game's name"},
		{Host, "NEW GAME x", nil, "NEW GAME needs the game's name"},
		{Host, "New game sounds fun", nil, "NEW GAME needs the game's name"},
		{Host, "New here, hello", nil, ""},
		{Signup, "JOIN Alice", &Command{Verb: Join, Name: "Alice"}, ""},
		{Signup, "join   Mary   Ann", &Command{Verb: Join, Name: "Mary Ann"}, ""},
		{Signup, "JOIN", nil, "JOIN needs the name"},
		{Signup, "JOIN null", nil, "placeholder"},
		{Signup, "JOIN a@b", nil, "may not contain @"},
		{Signup, "JOIN " + strings.Repeat("x", 31), nil, "at most 30"},
		{Signup, "JOIN ---", nil, "JOIN needs the name"},
	}
	for _, tt := range tests {
		got, ok, err := ParseLine(tt.line, tt.set)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %q: error %v, want one containing %q", tt.set, tt.line, err, tt.err)
			}
			if !ok {
				t.Errorf("%s %q: an error line must also report ok", tt.set, tt.line)
			}
		case tt.want == nil:
			if ok || err != nil {
				t.Errorf("%s %q: got command %+v (err %v), want discussion", tt.set, tt.line, got, err)
			}
		default:
			if err != nil || !ok {
				t.Errorf("%s %q: ok=%v err=%v, want %+v", tt.set, tt.line, ok, err, *tt.want)
				continue
			}
			want := *tt.want
			want.Raw = strings.TrimSpace(tt.line)
			if got != want {
				t.Errorf("%s %q:\n got %+v\nwant %+v", tt.set, tt.line, got, want)
			}
		}
	}
}

func TestParseKeepsDiscussionInOrder(t *testing.T) {
	text := "Morning all.\n\nVOTE Bob\nHe has been dodging every question.\n\n\nVOTE\nLOCK\n\nSee you tonight.\n"
	res := Parse(text, Thread)
	if len(res.Commands) != 2 || res.Commands[0].Verb != Vote || res.Commands[0].Line != 3 ||
		res.Commands[1].Verb != Lock || res.Commands[1].Line != 8 {
		t.Fatalf("commands = %+v", res.Commands)
	}
	if len(res.Errors) != 1 || res.Errors[0].Line != 7 || res.Errors[0].Text != "VOTE" {
		t.Fatalf("errors = %+v", res.Errors)
	}
	want := "Morning all.\n\nHe has been dodging every question.\n\nSee you tonight."
	if res.Discussion != want {
		t.Errorf("discussion = %q, want %q", res.Discussion, want)
	}
	if res.Lines() != 3 {
		t.Errorf("Lines() = %d, want 3", res.Lines())
	}
}

func TestAnnounceTakesTheRestOfTheMessage(t *testing.T) {
	text := "PAUSE\nANNOUNCE Game paused for the holiday.\n\nVOTE lines below are part of it:\nSTART\n"
	res := Parse(text, Referee)
	if len(res.Commands) != 2 || res.Commands[1].Verb != Announce {
		t.Fatalf("commands = %+v", res.Commands)
	}
	want := "Game paused for the holiday.\n\nVOTE lines below are part of it:\nSTART"
	if res.Commands[1].Text != want {
		t.Errorf("announcement = %q, want %q", res.Commands[1].Text, want)
	}
	if res.Discussion != "" || len(res.Errors) != 0 {
		t.Errorf("discussion %q errors %+v, want none", res.Discussion, res.Errors)
	}

	res = Parse("ANNOUNCE\n\n", Referee)
	if len(res.Commands) != 0 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "ANNOUNCE needs") {
		t.Errorf("empty ANNOUNCE: %+v", res)
	}
}

func TestNormalizeName(t *testing.T) {
	same := [][]string{
		{"Mary Ann", "maryann", "MARY-ANN", "mary.ann", " Mary  Ann! "},
		{"José", "jose", "JOSÉ", "Jose\u0301"},
		{"Straße", "STRASSE", "strasse"},
		{"Zoë", "zoe"},
		{"Ｂｏｂ", "bob"}, // full-width letters
		{"Ørjan", "ørjan", "ØRJAN"},
		{"R2-D2", "r2d2"},
	}
	for _, group := range same {
		want := NormalizeName(group[0])
		if want == "" {
			t.Errorf("NormalizeName(%q) is empty", group[0])
		}
		for _, s := range group[1:] {
			if got := NormalizeName(s); got != want {
				t.Errorf("NormalizeName(%q) = %q, want %q (as %q)", s, got, want, group[0])
			}
		}
	}
	differ := [][2]string{{"Ann", "Anna"}, {"が", "か"}, {"Bob", "Rob"}, {"Ørjan", "Orjan"}}
	for _, p := range differ {
		if NormalizeName(p[0]) == NormalizeName(p[1]) {
			t.Errorf("NormalizeName(%q) == NormalizeName(%q) = %q", p[0], p[1], NormalizeName(p[0]))
		}
	}
	if got := NormalizeName("!!! ... ---"); got != "" {
		t.Errorf("punctuation only: %q", got)
	}
	if got := NormalizeName("NULL"); got != NullTarget {
		t.Errorf("NormalizeName(NULL) = %q", got)
	}
}

func TestParseLength(t *testing.T) {
	good := map[string]time.Duration{
		"12h": 12 * time.Hour, "12 h": 12 * time.Hour, "1d": 24 * time.Hour, "2 days": 48 * time.Hour,
		"1h30m": 90 * time.Minute, "90 minutes": 90 * time.Minute, "1 day, 6 hours": 30 * time.Hour,
	}
	for s, want := range good {
		got, err := parseLength(s)
		if err != nil || got != want {
			t.Errorf("parseLength(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "h", "12", "12x", "0h", "-3h", "12h extra", "99999999999999999999h", "31d"} {
		if d, err := parseLength(s); err == nil {
			t.Errorf("parseLength(%q) = %v, want an error", s, d)
		}
	}
}

func TestVerbsAreDisjointByArgumentShape(t *testing.T) {
	// Every verb a set lists must be reachable through ParseLine: a verb
	// listed but unparseable would be a silent hole in the grammar.
	sample := map[Verb]string{
		Vote: "VOTE A", Unvote: "UNVOTE", Lock: "LOCK", Unlock: "UNLOCK", Extend: "EXTEND 1h", Tally: "TALLY",
		Help: "HELP", Status: "STATUS", Kill: "KILL A", NoKill: "NO KILL", Inspect: "INSPECT A",
		Protect: "PROTECT A", Shoot: "SHOOT A", Pass: "PASS", Add: "ADD A a@b.c", Setup: "SETUP x",
		Start: "START", Close: "CLOSE", Deadline: "DEADLINE 2025-01-01 10:00", Grant: "GRANT",
		Deny: "DENY", WeekendClose: "WEEKEND CLOSE", Replace: "REPLACE A WITH a@b.c", Modkill: "MODKILL A",
		Suspend: "SUSPEND a@b.c", Relay: "RELAY 1", Reject: "REJECT 1", Admit: "ADMIT a@b.c",
		Pause: "PAUSE", Resume: "RESUME", Announce: "ANNOUNCE hi", End: "END", NewGame: "NEW GAME ab",
		Join: "JOIN A", Zone: "ZONE Europe/Berlin", Mail: "MAIL DIGEST", Calendar: "CALENDAR OFF",
		Language: "LANGUAGE de",
	}
	for set, vs := range verbs {
		for _, v := range vs {
			line, ok := sample[v]
			if !ok {
				t.Errorf("no sample line for %s", v)
				continue
			}
			got, isCmd, err := ParseLine(line, set)
			if err != nil || !isCmd || got.Verb != v {
				t.Errorf("%s: %q gave %+v ok=%v err=%v", set, line, got, isCmd, err)
			}
		}
	}
}

// TestDeadlineTextIsReadByTheEngine: every DEADLINE the grammar accepts
// as written is one the engine reads, so the grammar's own examples and the
// engine's reading agree (D8).
func TestDeadlineTextIsReadByTheEngine(t *testing.T) {
	for _, line := range []string{"DEADLINE 2026-12-07 18:00", "DEADLINE 2026-12-07 18:00 UTC",
		"DEADLINE 2026-12-07 18:00 Europe/Berlin", "DEADLINE 2026-12-07T18:00", "DEADLINE 2026-12-07T18:00-05:00",
		"DEADLINE 2026-12-07 6pm."} {
		c, ok, err := ParseLine(line, Referee)
		if !ok || err != nil {
			t.Fatalf("%q: ok=%v err=%v", line, ok, err)
		}
		if _, err := engine.ParseTimeIn(c.Text, engine.DefaultLocation()); err != nil {
			t.Errorf("%q: the engine cannot read %q: %v", line, c.Text, err)
		}
	}
}

// TestVerbConversions: every verb a mail line can hold, except NEW GAME
// converts to the engine's verb of the same spelling and back; the engine's
// verbs that no line spells do not convert.
func TestVerbConversions(t *testing.T) {
	seen := map[Verb]bool{}
	for _, vs := range verbs {
		for _, v := range vs {
			if seen[v] {
				continue
			}
			seen[v] = true
			e, ok := v.Engine()
			if v == NewGame {
				if ok {
					t.Errorf("%s is the host's, not the engine's: %q", v, e)
				}
				continue
			}
			if !ok || string(e) != string(v) {
				t.Errorf("%s converts to %q (ok %v)", v, e, ok)
				continue
			}
			if back, ok := FromEngine(e); !ok || back != v {
				t.Errorf("%s does not convert back: %q (ok %v)", e, back, ok)
			}
		}
	}
	if len(seen)-1 != len(engineVerbs) {
		t.Errorf("%d verbs in the sets, %d in the conversion table", len(seen)-1, len(engineVerbs))
	}
	if _, ok := FromEngine(engine.CmdPost); ok {
		t.Error("POST is discussion, not a verb of the grammar")
	}
	for _, ev := range []engine.Verb{engine.CmdVote, engine.CmdNoKill, engine.CmdWeekendClose, engine.CmdDeadline, engine.CmdJoin} {
		if _, ok := FromEngine(ev); !ok {
			t.Errorf("%s has no verb of the grammar", ev)
		}
	}
}

// A command of another address is a misplaced line, neither a command nor
// discussion; a line that only starts like one stays discussion.
func TestMisplaced(t *testing.T) {
	cases := []struct {
		set   Set
		line  string
		verb  Verb // "" for discussion
		homes []Set
	}{
		{Thread, "PROTECT Dave", Protect, []Set{Private}},
		{Thread, "kill Carol", Kill, []Set{Private, Mafia}},
		{Thread, "CLOSE", Close, []Set{Referee}},
		{Thread, "Status", Status, []Set{Private, Referee}},
		{Thread, "JOIN Zed", Join, []Set{Signup}},
		{Thread, "NEW GAME g2", NewGame, []Set{Host}},
		{Thread, "LANGUAGE fr", Language, []Set{Private}},
		{Private, "VOTE Gina", Vote, []Set{Thread}},
		{Private, "Gina >> Bob", Vote, []Set{Thread}},
		{Private, "LOCK", Lock, []Set{Thread}},
		{Mafia, "VOTE Bob", Vote, []Set{Thread}},
		{Signup, "VOTE Bob", Vote, []Set{Thread}},
		{Host, "JOIN Bob", Join, []Set{Signup}},
		{Referee, "KILL Bob", Kill, []Set{Private, Mafia}},
		// Prose that starts with a verb stays discussion.
		{Thread, "Status update: Bob is lying", "", nil},
		{Thread, "Close the door behind you", "", nil},
		{Thread, "Pass the salt", "", nil},
		{Thread, "Setup was odd today", "", nil},
		{Thread, "Start with Bob, he is quiet", "", nil},
		{Private, "Start the game soon please", "", nil},
		{Mafia, "End of story", "", nil},
	}
	for _, c := range cases {
		res := Parse(c.line, c.set)
		if len(res.Commands) != 0 || len(res.Errors) != 0 {
			t.Errorf("%s %q: read as a command of the set: %+v %+v", c.set, c.line, res.Commands, res.Errors)
			continue
		}
		if c.verb == "" {
			if len(res.Misplaced) != 0 || res.Discussion != c.line {
				t.Errorf("%s %q: want discussion, got %+v, %q", c.set, c.line, res.Misplaced, res.Discussion)
			}
			continue
		}
		if len(res.Misplaced) != 1 || res.Discussion != "" {
			t.Fatalf("%s %q: want one misplaced line, got %+v, discussion %q", c.set, c.line, res.Misplaced, res.Discussion)
		}
		m := res.Misplaced[0]
		if m.Verb != c.verb || m.Raw != c.line || m.Line != 1 || !slices.Equal(m.Homes, c.homes) {
			t.Errorf("%s %q: %+v, want %s in %v", c.set, c.line, m, c.verb, c.homes)
		}
	}
	// The rest of the message stays as it was; the limit counts the line.
	res := Parse("Bob is lying.\nKILL Bob\n\nHe is.", Thread)
	if res.Discussion != "Bob is lying.\n\nHe is." || res.Lines() != 1 {
		t.Errorf("discussion %q, %d command lines", res.Discussion, res.Lines())
	}
}

// TestHelpRulesIsTheEngines: the grammar's HELP RULES is the engine's.
func TestHelpRulesIsTheEngines(t *testing.T) {
	if HelpRules != engine.HelpRules {
		t.Fatalf("HELP RULES is %q in the grammar, %q in the engine", HelpRules, engine.HelpRules)
	}
}

// WithTarget writes the line a player sends to name another player: the
// line as they wrote it, the name alone changed (D1: "VOTE Bob" with Bob
// dead offers "VOTE Bobby").
func TestWithTarget(t *testing.T) {
	for _, c := range []struct {
		set        Set
		line, want string
	}{
		{Thread, "VOTE Bob", "VOTE Bobby"},
		{Thread, "vote for bob, he lied about Bob", "vote for Bobby, he lied about Bob"},
		{Thread, "Carol >> Bob", "Carol >> Bobby"},
		{Thread, "bob >> bob", "bob >> Bobby"},
		{Thread, "vote bo", "vote Bobby"},
		{Thread, "STIMME FÜR Bob", "STIMME FÜR Bobby"},
		{Private, "INSPECT Bob", "INSPECT Bobby"},
		{Mafia, "kill bob", "kill Bobby"},
		{Referee, "MODKILL Bob", "MODKILL Bobby"},
		{Referee, "REPLACE Bob WITH sub@example.org", "REPLACE Bobby WITH sub@example.org"},
	} {
		cmd, ok, err := ParseLine(c.line, c.set)
		if !ok || err != nil {
			t.Fatalf("%q: ok %v, %v", c.line, ok, err)
		}
		if got := cmd.WithTarget("Bobby"); got != c.want {
			t.Errorf("%q with Bobby: %q, want %q", c.line, got, c.want)
		}
	}
}
