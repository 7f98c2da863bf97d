package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/store"
)

// Every verb of the grammar, in mixed case so that the exact line can be
// looked for in every mail the host sends: only the sender's own answer may
// quote it.
var everyVerb = []struct {
	verb command.Verb
	line string
}{
	{command.Vote, "vOtE Bob"}, {command.Unvote, "uNvOtE"}, {command.Lock, "lOcK"}, {command.Unlock, "uNlOcK"},
	{command.Extend, "eXtEnD"}, {command.Tally, "tAlLy"}, {command.Help, "hElP"}, {command.Status, "sTaTuS"},
	{command.Kill, "kIlL Bob"}, {command.NoKill, "nO kIlL"}, {command.Inspect, "iNsPeCt Bob"},
	{command.Protect, "pRoTeCt Bob"}, {command.Shoot, "sHoOt Bob"}, {command.Pass, "pAsS"},
	{command.Add, "aDd Zed zed@players.test"}, {command.Setup, "sEtUp classic"}, {command.Start, "sTaRt"},
	{command.Close, "cLoSe"}, {command.Deadline, "dEaDlInE 2026-12-04 18:00"}, {command.Grant, "gRaNt"},
	{command.Deny, "dEnY"}, {command.WeekendClose, "wEeKeNd cLoSe"},
	{command.Replace, "rEpLaCe Bob WITH sub@players.test"}, {command.Modkill, "mOdKiLl Bob"},
	{command.Suspend, "sUsPeNd zed@players.test"}, {command.Relay, "rElAy 1"}, {command.Reject, "rEjEcT 1"},
	{command.Admit, "aDmIt obs2@players.test"}, {command.Pause, "pAuSe"}, {command.Resume, "rEsUmE"},
	{command.Announce, "aNnOuNcE hello all"}, {command.End, "eNd"}, {command.NewGame, "nEw GaMe g2"},
	{command.Join, "jOiN Zed"}, {command.Zone, "zOnE Europe/Berlin"}, {command.Mail, "mAiL dIgEsT"},
}

// The five kinds of address a message can be sent to.
var everyChannel = []string{"thread", "private", "mafia", "signup", "host"}

const (
	chanRef  = "ref@example.org"
	chanObs  = "obs@players.test"
	chanGame = "g1"
)

var chanPlayers = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank"}

// chanWorld is one game in one phase, with Alice in one state, kept as a
// database file so that every case starts from exactly the same game.
type chanWorld struct {
	phase string // signup, day, night, ended
	alice string // her role, "dead", or "" before the start
	seed  uint64
	hs    *harness
	snap  string
	// queued is how many messages the world's outbox holds, and
	// snapQueued how many its snapshot does: a case reads only the
	// messages it queued (see newMail).
	queued, snapQueued int
}

func drawSeed(seed uint64) io.Reader {
	var k [32]byte
	for i := range 8 {
		k[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(k)
}

// copyFile copies a closed database.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(to + suffix)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (w *chanWorld) save(t *testing.T) {
	t.Helper()
	if err := w.hs.st.Close(); err != nil {
		t.Fatal(err)
	}
	w.snap = w.hs.path + ".snap"
	copyFile(t, w.hs.path, w.snap)
	w.hs.open()
	w.queued = len(w.hs.outbox())
	w.snapQueued = w.queued
}

// restore brings the world back to its saved game, with a fresh draw.
func (w *chanWorld) restore(t *testing.T) {
	t.Helper()
	if err := w.hs.st.Close(); err != nil {
		t.Fatal(err)
	}
	copyFile(t, w.snap, w.hs.path)
	w.hs.draw = drawSeed(w.seed)
	w.hs.open()
	w.queued = w.snapQueued
}

// newMail returns the messages queued since the world's outbox held
// w.queued, and counts them in. The outbox never deletes a row, and a
// message's id is its row id, so the messages are numbered 1, 2, ... in
// the order they were queued: reading the new ones by id spares each case
// reading the whole outbox, twice, which cost a quarter of the test's
// time. checkQueued makes sure of the count once the world is done.
func (w *chanWorld) newMail(t *testing.T) []store.OutMessage {
	t.Helper()
	var out []store.OutMessage
	for id := int64(w.queued + 1); ; id++ {
		m, err := w.hs.st.OutMessageByID(context.Background(), id)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	w.queued += len(out)
	return out
}

// checkQueued compares the world's count of its outbox with the whole
// outbox, message by message: the count newMail keeps must be the truth.
func (w *chanWorld) checkQueued(t *testing.T) {
	t.Helper()
	all := w.hs.outbox()
	if len(all) != w.queued {
		t.Fatalf("the outbox holds %d messages, the world counted %d", len(all), w.queued)
	}
	for i, m := range all {
		if m.ID != int64(i+1) {
			t.Fatalf("message %d of the outbox has id %d: the ids are not the queue's order", i+1, m.ID)
		}
	}
}

func (hs *harness) refChannel() string {
	return "host+" + chanGame + "-p-" + hs.token(chanGame, chanRef) + "@example.org"
}

// signupWorld is game g1 before its start: six players signed up, an
// observer admitted, the setup chosen.
func signupWorld(t *testing.T) *chanWorld {
	hs := &harness{t: t, path: filepath.Join(worldDir(t), "host.db"), now: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC),
		log: slog.New(slog.DiscardHandler)}
	hs.open()
	t.Cleanup(func() { hs.st.Close() })
	// The host has no authserv-id: NEW GAME and each JOIN take effect
	// once confirmed.
	hs.send(chanRef, "host@example.org", "NEW GAME "+chanGame)
	hs.confirm(chanRef)
	ref := hs.refChannel()
	hs.send(chanRef, ref, "SETUP players=6 mafia=1 inspectors=1 inspector_knows_mafioso=false doctors=1 vigilantes=1")
	for _, p := range chanPlayers {
		hs.send(addr(p), "host+"+chanGame+"@example.org", "JOIN "+p)
		hs.confirm(addr(p))
	}
	hs.send(chanRef, ref, "ADMIT "+chanObs)
	s := hs.game(chanGame)
	if len(s.Players) != 6 || len(s.Observers) != 1 {
		t.Fatalf("sign-up world: %d players, %d observers", len(s.Players), len(s.Observers))
	}
	w := &chanWorld{phase: "signup", hs: hs}
	w.save(t)
	return w
}

// startedWorld starts the game from the sign-up world with a draw that
// gives Alice the role, and takes it to the phase.
func startedWorld(t *testing.T, base *chanWorld, phase, alice string) *chanWorld {
	t.Helper()
	role := engine.Role(alice)
	if alice == "dead" {
		role = engine.Townsperson
	}
	start := base.hs.game(chanGame)
	seed := uint64(0)
	for ; seed < 500; seed++ {
		trial := start.Clone()
		if _, err := engine.Apply(trial, engine.Command{Verb: engine.CmdStart, By: engine.Referee, Channel: engine.Private},
			engine.Env{Now: base.hs.now, Rand: drawSeed(seed)}); err != nil {
			t.Fatal(err)
		}
		if trial.Player(1).Role == role {
			break
		}
	}
	hs := &harness{t: t, path: filepath.Join(worldDir(t), "host.db"), now: base.hs.now, uid: base.hs.uid + 1000,
		draw: drawSeed(seed), log: base.hs.log}
	copyFile(t, base.snap, hs.path)
	hs.open()
	t.Cleanup(func() { hs.st.Close() })
	ref := hs.refChannel()
	hs.send(chanRef, ref, "START")
	if got := hs.game(chanGame).Player(1).Role; got != role {
		t.Fatalf("the draw gave Alice %s, not %s", got, role)
	}
	if alice == "dead" {
		hs.send(chanRef, ref, "MODKILL Alice")
	}
	switch phase {
	case "night":
		hs.send(chanRef, ref, "CLOSE")
	case "ended":
		hs.send(chanRef, ref, "END")
	}
	if got := string(hs.game(chanGame).Phase); got != phase {
		t.Fatalf("world %s/%s is in phase %s", phase, alice, got)
	}
	w := &chanWorld{phase: phase, alice: alice, seed: seed, hs: hs}
	w.save(t)
	return w
}

// chanSender is who sends a case's message.
type chanSender struct {
	name, from string
	kind       engine.ActorKind
}

// chanOutcome is what became of one case.
type chanOutcome struct {
	applied bool
	// public is every copy of thread mail the case caused, as sent.
	public []string
}

// everydayRoles are the roles Alice plays in the everyday run of
// TestEveryVerbEveryChannel: the Townsperson, whose mail the others' is
// compared with, and the Mafioso, the role with the most to hide. The
// full counts, which CI plays, give her every role.
var everydayRoles = map[string]bool{string(engine.Townsperson): true, string(engine.Mafia): true}

// TestEveryVerbEveryChannel sends every verb of the grammar to every kind
// of address, from a living player of each role, a dead player, an
// observer and the referee, before the start, by day, by night and after
// the end. For each it checks what was applied against the rules engine,
// that a misplaced line is never relayed and is answered with the address
// where it belongs (with the thread's Reply-To when that is the thread),
// that the rest of the message is handled as usual, and that what the other
// players receive does not depend on the sender's role.
func TestEveryVerbEveryChannel(t *testing.T) {
	t.Parallel()
	base := signupWorld(t)
	roles := []string{string(engine.Mafia), string(engine.Inspector), string(engine.Doctor),
		string(engine.Vigilante), string(engine.Townsperson)}
	alice := chanSender{"Alice", addr("Alice"), engine.ByPlayer}
	others := []chanSender{{"observer", chanObs, engine.ByObserver}, {"referee", chanRef, engine.ByReferee}}

	type key struct{ phase, channel, verb string }
	var mu sync.Mutex                       // guards public and cases
	public := map[key]map[string][]string{} // by Alice's role
	cases := 0
	run := func(t *testing.T, w *chanWorld, senders []chanSender) {
		w.hs.t = t
		for _, s := range senders {
			for _, ch := range everyChannel {
				for _, v := range everyVerb {
					name := fmt.Sprintf("%s/%s/%s/%s", w.phase, describeSender(w, s), ch, v.verb)
					out := checkCase(t, name, w, s, ch, v.verb, v.line)
					mu.Lock()
					cases++
					if s.kind == engine.ByPlayer && w.alice != "dead" && w.alice != "" {
						k := key{w.phase, ch, string(v.verb)}
						if public[k] == nil {
							public[k] = map[string][]string{}
						}
						public[k][w.alice] = out.public
					}
					mu.Unlock()
				}
			}
		}
	}
	// Every world is made from the sign-up world's snapshot before any
	// case runs in it (a case that changed a world restores it), and
	// then each world, a database and host of its own, runs its cases
	// in parallel with the others.
	type world struct {
		w       *chanWorld
		senders []chanSender
	}
	worlds := []world{{base, append([]chanSender{alice}, others...)}}
	phases := []string{"day", "night", "ended"}
	if raceEnabled {
		// The day's worlds take the host through every path a case
		// takes; the night's and the end's differ in the rules' answers,
		// which the run without the race detector checks.
		phases = phases[:1]
	}
	for _, phase := range phases {
		for _, r := range roles {
			if !fullCounts && !everydayRoles[r] {
				continue
			}
			senders := []chanSender{alice}
			if r == string(engine.Townsperson) {
				senders = append(senders, others...)
			}
			worlds = append(worlds, world{startedWorld(t, base, phase, r), senders})
		}
		worlds = append(worlds, world{startedWorld(t, base, phase, "dead"), []chanSender{alice}})
	}
	t.Run("worlds", func(t *testing.T) {
		for _, wo := range worlds {
			t.Run(wo.w.phase+"/"+wo.w.alice, func(t *testing.T) {
				t.Parallel()
				run(t, wo.w, wo.senders)
				wo.w.checkQueued(t)
			})
		}
	})
	// No role shows: the thread mail a line causes is byte for byte the
	// same whatever Alice's role, but for the night actions sent where
	// they belong, which are the roles' own to make.
	for k, byRole := range public {
		if (k.channel == "private" || k.channel == "mafia") && verbKind(command.Misplaced{Verb: command.Verb(k.verb)}) == "night" {
			continue
		}
		want := byRole[string(engine.Townsperson)]
		for r, got := range byRole {
			if !slices.Equal(got, want) {
				t.Errorf("%s/%s/%s: the thread mail differs for a %s (%d copies) and a Townsperson (%d copies): %s",
					k.phase, k.channel, k.verb, r, len(got), len(want), firstDifference(got, want))
			}
		}
	}
	t.Logf("%d cases", cases)
}

func describeSender(w *chanWorld, s chanSender) string {
	if s.kind != engine.ByPlayer {
		return s.name
	}
	switch w.alice {
	case "":
		return "player"
	case "dead":
		return "dead"
	}
	return "alive-" + w.alice
}

// checkCase sends one message, "Just chatting" and the line, and checks
// everything that came of it.
func checkCase(t *testing.T, name string, w *chanWorld, s chanSender, ch string, verb command.Verb, line string) chanOutcome {
	t.Helper()
	hs := w.hs
	before := hs.game(chanGame)
	seqBefore, gamesBefore := hs.h.games[chanGame].seq, len(hs.h.games)
	token := hs.token(chanGame, s.from)
	to := map[string]string{
		"thread": "host+" + chanGame + "-t-" + token + "@example.org", "private": "host+" + chanGame + "-p-" + token + "@example.org",
		"mafia": "host+" + chanGame + "-m-" + token + "@example.org", "signup": "host+" + chanGame + "@example.org",
		"host": "host@example.org",
	}[ch]
	set := map[string]command.Set{"thread": command.Thread, "private": command.Private, "mafia": command.Mafia,
		"signup": command.Signup, "host": command.Host}[ch]
	if ch == "private" && s.kind == engine.ByReferee {
		set = command.Referee
	}
	home := slices.Contains(command.Verbs(set), verb)
	// The same words whoever sends them, so that copies can be compared.
	chat := fmt.Sprintf("Just chatting about %s %s %s", w.phase, ch, verb)
	wantApplied := home && acceptedNow(t, hs, before, s, ch, set, line)
	// Without an authserv-id a NEW GAME or JOIN the rules would take is
	// held until its sender replies to a one-time address.
	held := wantApplied && (ch == "signup" || ch == "host") && (verb == command.Join || verb == command.NewGame)

	hs.send(s.from, to, chat+"\n\n"+line)
	sent := w.newMail(t)

	var answers []string
	var answerReplyTo []string
	var out chanOutcome
	// A message to the thread whose lines were all done is answered in
	// the sender's own thread copy, whose first line says so.
	folded := false
	// Mail to the sign-up and host addresses proves nothing of its sender
	// without an authserv-id: its answer names each line by its verb alone
	// and echoes nothing else of it (docs/adversaries.md), unless it comes
	// from a referee the configuration names.
	// A player's mail to the host's own address during the game is
	// answered as misdirected: to the registered address, each line quoted,
	// Reply-To where it belongs (TestMisdirectedSameShapeForEveryRole).
	misdirected := ch == "host" && s.kind == engine.ByPlayer && (w.phase == "day" || w.phase == "night") &&
		verb != command.Help && verb != command.NewGame
	quoted := line
	if (ch == "signup" || ch == "host") && s.from != chanRef && !misdirected {
		quoted = string(verb)
	}
	for _, m := range sent {
		l := parseLetter(m.Raw)
		body := l.Text
		mine := slices.ContainsFunc(m.To, func(a string) bool { return strings.EqualFold(a, s.from) })
		if mine && (m.Kind == "confirm" || m.Kind == "error") && strings.Contains(body, quoted) {
			if quoted != line && strings.Contains(body, line) {
				t.Errorf("%s: the answer to unproven mail echoes the line %q:\n%s", name, line, body)
			}
			answers = append(answers, body)
			answerReplyTo = append(answerReplyTo, l.ReplyTo)
			continue
		}
		// The folded answer is the copy's first line, or, under the news
		// the line caused (a deadline moved, a close), its second.
		head := strings.SplitN(body, "\n", 3)
		if receipt := "Your message: " + line + " done"; mine && m.Kind == "thread" && ch == "thread" &&
			(head[0] == receipt || len(head) > 1 && head[1] == receipt) {
			answers = append(answers, body)
			answerReplyTo = append(answerReplyTo, l.ReplyTo)
			folded = true
			continue
		}
		if strings.Contains(body, line) || strings.Contains(l.HTML, line) {
			t.Errorf("%s: the line reached %v in %s mail:\n%s", name, m.To, m.Kind, body)
		}
		// The observer's and the referee's copies are the public view:
		// every player's own copy also shows their own position, which
		// depends on their role in this draw.
		if (m.Kind == "thread" || m.Kind == "dawn" || m.Kind == "end") && (slices.Contains(m.To, chanObs) || slices.Contains(m.To, chanRef)) {
			out.public = append(out.public, strings.Join(m.To, ",")+"\n"+string(m.Raw))
		}
	}
	sort.Strings(out.public)
	if len(answers) != 1 {
		t.Errorf("%s: %d answers quote the line (want exactly one)", name, len(answers))
		return out
	}
	answer, replyTo := answers[0], answerReplyTo[0]
	switch {
	case misdirected:
		if !strings.Contains(answer, "> "+line) || !strings.Contains(answer, "nothing in it was done") {
			t.Errorf("%s: the misdirected answer does not quote the line as not done:\n%s", name, answer)
		}
	case held:
		if !strings.Contains(answer, "… "+quoted) || !strings.Contains(answer, "Waiting for your reply") ||
			!strings.Contains(replyTo, "-c-") {
			t.Errorf("%s: the answer does not hold the line for confirmation (Reply-To %s):\n%s", name, replyTo, answer)
		}
		if hs.h.games[chanGame].seq != seqBefore || len(hs.h.games) != gamesBefore {
			t.Errorf("%s: a line held for confirmation changed a game", name)
		}
		wantApplied = false
	case folded, strings.Contains(answer, "✓ "+quoted):
		out.applied = true
	case !strings.Contains(answer, "✗ "+quoted) && !(quoted != line && strings.Contains(answer, "✗ (a line of your message)")):
		t.Errorf("%s: the answer neither accepts nor refuses the line:\n%s", name, answer)
	}
	if out.applied != wantApplied {
		t.Errorf("%s: applied %v, want %v:\n%s", name, out.applied, wantApplied, answer)
	}
	for _, bad := range []string{"<no value>", "%!", "game  ", "game (", " ()"} {
		if strings.Contains(answer, bad) {
			t.Errorf("%s: the answer holds %q:\n%s", name, bad, answer)
		}
	}
	if !home && !misdirected {
		checkMisplaced(t, name, w, s, ch, verb, token, answer, replyTo)
		if hs.h.games[chanGame].seq != seqBefore && ch != "thread" && ch != "mafia" && ch != "private" {
			t.Errorf("%s: a misplaced line changed the game", name)
		}
	}
	// The rest of the message is handled as usual: in the thread, a
	// living player's or the referee's words reach the others, and after
	// the end every participant's do (post-game talk).
	relays := (s.kind == engine.ByPlayer && (w.alice != "dead" || w.phase == "ended") && w.phase != "signup") ||
		(s.kind == engine.ByReferee && w.phase != "signup")
	if ch == "thread" && relays && !(home && verb == command.Announce) {
		if !slices.ContainsFunc(sent, func(m store.OutMessage) bool {
			return m.Kind == "thread" && slices.Contains(m.To, addr("Bob")) && strings.Contains(parseLetter(m.Raw).Text, chat)
		}) {
			t.Errorf("%s: the discussion did not reach Bob", name)
		}
	}
	if out.applied || hs.h.games[chanGame].seq != seqBefore || len(hs.h.games) != gamesBefore {
		w.restore(t)
	}
	return out
}

// acceptedNow asks the rules engine, on a copy of the game, whether the
// line is accepted at its own address: the host must apply exactly that.
func acceptedNow(t *testing.T, hs *harness, s *engine.State, who chanSender, ch string, set command.Set, line string) bool {
	t.Helper()
	c, ok, err := command.ParseLine(line, set)
	if !ok {
		t.Fatalf("%q does not read in %s", line, set)
	}
	if err != nil {
		return false // a line that cannot be read is answered, not applied
	}
	switch ch {
	case "host":
		if c.Verb == command.NewGame {
			return who.kind == engine.ByReferee
		}
		return true // HELP
	case "signup":
		cmd := engine.Command{Verb: engine.Verb(c.Verb), Channel: engine.Signup, Name: c.Name,
			By: engine.Actor{Kind: engine.ByOutsider, Address: who.from}}
		_, err := engine.Apply(s.Clone(), cmd, engine.Env{Now: hs.now})
		return err == nil
	}
	actor := engine.Referee
	switch who.kind {
	case engine.ByObserver:
		actor = engine.Actor{Kind: engine.ByObserver, Address: who.from}
	case engine.ByPlayer:
		actor = engine.PlayerActor(1)
	}
	engineCh := map[string]engine.Channel{"thread": engine.Thread, "private": engine.Private, "mafia": engine.MafiaCh}[ch]
	cmd, err := hs.h.engineCommand(c, actor, engineCh)
	if err != nil {
		return false
	}
	_, err = engine.Apply(s.Clone(), cmd, engine.Env{Now: hs.now, Rand: drawSeed(0)})
	return err == nil
}

// checkMisplaced checks the answer to a line sent where it does not
// belong: why, and the exact address where it does.
func checkMisplaced(t *testing.T, name string, w *chanWorld, s chanSender, ch string, verb command.Verb, token, answer, replyTo string) {
	t.Helper()
	thread := "host+" + chanGame + "-t-" + token + "@example.org"
	private := "host+" + chanGame + "-p-" + token + "@example.org"
	signup := "host+" + chanGame + "@example.org"
	kind := verbKind(command.Misplaced{Verb: verb, Homes: homesOf(verb)})
	// At the host's own address the game is known only while it runs.
	known := ch != "host" || w.phase != "ended"
	var want []string
	wantReplyTo := private
	if ch == "host" {
		wantReplyTo = ""
	}
	switch {
	case !known:
		if kind == "join" || kind == "newgame" {
			break
		}
		want = []string{"ask its referee"}
	case w.phase == "ended" && ch != "host":
		want = []string{"is over"}
	case s.kind == engine.ByPlayer:
		switch kind {
		case "vote", "thread":
			want, wantReplyTo = []string{thread}, thread
		case "night", "private":
			want = []string{private}
		case "join":
			want = []string{signup}
		case "newgame":
			want = []string{"host@example.org"}
		default:
			want = []string{"command for the referee"}
		}
	case s.kind == engine.ByReferee:
		switch kind {
		case "vote", "night":
			want = []string{"does not vote"}
		case "join":
			want = []string{"cannot also play"}
		case "newgame":
			want = []string{"host@example.org"}
		default:
			want = []string{private}
		}
	case s.kind == engine.ByObserver:
		switch kind {
		case "vote", "night":
			want = []string{"do not vote or act"}
		case "join":
			want = []string{"observer"}
		case "thread", "private":
			want = []string{"not for observers"}
		case "newgame":
			want = []string{"host@example.org"}
		default:
			want = []string{"command for the referee"}
		}
	}
	if ch == "host" && s.kind == engine.ByObserver && known {
		// An observer is no one the host knows at its own address.
		want = nil
	}
	for _, wnt := range want {
		if !strings.Contains(answer, wnt) {
			t.Errorf("%s: the answer does not say %q:\n%s", name, wnt, answer)
		}
	}
	if replyTo != wantReplyTo && !(ch == "host" && s.kind == engine.ByObserver) {
		t.Errorf("%s: Reply-To %q, want %q", name, replyTo, wantReplyTo)
	}
}

// homesOf lists the sets that understand a verb.
func homesOf(v command.Verb) []command.Set {
	var out []command.Set
	for _, s := range []command.Set{command.Thread, command.Private, command.Mafia, command.Referee, command.Signup, command.Host} {
		if slices.Contains(command.Verbs(s), v) {
			out = append(out, s)
		}
	}
	return out
}

// firstDifference names the first line where two lists of messages differ.
func firstDifference(a, b []string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		la, lb := strings.Split(a[i], "\n"), strings.Split(b[i], "\n")
		for j := 0; j < len(la) && j < len(lb); j++ {
			if la[j] != lb[j] {
				return fmt.Sprintf("copy %d, line %d: %q against %q", i, j+1, la[j], lb[j])
			}
		}
		if len(la) != len(lb) {
			return fmt.Sprintf("copy %d: %d lines against %d", i, len(la), len(lb))
		}
	}
	return fmt.Sprintf("%d copies against %d", len(a), len(b))
}
