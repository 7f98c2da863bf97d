//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// TestIntegrationDayAndNight plays Day 1 and Night 1 of a seven-player game
// (two Mafiosi, an Inspector, a Doctor, three Townspeople) through a real
// Postfix and Dovecot: the host runs as serve runs it, with game time 1800
// times faster than real time, and the players read their mail over IMAP
// and answer through Postfix. Afterwards every participant's mailbox is
// read back from Dovecot and checked: well-formed mail, one conversation
// per thread by References, the reader's own Reply-To on every copy, and
// no mail or role a reader should not see.
func TestIntegrationDayAndNight(t *testing.T) {
	t.Parallel()
	// Game time starts on a Monday morning, so that no weekend (D7) holds
	// the day; at 1800x the game would reach Friday evening only after
	// about three real minutes.
	now := time.Now()
	e := newE2E(t, host.Clock{Anchor: now, Start: service.WeekendEndAfter(now), Speed: 1800},
		"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace")
	// Rounds long enough not to run out while mail travels on a loaded
	// machine (three days are 144 real seconds, two 96): the day closes
	// early once everyone has locked, and the night at the first one-hour
	// mark (two real seconds) once every action is in.
	e.setUpGame("players=7 mafia=2 inspectors=1 doctors=1 day_length=3d night_step=1h night_length=2d")

	s := e.game()
	var mafia, town []*person
	var inspector, doctor *person
	for i, p := range e.players {
		if got := s.Players[i].Role; got != p.role {
			t.Fatalf("%s's role message says %s, the game says %s", p.name, p.role, got)
		}
		switch p.role {
		case engine.Mafia:
			mafia = append(mafia, p)
		case engine.Inspector:
			inspector = p
		case engine.Doctor:
			doctor = p
		case engine.Townsperson:
			town = append(town, p)
		}
	}
	if len(mafia) != 2 || len(town) != 3 || inspector == nil || doctor == nil {
		t.Fatalf("roles drawn: %d Mafia, %d Townspeople, Inspector %v, Doctor %v", len(mafia), len(town), inspector != nil, doctor != nil)
	}

	// Day 1: the town votes out a Townsperson, who votes back; the round
	// closes early once every player not in jeopardy has locked (D5).
	accused, accuser := town[0], town[1]
	slot := e.slotOf
	accuser.send(accuser.thread, fmt.Sprintf("VOTE %s\nLOCK\n\n%s has dodged every question today.", accused.name, accused.name))
	e.waitGame(accuser.name+"'s locked vote", func(s *engine.State) bool {
		v := s.Player(slot(accuser))
		return v.Vote == slot(accused) && v.Locked
	})
	accused.send(accused.thread, fmt.Sprintf("VOTE %s\n\nThis is a rush, and %s is leading it.", accuser.name, accuser.name))
	e.waitGame(accused.name+"'s vote", func(s *engine.State) bool { return s.Player(slot(accused)).Vote == slot(accuser) })
	for _, p := range e.players {
		if p == accused || p == accuser {
			continue
		}
		p.send(p.thread, "VOTE "+accused.name+"\nLOCK")
		e.waitGame(p.name+"'s vote", func(s *engine.State) bool {
			return s.Phase != engine.DayPhase || s.Player(slot(p)).Vote == slot(accused)
		})
	}
	s = e.waitGame("nightfall", func(s *engine.State) bool { return s.Phase == engine.NightPhase })
	if d := s.Player(slot(accused)); d.Alive || d.Cause != engine.ByVote {
		t.Fatalf("after the vote %s is alive=%v, cause %q", accused.name, d.Alive, d.Cause)
	}

	// Night 1: one Mafioso names the victim privately, the other writes to
	// the mafia list, the Inspector inspects the Mafioso they were not
	// told of, and the Doctor protects themselves.
	victim := accuser
	mafia[0].send(mafia[0].private, "KILL "+victim.name)
	// The mafia list post is no action the night waits for: it must have
	// arrived before the night can end, or it might come after the end
	// of the test.
	const mafiaPost = "Agreed, a quiet one tonight."
	mafia[1].send(mafia[1].mafia, mafiaPost)
	mafia[0].await("the mafia list post", func(l letter) bool { return l.Kind == "mafia" && strings.Contains(l.Text, mafiaPost) })
	inspected := mafia[0]
	if s.Known != 0 && s.Player(s.Known).Address == mafia[0].addr {
		inspected = mafia[1]
	}
	inspector.send(inspector.private, "INSPECT "+inspected.name)
	doctor.send(doctor.private, "PROTECT "+doctor.name)
	s = e.waitGame("Day 2", func(s *engine.State) bool { return s.Phase == engine.DayPhase && s.Day == 2 })
	if d := s.Player(slot(victim)); d.Alive || d.Cause != engine.ByMafia {
		t.Fatalf("after the night %s is alive=%v, cause %q", victim.name, d.Alive, d.Cause)
	}

	// Let every message reach its mailbox, stop the host, and read what
	// it sent from its store.
	e.settle()
	final := e.game()
	e.rt.Stop(t)
	st, err := store.Open(context.Background(), e.db, store.Config{Logger: e.log})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, err := st.OutMessages(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := st.Participants(context.Background(), e2eGame)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.stack.WaitDelivered(); err != nil {
		e.t.Fatal(err)
	}

	sentTo := map[string][]string{} // address -> Message-IDs sent to it
	for _, m := range out {
		if m.Status != store.OutSent {
			t.Errorf("outbox message %s to %v is %s: %s", m.MessageID, m.To, m.Status, m.LastError)
		}
		for _, to := range m.To {
			sentTo[strings.ToLower(to)] = append(sentTo[strings.ToLower(to)], strings.Trim(m.MessageID, "<>"))
		}
	}
	tokens := map[string]string{} // address -> token
	for _, p := range parts {
		tokens[strings.ToLower(p.Address)] = p.Token
	}

	readers := []*checkedReader{{p: e.ref, referee: true, knows: map[int]bool{}}}
	for _, sp := range final.Players {
		r := &checkedReader{p: e.player(sp.Name), slot: sp.Slot, role: sp.Role, knows: map[int]bool{sp.Slot: true}}
		switch sp.Role {
		case engine.Mafia:
			for _, m := range mafia {
				r.knows[slot(m)] = true
			}
		case engine.Inspector:
			if final.Known != 0 {
				r.knows[final.Known] = true // S1: inspector_knows_mafioso
			}
			r.knows[slot(inspected)] = true
		}
		readers = append(readers, r)
	}
	roots := map[byte]map[string][]string{} // channel letter -> root -> readers
	for _, r := range readers {
		r.token = tokens[r.p.addr]
		if r.token == "" {
			t.Fatalf("no token for %s", r.p.addr)
		}
		letters := r.p.mailbox()
		c := mailCheck{t: t, e: e, r: r, final: final, tokens: tokens}
		c.check(letters, sentTo[r.p.addr])
		for ch, root := range c.roots {
			if ch == 't' || ch == 'm' {
				continue
			}
			if roots[ch] == nil {
				roots[ch] = map[string][]string{}
			}
			roots[ch][root] = append(roots[ch][root], r.p.name)
		}
		for ch, rs := range c.rounds {
			if roots[ch] == nil {
				roots[ch] = map[string][]string{}
			}
			for _, root := range rs {
				roots[ch][root] = append(roots[ch][root], r.p.name)
			}
		}
		if r.referee {
			continue
		}
		// What the day and night must have brought everyone.
		dawn := false
		for _, l := range letters {
			if l.Kind == "dawn" && strings.Contains(l.Text, victim.name) {
				dawn = true
			}
		}
		if !dawn {
			t.Errorf("%s has no dawn report naming %s", r.p.name, victim.name)
		}
	}
	// Everyone has Day 1 of the town thread, one conversation for all;
	// only the Mafiosi have the mafia list.
	if got := len(roots['t']["g1.thread.d1@"+e.stack.Domain()]); got != len(readers) {
		t.Errorf("%d of %d readers have Day 1 of the town thread: %v", got, len(readers), roots['t'])
	}
	for root, who := range roots['m'] {
		if len(who) > len(mafia) {
			t.Errorf("%d readers have the mafia list's conversation %s, want at most the %d Mafiosi: %v", len(who), root, len(mafia), who)
		}
	}
	if len(roots['m']) == 0 {
		t.Error("no one has the mafia list")
	}
	if got := len(roots['p']); got != len(readers) {
		t.Errorf("%d private conversations for %d readers: one each is wanted", got, len(readers))
	}
}

func (e *e2e) slotOf(p *person) int {
	e.t.Helper()
	for _, sp := range e.game().Players {
		if strings.EqualFold(sp.Address, p.addr) {
			return sp.Slot
		}
	}
	e.t.Fatalf("%s holds no seat", p.name)
	return 0
}

// checkedReader is a participant whose mailbox is checked, and what they may
// know: the slots whose roles they are entitled to learn.
type checkedReader struct {
	p       *person
	referee bool
	slot    int
	role    engine.Role
	token   string
	knows   map[int]bool
}

// mailCheck checks one reader's mailbox.
type mailCheck struct {
	t      *testing.T
	e      *e2e
	r      *checkedReader
	final  *engine.State
	tokens map[string]string
	// roots maps each conversation's channel letter (t, p, m) to its
	// References root (for t and m, one of them); rounds lists the roots
	// of the town thread's and the mafia list's conversations, one per
	// round.
	roots  map[byte]string
	rounds map[byte][]string
}

// roundRoot is the root of one round's conversation of the town thread
// or the mafia list.
var roundRoot = regexp.MustCompile(`^g1\.(thread|mafia)\.(signup|d\d+|n\d+|end|over)@`)

// What the host may send, by X-Mafiamail-Kind (docs/design.md).
var kinds = []string{"role", "thread", "tally", "dawn", "confirm", "error", "mafia", "referee", "end", "private"}

var (
	// roleWords finds a role named in a line: with a player's name in the
	// same line, the line tells that player's role (or, for the Town, that
	// they are not Mafia, which is what an alignment inspection answers).
	roleWords = map[engine.Role]*regexp.Regexp{
		engine.Mafia:       regexp.MustCompile(`\bMafi(a|oso|osi)\b`),
		engine.Townsperson: regexp.MustCompile(`\b(Townsperson|not Mafia)\b`),
		engine.Inspector:   regexp.MustCompile(`\bInspector\b`),
		engine.Doctor:      regexp.MustCompile(`\bDoctor\b`),
		engine.Vigilante:   regexp.MustCompile(`\bVigilante\b`),
	}
)

func (c *mailCheck) check(letters []letter, sent []string) {
	t, r := c.t, c.r
	t.Helper()
	who := r.p.name
	hostAddr := c.e.hostAddr()
	replyRE := regexp.MustCompile(`^` + regexp.QuoteMeta(hostUser+"+"+e2eGame+"-") + `([tpm])-([a-z0-9]+)@` +
		regexp.QuoteMeta(c.e.stack.Domain()) + `$`)

	// The mailbox holds exactly what the host sent this reader: each
	// message once, none missing, none meant for someone else.
	var ids []string
	for _, l := range letters {
		ids = append(ids, l.MessageID)
	}
	slices.Sort(ids)
	want := slices.Clone(sent)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("%s's mailbox holds %d messages, the host sent %d:\nheld %v\nsent %v", who, len(ids), len(want), ids, want)
	}
	if len(letters) == 0 {
		t.Errorf("%s's mailbox is empty", who)
		return
	}

	type conv struct {
		ch      byte
		subject string
		listID  string
		n       int
	}
	convs := map[string]*conv{}
	roles := 0
	entitledSeen := map[int]bool{}
	for _, l := range letters {
		where := fmt.Sprintf("%s's message %s (%s, %q)", who, l.MessageID, l.Kind, l.Subject)
		if l.Err != nil {
			t.Errorf("%s does not parse: %v", where, l.Err)
			continue
		}
		c.wellFormed(where, l)

		// Addressing: from the host, to this reader alone.
		if from, err := l.Header.AddressList("From"); err != nil || len(from) != 1 || !strings.EqualFold(from[0].Address, hostAddr) {
			t.Errorf("%s: From %v (%v), want the host %s", where, from, err, hostAddr)
		}
		if to, err := l.Header.AddressList("To"); err != nil || len(to) != 1 || !strings.EqualFold(to[0].Address, r.p.addr) {
			t.Errorf("%s: To %v (%v), want %s alone", where, to, err, r.p.addr)
		}
		if got := l.Header.Get("Delivered-To"); !strings.EqualFold(got, r.p.addr) {
			t.Errorf("%s: Delivered-To %q, want %s", where, got, r.p.addr)
		}
		if l.Game != e2eGame || !slices.Contains(kinds, l.Kind) {
			t.Errorf("%s: X-Mafiamail-Game %q, X-Mafiamail-Kind %q", where, l.Game, l.Kind)
		}
		if got := l.Header.Get("Auto-Submitted"); got != "auto-generated" {
			t.Errorf("%s: Auto-Submitted %q", where, got)
		}

		// The conversation: References names its root, In-Reply-To one of
		// the references, and the Reply-To is the reader's own address in
		// that conversation.
		refs := l.References()
		irt, err := l.Header.MsgIDList("In-Reply-To")
		if len(refs) == 0 || err != nil || len(irt) != 1 || !slices.Contains(refs, irt[0]) {
			t.Errorf("%s: References %v, In-Reply-To %v (%v)", where, refs, irt, err)
			continue
		}
		m := replyRE.FindStringSubmatch(l.ReplyTo)
		if m == nil || m[2] != r.token {
			t.Errorf("%s: Reply-To %q is not %s's own address in game %s", where, l.ReplyTo, who, e2eGame)
			continue
		}
		ch := m[1][0]
		// A conversation keeps its subject, but for two kinds of mail that
		// take one of their own within it: each mail of the referee's
		// channel says what it is and whether it waits for the referee, and
		// the role message has a subject that never names the role, so that
		// it can be found again.
		ownSubject := l.Kind == "role" || r.referee && ch == 'p'
		cv := convs[refs[0]]
		if cv == nil {
			cv = &conv{ch: ch, listID: l.Header.Get("List-Id")}
			convs[refs[0]] = cv
		}
		if cv.subject == "" && !ownSubject {
			cv.subject = l.Subject
		}
		cv.n++
		if cv.ch != ch || !ownSubject && cv.subject != l.Subject || cv.listID != l.Header.Get("List-Id") {
			t.Errorf("%s: in conversation %s with Reply-To channel %c, subject %q, List-Id %q; its first message had %c, %q, %q",
				where, refs[0], ch, l.Subject, l.Header.Get("List-Id"), cv.ch, cv.subject, cv.listID)
		}

		// Secrets: no one else's addresses, no mafia list for the town,
		// no role message but one's own, no role one may not know.
		for addr, tok := range c.tokens {
			if addr != r.p.addr && c.contains(l, tok) {
				t.Errorf("%s carries the secret token of %s", where, addr)
			}
		}
		if r.role != engine.Mafia && (ch == 'm' || l.Kind == "mafia" || c.contains(l, "+"+e2eGame+"-m-")) {
			t.Errorf("%s: mafia list mail reached %s (%s)", where, who, roleOr(r.role, "the referee"))
		}
		if l.Kind == "role" {
			roles++
			want := fmt.Sprintf("You are %s, and your role is %s.", who, r.role)
			if r.referee || !strings.Contains(l.Text, want) {
				t.Errorf("%s: a role message that does not say %q:\n%s", where, want, l.Text)
			}
		}
		if r.referee {
			continue // the referee knows every role (F2)
		}
		for _, body := range []string{l.Text, htmlLines(l.HTML)} {
			for _, line := range strings.Split(body, "\n") {
				for _, q := range c.final.Players {
					if q.Slot == r.slot || !roleWords[q.Role].MatchString(line) || !nameRE(q.Name).MatchString(line) {
						continue
					}
					if r.knows[q.Slot] {
						entitledSeen[q.Slot] = true
						continue
					}
					t.Errorf("%s tells %s's role (%s): %q", where, q.Name, q.Role, strings.TrimSpace(line))
				}
			}
		}
	}
	if !r.referee && roles != 1 {
		t.Errorf("%s got %d role messages, want their own alone", who, roles)
	}
	// The detector above must see what the reader may know: the fellow
	// Mafiosi, the Inspector's known Mafioso and inspection.
	for slot := range r.knows {
		if slot != r.slot && !entitledSeen[slot] {
			t.Errorf("%s was never told the role of %s, which they are entitled to know", who, c.final.Player(slot).Name)
		}
	}

	// One conversation for one's private channel; the town thread and,
	// for a Mafioso, the mafia list have one per round, each named by
	// its round (docs/mail.md), so that no conversation grows past what
	// a mail client keeps together.
	c.roots = map[byte]string{}
	c.rounds = map[byte][]string{}
	for root, cv := range convs {
		if cv.ch == 't' || cv.ch == 'm' {
			if !roundRoot.MatchString(root) {
				t.Errorf("%s has a %c conversation whose root %s names no round", who, cv.ch, root)
			}
			c.rounds[cv.ch] = append(c.rounds[cv.ch], root)
			c.roots[cv.ch] = root
			continue
		}
		if prev, dup := c.roots[cv.ch]; dup {
			t.Errorf("%s has two %c conversations: %s and %s", who, cv.ch, prev, root)
		}
		c.roots[cv.ch] = root
	}
	wantCh := "pt"
	if r.role == engine.Mafia {
		wantCh = "mpt"
	}
	var gotCh []byte
	for ch := range c.roots {
		gotCh = append(gotCh, ch)
	}
	slices.Sort(gotCh)
	if string(gotCh) != wantCh {
		t.Errorf("%s's conversations are %q, want %q", who, gotCh, wantCh)
	}
}

// wellFormed checks the bytes and MIME structure of a message.
func (c *mailCheck) wellFormed(where string, l letter) {
	t := c.t
	t.Helper()
	for i, line := range bytes.Split(l.Raw, []byte("\r\n")) {
		if len(line) > 998 {
			t.Errorf("%s: line %d has %d octets (RFC 5322 allows 998)", where, i+1, len(line))
		}
		if bytes.ContainsAny(line, "\r\n") {
			t.Errorf("%s: line %d holds a bare CR or LF", where, i+1)
		}
		for _, b := range line {
			if b >= 0x80 {
				t.Errorf("%s: line %d holds 8-bit data", where, i+1)
				break
			}
		}
	}
	if _, err := l.Header.Date(); err != nil {
		t.Errorf("%s: Date: %v", where, err)
	}
	if l.MessageID == "" || l.Subject == "" {
		t.Errorf("%s: Message-Id %q, Subject %q", where, l.MessageID, l.Subject)
	}
	// The end mail's HTML shows a picture beside it; the mail that opens
	// a vote or moves its deadline carries its calendar event after both.
	alternative := slices.Equal(l.Parts, []string{"text/plain", "text/html"}) ||
		slices.Equal(l.Parts, []string{"text/plain", "text/html", "image/png"})
	withCalendar := l.MediaType() == "multipart/mixed" &&
		slices.Equal(l.Parts, []string{"text/plain", "text/html", "attachment text/calendar"})
	if l.Header.Get("MIME-Version") != "1.0" || !(l.MediaType() == "multipart/alternative" && alternative || withCalendar) {
		t.Errorf("%s: MIME-Version %q, %s with parts %v; want 1.0, multipart/alternative of text/plain and text/html",
			where, l.Header.Get("MIME-Version"), l.MediaType(), l.Parts)
	}
	if strings.TrimSpace(l.Text) == "" || strings.TrimSpace(l.HTML) == "" || !utf8.ValidString(l.Text) || !utf8.ValidString(l.HTML) {
		t.Errorf("%s: empty or invalid UTF-8 text (%d bytes) or HTML (%d bytes)", where, len(l.Text), len(l.HTML))
	}
}

// contains reports whether s appears in the message's header (unfolded)
// or its decoded text or HTML.
func (c *mailCheck) contains(l letter, s string) bool {
	s = strings.ToLower(s)
	head, _, _ := bytes.Cut(l.Raw, []byte("\r\n\r\n"))
	unfolded := strings.NewReplacer("\r\n ", " ", "\r\n\t", " ").Replace(string(head))
	for _, part := range []string{unfolded, l.Text, l.HTML} {
		if strings.Contains(strings.ToLower(part), s) {
			return true
		}
	}
	return false
}

func nameRE(name string) *regexp.Regexp {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
}

func roleOr(r engine.Role, alt string) string {
	if r == "" {
		return alt
	}
	return string(r)
}

// TestIntegrationCommandsAppliedOnce sends votes through Postfix while the
// host is down, while Dovecot is down (its IMAP session cut in IDLE), and
// after Dovecot is back, and delivers one message a second time with the
// same Message-ID. Every command must be applied exactly once: the game's
// event log holds one vote and one relayed post per message, and the
// second copy changes nothing.
func TestIntegrationCommandsAppliedOnce(t *testing.T) {
	t.Parallel()
	e := newE2E(t, host.Clock{}, "Alice", "Bob", "Carol", "Dave", "Erin")
	e.setUpGame("players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false")
	alice, bob, carol, dave, erin := e.player("Alice"), e.player("Bob"), e.player("Carol"), e.player("Dave"), e.player("Erin")

	// Each vote carries a line of discussion, relayed in the thread as a
	// post of its own: a second application would show as a second post
	// as well as a second vote.
	type vote struct {
		by, target *person
		note       string
		mail       sentMail
	}
	var votes []*vote
	cast := func(by, target *person) *vote {
		v := &vote{by: by, target: target, note: fmt.Sprintf("Note %d from %s: I have my doubts about %s.", len(votes)+1, by.name, target.name)}
		v.mail = by.send(by.thread, "VOTE "+target.name+"\n\n"+v.note)
		votes = append(votes, v)
		return v
	}
	votesAre := func(what string, pairs ...*person) {
		t.Helper()
		e.waitGame(what, func(s *engine.State) bool {
			for i := 0; i < len(pairs); i += 2 {
				if s.Player(e.slotOf(pairs[i])).Vote != e.slotOf(pairs[i+1]) {
					return false
				}
			}
			return true
		})
	}

	// The host is down (watcher, sender, clock, store) while three votes
	// arrive; they wait unseen in its INBOX until it starts again.
	e.rt.Stop(t)
	first := cast(alice, bob)
	cast(bob, carol)
	cast(carol, bob)
	if err := e.stack.WaitDelivered(); err != nil {
		e.t.Fatal(err)
	}
	waiting := map[string]bool{}
	for _, l := range readMailbox(t, e.stack.IMAPAddr(), hostUser) {
		if !l.Seen {
			waiting["<"+l.MessageID+">"] = true
		}
	}
	for _, v := range votes {
		if !waiting[v.mail.id] {
			t.Fatalf("%s's vote %s is not waiting unseen in the host's INBOX", v.by.name, v.mail.id)
		}
	}
	e.rt = e.startRuntime()
	votesAre("the votes sent while the host was down", alice, bob, bob, carol, carol, bob)

	// Dovecot stops while the watcher idles: Postfix queues what comes
	// meanwhile and delivers it once Dovecot is back, and the watcher
	// reconnects and finds it.
	waitFor(t, "the watcher to idle", func() bool { return e.rt.Watcher().Stats().Idling })
	before := e.rt.Watcher().Stats()
	if err := e.stack.StopDovecot(); err != nil {
		e.t.Fatal(err)
	}
	cast(alice, carol)
	cast(dave, bob)
	if err := e.stack.StartDovecot(); err != nil {
		e.t.Fatal(err)
	}
	votesAre("the votes sent while Dovecot was down", alice, carol, dave, bob)
	waitFor(t, "the watcher to idle again", func() bool { return e.rt.Watcher().Stats().Idling })
	if after := e.rt.Watcher().Stats(); after.Connects <= before.Connects || after.Disconnects <= before.Disconnects {
		t.Errorf("watcher stats before the restart %+v, after %+v: want a lost connection and a new login", before, after)
	}
	// Mail pushed to the new session in IDLE.
	cast(erin, alice)
	votesAre("the vote sent after Dovecot's restart", erin, alice)

	// The first vote again, byte for byte, under a new UID: applied
	// again, it would move Alice's vote back to Bob.
	failures := e.rt.Watcher().Stats().HandlerErrors
	e.submit(alice.addr, alice.thread, first.mail.raw)
	waitFor(t, "the second copy of the first vote to be taken in", func() bool {
		if e.rt.Watcher().Stats().HandlerErrors > failures {
			return true
		}
		copies := 0
		for _, l := range readMailbox(t, e.stack.IMAPAddr(), hostUser) {
			if "<"+l.MessageID+">" == first.mail.id {
				if !l.Seen {
					return false
				}
				copies++
			}
		}
		return copies == 2
	})
	if st := e.rt.Watcher().Stats(); st.HandlerErrors > failures {
		t.Fatalf("the handler failed %d times on the second copy of a message (the log above says why)", st.HandlerErrors-failures)
	}
	final := e.game()
	e.rt.Stop(t)

	want := map[string]string{"Alice": "Carol", "Bob": "Carol", "Carol": "Bob", "Dave": "Bob", "Erin": "Alice"}
	for voter, target := range want {
		if p := final.Player(e.slotOfIn(final, voter)); p.Vote != e.slotOfIn(final, target) {
			t.Errorf("%s votes for slot %d, want %s", voter, p.Vote, target)
		}
	}

	// The event log, read back from the store: each message recorded
	// once, and its vote and its post applied once.
	ctx := context.Background()
	st, err := store.Open(ctx, e.db, store.Config{Logger: e.log})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, o := range []store.Outcome{store.OutcomePending, store.OutcomeError, store.OutcomeRefused} {
		if ms, err := st.InboundByOutcome(ctx, o, 0); err != nil || len(ms) != 0 {
			t.Errorf("%d inbound messages %s (%v)", len(ms), o, err)
		}
	}
	applied, err := st.InboundByOutcome(ctx, store.OutcomeApplied, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]int64{} // Message-ID -> inbox rows
	for _, in := range applied {
		id := "<" + strings.Trim(in.MessageID, "<> ") + ">"
		rows[id] = append(rows[id], in.ID)
	}
	evs, err := st.Events(ctx, e2eGame, 0)
	if err != nil {
		t.Fatal(err)
	}
	type applied1 struct{ votes, posts []engine.Event }
	byCause := map[string]*applied1{}
	var allVotes, allPosts []engine.Event
	for _, se := range evs {
		ev, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			t.Fatalf("event %d: %v", se.Seq, err)
		}
		a := byCause[se.Cause]
		if a == nil {
			a = &applied1{}
			byCause[se.Cause] = a
		}
		switch ev.Type {
		case engine.EvVoted:
			a.votes = append(a.votes, ev)
			allVotes = append(allVotes, ev)
		case engine.EvThreadPost:
			a.posts = append(a.posts, ev)
			allPosts = append(allPosts, ev)
		}
	}
	for _, v := range votes {
		ids := rows[v.mail.id]
		if len(ids) != 1 {
			t.Errorf("%s's message %s has %d inbox rows, want 1", v.by.name, v.mail.id, len(ids))
			continue
		}
		a := byCause[fmt.Sprintf("inbox:%d", ids[0])]
		if a == nil || len(a.votes) != 1 || len(a.posts) != 1 {
			t.Errorf("%s's message %s caused %+v, want one vote and one post", v.by.name, v.mail.id, a)
			continue
		}
		if got := a.votes[0]; got.Slot != e.slotOfIn(final, v.by.name) || got.Target != e.slotOfIn(final, v.target.name) {
			t.Errorf("%s's message %s applied as a vote by slot %d for slot %d", v.by.name, v.mail.id, got.Slot, got.Target)
		}
		if got := a.posts[0].Text; got != v.note {
			t.Errorf("%s's message %s relayed %q, want %q", v.by.name, v.mail.id, got, v.note)
		}
	}
	if len(allVotes) != len(votes) || len(allPosts) != len(votes) {
		t.Errorf("the log holds %d votes and %d posts for %d messages", len(allVotes), len(allPosts), len(votes))
	}
	if len(applied) != len(rows) {
		t.Errorf("%d applied inbox rows for %d Message-IDs", len(applied), len(rows))
	}
}

// slotOfIn is the seat of the player called name in s.
func (e *e2e) slotOfIn(s *engine.State, name string) int {
	e.t.Helper()
	for _, p := range s.Players {
		if p.Name == name {
			return p.Slot
		}
	}
	e.t.Fatalf("no player %s", name)
	return 0
}
