package compose_test

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// secretInput is one thing a player does that the town does not see: a
// night action, a mafia-list post, a command or a note in their private
// channel.
type secretInput struct {
	by   string
	ch   engine.Channel
	line string
	cmd  engine.Command
}

// townWorld is what one play of TestTownSeesNoSecretInput composed: each
// reader's copies that must read the same whatever was done in secret.
type townWorld struct {
	copies map[string][]sentCopy
}

type sentCopy struct {
	step string
	raw  []byte
}

// TestTownSeesNoSecretInput plays Day 1 and Night 1 of a mafia150 game,
// the same public steps every time (a Townsperson's post to the thread, a
// Townsperson's STATUS and TALLY, votes, the close by the clock), once
// with none of a list of secret inputs and then once more with each
// further input: a mafia-list post, private commands and a private note,
// every night action in turn (the Doctor's PROTECT last, so that every
// action is in). Until the night resolves, each input must leave every
// Townsperson's mail (but that of the one who sent private commands) the
// same, byte for byte, Message-IDs and Dates included, and the thread
// copies of the Mafiosi and the night roles the same but for their
// Message-IDs, which count what each of them was sent: nothing the town
// is sent may tell when or whether a secret input came.
func TestTownSeesNoSecretInput(t *testing.T) {
	t.Parallel()
	const inputs = 16
	// Under the race detector, which finds nothing to race in a play of
	// its own, the worlds without and with the first input; CI plays all
	// of them without it (see languages).
	played := inputs
	if raceEnabled {
		played = 1
	}
	worlds := make([]townWorld, played+1)
	// The worlds share nothing until they are compared: they are played
	// in parallel, and the group returns once every one is played.
	t.Run("worlds", func(t *testing.T) {
		for k := range worlds {
			t.Run(fmt.Sprint(k), func(t *testing.T) {
				t.Parallel()
				worlds[k] = playTownWorld(t, k)
			})
		}
	})
	if t.Failed() {
		return
	}
	var names []string
	playTownWorldNames(t, func(in []secretInput) {
		for _, s := range in {
			names = append(names, s.by+" "+s.line)
		}
	})
	if len(names) != inputs {
		t.Fatalf("the script has %d secret inputs, want %d", len(names), inputs)
	}
	for k := 1; k <= played; k++ {
		before, after := worlds[k-1], worlds[k]
		for reader, want := range before.copies {
			got := after.copies[reader]
			if len(got) != len(want) {
				t.Errorf("with %q, %s got %d copies, not %d", names[k-1], reader, len(got), len(want))
				continue
			}
			for i := range want {
				if !bytes.Equal(want[i].raw, got[i].raw) {
					t.Errorf("with %q, %s's copy of %s changed:\n%s", names[k-1], reader, want[i].step, lineDiff(want[i].raw, got[i].raw))
				}
			}
		}
	}
}

// lineDiff shows the lines of a that b does not have, and b's that a
// does not.
func lineDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	in := func(l string, ls []string) bool {
		for _, x := range ls {
			if x == l {
				return true
			}
		}
		return false
	}
	var out []string
	for _, l := range al {
		if !in(l, bl) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bl {
		if !in(l, al) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// playTownWorldNames runs the script far enough to name its secret
// inputs.
func playTownWorldNames(t *testing.T, see func([]secretInput)) {
	h, cast := startTownWorld(t, false)
	see(append(cast.dayInputs(h), cast.nightInputs(h)...))
}

// townCast is who does what in the script.
type townCast struct {
	mafia                       []string
	insp, doc, vig              string
	reader, poster, private     string
	lynched, victim, votedLater string
}

func (c townCast) dayInputs(h *harness) []secretInput {
	return []secretInput{
		{c.mafia[0], engine.MafiaCh, "We vote with the crowd.", post("We vote with the crowd.")},
		{c.mafia[1], engine.Private, "STATUS", verb(engine.CmdStatus)},
		{c.private, engine.Private, "ZONE Europe/Berlin", engine.Command{Verb: engine.CmdZone, Text: "Europe/Berlin"}},
		{c.private, engine.Private, "LANGUAGE de", engine.Command{Verb: engine.CmdLanguage, Text: "de"}},
		{c.private, engine.Private, "CALENDAR OFF", engine.Command{Verb: engine.CmdCalendar, Text: engine.CalendarOff}},
		{c.private, engine.Private, "HELP", verb(engine.CmdHelp)},
		{c.private, engine.Private, "TALLY", verb(engine.CmdTally)},
		{c.private, engine.Private, "A word for the referee alone.", post("A word for the referee alone.")},
		{c.insp, engine.Private, "STATUS", verb(engine.CmdStatus)},
	}
}

func (c townCast) nightInputs(h *harness) []secretInput {
	return []secretInput{
		{c.mafia[0], engine.Private, "KILL " + c.victim, at(engine.CmdKill, c.victim)},
		{c.mafia[1], engine.MafiaCh, "Done. Quiet now.", post("Done. Quiet now.")},
		{c.insp, engine.Private, "INSPECT " + c.mafia[2], at(engine.CmdInspect, c.mafia[2])},
		{c.vig, engine.Private, "SHOOT " + c.mafia[3], at(engine.CmdShoot, c.mafia[3])},
		{c.vig, engine.Private, "PASS", verb(engine.CmdPass)},
		{c.doc, engine.Private, "STATUS", verb(engine.CmdStatus)},
		// The last action: every one is in, and the night will end at
		// its first 6-hour mark.
		{c.doc, engine.Private, "PROTECT " + c.reader, at(engine.CmdProtect, c.reader)},
	}
}

// startTownWorld starts the script's game, the same in every play; only
// a play with crossCheck set cross-checks every batch in the everyday run
// (see harness.sampled).
func startTownWorld(t *testing.T, crossCheck bool) (*harness, townCast) {
	h := newHarness(t, engine.Mafia150(), "open", 5)
	if !crossCheck {
		h.sampled()
	}
	h.signup(names25)
	h.ok(engine.Referee, engine.Private, "START", engine.Command{Verb: engine.CmdStart})
	var town []string
	for _, n := range h.town() {
		if p := h.s.Player(h.slot(n)); p.Role == engine.Townsperson {
			town = append(town, n)
		}
	}
	c := townCast{mafia: h.withRole(engine.Mafia), insp: h.withRole(engine.Inspector)[0],
		doc: h.withRole(engine.Doctor)[0], vig: h.withRole(engine.Vigilante)[0],
		reader: town[0], poster: town[1], private: town[2], lynched: town[3], victim: town[4], votedLater: town[5]}
	return h, c
}

// playTownWorld plays the script with its first k secret inputs.
func playTownWorld(t *testing.T, k int) townWorld {
	t.Helper()
	h, c := startTownWorld(t, k == 0) // the world without secret inputs cross-checks every batch
	// Each public command is named by its sender's count of commands,
	// the same in every play; only secret actors send secret inputs.
	sent := map[int]int{}
	h.cause = func(by engine.Actor, line string) string {
		sent[by.Slot]++
		return fmt.Sprintf("<s%d.%d@players.example.net>", by.Slot, sent[by.Slot])
	}
	from := len(h.all)
	done := 0
	public := func() {
		h.now = h.now.Add(time.Minute)
		h.ok(h.player(c.poster), engine.Thread, "Still here.", post("Still here."))
		h.ok(h.player(c.reader), engine.Private, "STATUS", verb(engine.CmdStatus))
		h.run(h.player(c.reader), engine.Private, "TALLY", verb(engine.CmdTally)) // refused at night
	}
	secret := func(in []secretInput) {
		for _, s := range in {
			if done < k {
				h.ok(h.player(s.by), s.ch, s.line, s.cmd)
			}
			done++
			public()
		}
	}
	public()
	secret(c.dayInputs(h))
	for _, n := range []string{c.reader, c.poster, c.votedLater} {
		h.ok(h.player(n), engine.Thread, "VOTE "+c.lynched, vote(c.lynched))
	}
	public()
	h.untilClose()
	if h.s.Phase != engine.NightPhase {
		t.Fatalf("after the close the game is in %s, not the night", h.s.Phase)
	}
	public()
	secret(c.nightInputs(h))
	if k == done && !h.s.NightEndsAt().Equal(h.s.Night.Start.Add(6*time.Hour)) {
		t.Fatalf("with every action in, the night ends at %v, not its first mark", h.s.NightEndsAt())
	}
	if h.s.Phase != engine.NightPhase {
		t.Fatal("the night resolved before the script's end")
	}

	// Who did something in secret may see its effect in their own mail:
	// the player who changed their own settings in everything, the
	// night roles and the Mafia outside the thread. The referee sees it
	// all (F2).
	actors := map[string]bool{h.key(c.private): true, "ref": true}
	roles := map[string]bool{}
	for _, n := range append(append([]string(nil), c.mafia...), c.insp, c.doc, c.vig) {
		roles[h.key(n)] = true
	}
	w := townWorld{copies: map[string][]sentCopy{}}
	for _, m := range h.all[from:] {
		if actors[m.Recipient] || roles[m.Recipient] && m.Kind != "thread" {
			continue
		}
		raw := m.Raw
		if roles[m.Recipient] {
			// A night role's and a Mafioso's mail is named by the count of
			// what they were sent, their own answers and the mafia list
			// included (docs/adversaries.md "Opaque identifiers"): their
			// Message-IDs, and the MIME boundaries drawn from them, may
			// differ; the rest may not.
			raw = withoutNames(raw, m.MessageID)
		}
		w.copies[m.Recipient] = append(w.copies[m.Recipient], sentCopy{step: m.step, raw: raw})
	}
	if len(w.copies[h.key(c.reader)]) < 20 {
		t.Fatalf("the reader got only %d messages", len(w.copies[h.key(c.reader)]))
	}
	return w
}

var boundaryParam = regexp.MustCompile(`boundary="?([^";\r\n]+)`)

// withoutNames replaces a message's Message-ID and its MIME boundaries,
// which are drawn from it, with placeholders.
func withoutNames(raw []byte, id string) []byte {
	out := bytes.ReplaceAll(raw, []byte(id), []byte("<message-id>"))
	for _, m := range boundaryParam.FindAllSubmatch(raw, -1) {
		out = bytes.ReplaceAll(out, m[1], []byte("boundary"))
	}
	return out
}

// TestTownMailIsMarked: of everything the classic and mafia150
// scenarios compose, the mail for the town (Outgoing.Town), which a
// close may wait for (T4), is exactly the thread's copies to players and
// observers and the reminders to vote; never the referee's copies, the
// mafia list, answers, private news or a night role's reminder.
func TestTownMailIsMarked(t *testing.T) {
	t.Parallel()
	seen := map[string]int{}
	for _, play := range []func(*testing.T) (*harness, *goldens){playClassic, playMafia150} {
		h, _ := play(t)
		for _, m := range h.all {
			reminder := slices.Contains(m.Contents, "reminder")
			want := m.Game != "" && m.Recipient != "ref" &&
				(m.Kind == compose.KindThread || m.Kind == compose.KindDawn || m.Kind == compose.KindEnd ||
					m.Kind == compose.KindPrivate && reminder && m.phase == engine.DayPhase)
			if m.Town != want {
				t.Errorf("%s: %s mail to %s (%v) marked for the town: %v", m.step, m.Kind, m.Recipient, m.Contents, m.Town)
			}
			key := m.Kind
			if reminder {
				key += " reminder in the " + string(m.phase)
			}
			if m.Town {
				key += " for the town"
			}
			seen[key]++
		}
	}
	for _, k := range []string{"thread for the town", "thread", "private reminder in the day for the town", "private reminder in the night", "mafia", "confirm"} {
		if seen[k] == 0 {
			t.Errorf("the scenarios composed no %s mail: %v", k, seen)
		}
	}
}
