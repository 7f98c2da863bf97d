package compose_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/message"
)

// participant is everyone who ever held an address in the game, with the
// secrets that must stay theirs.
type participant struct {
	addr, token, name string
	role              engine.Role
	slot              int
}

// participants lists every address and token of the game, including those
// of replaced players, from the event log.
func (h *harness) participants() []participant {
	var out []participant
	for _, l := range h.history {
		e := l.Event
		switch e.Type {
		case engine.EvPlayerJoined, engine.EvPlayerReplaced:
			out = append(out, participant{addr: e.Address, token: e.Token, name: e.Name, slot: e.Slot})
		}
	}
	for i := range out {
		if p := h.s.Player(out[i].slot); p != nil {
			out[i].role = p.Role
		}
	}
	out = append(out, participant{addr: refAddr, token: refToken, name: "Referee"})
	for a, tok := range h.dir.Observers {
		out = append(out, participant{addr: a, token: tok, name: "observer"})
	}
	return out
}

// rootRE reads a conversation's root: the game, then the thread or the
// mafia list with their round (sign-up, day, night, end), or a private
// channel.
var rootRE = regexp.MustCompile(`^<([a-z0-9]+)\.((?:thread|mafia)\.(?:signup|d[1-9][0-9]*|n[1-9][0-9]*|end)|p\.[a-z0-9-]+)@example\.org>$`)

// roundKey is the part of a root that names a round, for its words.
func roundKey(round string) string {
	var n int
	switch {
	case round == "Sign-up":
		return "signup"
	case round == "Game over":
		return "end"
	case strings.HasPrefix(round, "Day "):
		fmt.Sscanf(round, "Day %d", &n)
		return fmt.Sprint("d", n)
	case strings.HasPrefix(round, "Night "):
		fmt.Sscanf(round, "Night %d", &n)
		return fmt.Sprint("n", n)
	}
	return "?"
}

// checkInvariants reads back every message the game produced and checks
// what must hold for all of them: the structure, the header fields that
// thread and route them, and the secrets.
func checkInvariants(t *testing.T, h *harness) {
	t.Helper()
	people := h.participants()
	ids := map[string]string{}
	roleWords := []engine.Role{engine.Mafia, engine.Inspector, engine.Doctor, engine.Vigilante, engine.Townsperson}
	for _, m := range h.all {
		where := func() string { return m.step + " → " + m.Recipient + " (" + m.Kind + ", " + m.MessageID + ")" }
		if prev, dup := ids[m.MessageID]; dup {
			t.Errorf("%s: Message-ID already used by %s", where(), prev)
		}
		ids[m.MessageID] = where()
		p := readBack(t, m.Raw)
		h := p.header
		checkFlowed(t, where(), p)

		// Structure: multipart/alternative, text then HTML, UTF-8,
		// quoted-printable.
		wantTop, calendar := "multipart/alternative", 0
		if p.calendar != nil {
			wantTop, calendar = "multipart/mixed", 1
			// The thread mail of a player: a day opens in the dawn's mail.
			if m.Kind != compose.KindThread && m.Kind != compose.KindDawn || !strings.HasPrefix(m.Recipient, "s") {
				t.Errorf("%s: a calendar event in a %s mail to %s", where(), m.Kind, m.Recipient)
			}
		}
		if p.topType != wantTop || p.parts != 2+len(p.images)+calendar {
			t.Errorf("%s: %s with %d parts", where(), p.topType, p.parts)
		}
		// A picture is the end mail's alone, and its HTML shows it.
		for cid := range p.images {
			if m.Kind != compose.KindEnd || !strings.Contains(p.html, `src="cid:`+cid+`"`) {
				t.Errorf("%s: a %s mail carries picture %s, which its HTML does not show", where(), m.Kind, cid)
			}
		}
		if p.textType != "text/plain; charset=utf-8" || p.htmlType != "text/html; charset=utf-8" ||
			p.textCTE != "quoted-printable" || p.htmlCTE != "quoted-printable" {
			t.Errorf("%s: parts %s (%s), %s (%s)", where(), p.textType, p.textCTE, p.htmlType, p.htmlCTE)
		}
		for _, line := range strings.Split(string(m.Raw), "\r\n") {
			if len(line) > 998 {
				t.Errorf("%s: a line of %d octets (RFC 5322 allows 998)", where(), len(line))
			}
		}

		// Header fields.
		if id, _ := h.MessageID(); "<"+id+">" != m.MessageID {
			t.Errorf("%s: Message-ID %q", where(), id)
		}
		if d, err := h.Date(); err != nil || d.IsZero() {
			t.Errorf("%s: Date: %v", where(), err)
		}
		from, err := h.AddressList("From")
		if err != nil || len(from) != 1 || from[0].Address != hostAddr {
			t.Errorf("%s: From %v (%v), want the host's own address", where(), from, err)
		}
		toList, err := h.AddressList("To")
		if err != nil || len(toList) != 1 || len(m.To) != 1 || !strings.EqualFold(toList[0].Address, m.To[0]) || m.From != hostAddr {
			t.Errorf("%s: To %v, envelope %s → %v", where(), toList, m.From, m.To)
		}
		if h.Get("Auto-Submitted") != "auto-generated" {
			t.Errorf("%s: Auto-Submitted %q", where(), h.Get("Auto-Submitted"))
		}
		if h.Get("X-Mafiamail-Kind") != m.Kind || h.Get("X-Mafiamail-Game") != m.Game {
			t.Errorf("%s: X-Mafiamail-Kind %q, X-Mafiamail-Game %q", where(), h.Get("X-Mafiamail-Kind"), h.Get("X-Mafiamail-Game"))
		}
		subject, _ := h.Subject()
		irt, refs := h.Get("In-Reply-To"), h.Get("References")
		root := rootRE.FindStringSubmatch(irt)
		if root == nil || refs != irt || root[1] != m.Game {
			t.Errorf("%s: In-Reply-To %q, References %q: want the root of a conversation of game %s", where(), irt, refs, m.Game)
			continue
		}
		replyTo, _ := h.AddressList("Reply-To")
		self := participantByAddr(people, m.To[0])
		conv, round, _ := strings.Cut(root[2], ".")
		set := command.Private
		// The thread and the mafia list are a conversation per round,
		// the round the game is in when the message is sent; a digest
		// that a close flushes belongs to the round it closes.
		wantRound := m.round
		if len(m.Contents) > 0 && m.Contents[0] == "digest" && m.roundBefore != "" && round == roundKey(m.roundBefore) {
			wantRound = m.roundBefore
		}
		if (conv == "thread" || conv == "mafia") && m.round != "" && round != roundKey(wantRound) {
			t.Errorf("%s: root %q, but the game is in %s", where(), irt, m.round)
		}
		switch {
		case conv == "thread":
			set = command.Thread
			if subject != "["+m.Game+"] "+wantRound || !strings.Contains(h.Get("List-Id"), "<thread."+m.Game+".example.org>") {
				t.Errorf("%s: thread mail with Subject %q, List-Id %q", where(), subject, h.Get("List-Id"))
			}
			if h.Get("List-Post") == "" || h.Get("List-Help") == "" {
				t.Errorf("%s: thread mail without List-Post or List-Help", where())
			}
			wantReplyTo(t, where(), replyTo, "-t-", self)
		case conv == "mafia":
			set = command.Mafia
			if subject != "["+m.Game+"] Mafia list, "+wantRound || !strings.Contains(h.Get("List-Id"), "<mafia."+m.Game+".example.org>") {
				t.Errorf("%s: mafia-list mail with Subject %q, List-Id %q", where(), subject, h.Get("List-Id"))
			}
			wantReplyTo(t, where(), replyTo, "-m-", self)
			if self == nil || self.role != engine.Mafia {
				t.Errorf("%s: mafia-list mail to someone who is not a Mafioso", where())
			}
		default:
			if root[2] != "p."+m.Recipient {
				t.Errorf("%s: private mail under root %q", where(), irt)
			}
			if h.Get("List-Id") != "" {
				t.Errorf("%s: private mail with a List-Id", where())
			}
			if m.Recipient == "ref" {
				set = command.Referee
			}
			// A replaced player's old token no longer works: their notice
			// is answered at the sign-up address.
			// A reminder to vote is answered in the thread, where votes
			// are cast; the rest of private mail in the private channel.
			channel := "-p-"
			if m.Kind == compose.KindPrivate && slices.Contains(m.Contents, "reminder") &&
				!strings.Contains(p.text, "night action") && !strings.Contains(p.text, "Night ") {
				channel = "-t-"
				set = command.Thread
			}
			// The answer to a message sent to the bare host address points
			// back to where it belongs: one of the reader's own addresses.
			misdirected := slices.Contains(m.Contents, "misdirected")
			if misdirected && (len(replyTo) != 1 || self == nil || !strings.Contains(replyTo[0].Address, self.token+"@")) {
				t.Errorf("%s: Reply-To %v, not one of the reader's own addresses", where(), replyTo)
			}
			if self != nil && self.token != "" && (!strings.HasPrefix(m.Recipient, "a-") || self.name == "observer") && !misdirected {
				wantReplyTo(t, where(), replyTo, channel, self)
			}
		}

		raw := string(m.Raw)
		lowerRaw := strings.ToLower(raw) // once a message, not once a person
		text := strings.ReplaceAll(p.text, "\r\n", "\n")
		// Secrets: no token but the reader's own; no player's address
		// but the reader's own, except in the referee's channel.
		for _, o := range people {
			if self != nil && o.addr == self.addr {
				continue
			}
			if o.token != "" && strings.Contains(raw, o.token) {
				t.Errorf("%s: carries the token of %s", where(), o.name)
			}
			if m.Recipient != "ref" && strings.Contains(lowerRaw, strings.ToLower(o.addr)) {
				t.Errorf("%s: shows the address of %s", where(), o.name)
			}
		}
		// C2: the marker line only in role messages.
		// (The referee's copy of a held post shows what was held.)
		if marker := strings.Contains(text, engine.SecretMarker(m.Game)); marker != (m.Kind == compose.KindRole) && !(marker && m.Recipient == "ref") {
			t.Errorf("%s: the role-message marker where it does not belong (or missing)", where())
		}
		// C5: before the end, no thread line names a player with their role.
		if conv == "thread" && !m.ended {
			for _, line := range strings.Split(text, "\n") {
				for _, o := range people {
					if o.role == "" || !strings.Contains(line, o.name) {
						continue
					}
					for _, w := range roleWords {
						if w == o.role && strings.Contains(line, string(w)) {
							t.Errorf("%s: thread line names %s's role: %q", where(), o.name, line)
						}
					}
				}
			}
		}
		// Quotes that slip through must not act: no line of the message,
		// text or HTML, reads as a command where a reply would go.
		for form, body := range map[string]string{"text": text, "html": message.HTMLToText(p.html)} {
			res := command.Parse(body, set)
			for _, c := range res.Commands {
				t.Errorf("%s: the %s reads as a %s command if quoted back: %q", where(), form, set, c.Raw)
			}
			for _, e := range res.Errors {
				t.Errorf("%s: the %s reads as a broken %s command if quoted back: %q", where(), form, set, e.Text)
			}
			for _, ml := range res.Misplaced {
				t.Errorf("%s: the %s reads as a misplaced command if quoted back: %q", where(), form, ml.Raw)
			}
			if set == command.Thread && strings.Contains(body, ">>") {
				t.Errorf("%s: the %s holds \">>\", which the thread reads as a vote", where(), form)
			}
		}
	}
}

func participantByAddr(people []participant, addr string) *participant {
	for i := range people {
		if strings.EqualFold(people[i].addr, addr) {
			return &people[i]
		}
	}
	return nil
}

func wantReplyTo(t *testing.T, where string, replyTo []*gomail.Address, channel string, self *participant) {
	t.Helper()
	if self == nil || self.token == "" {
		return
	}
	want := "host+"
	if len(replyTo) != 1 || !strings.HasPrefix(replyTo[0].Address, want) ||
		!strings.Contains(replyTo[0].Address, channel+self.token+"@") {
		t.Errorf("%s: Reply-To %v, want %s's own %s address", where, replyTo, self.name, channel)
	}
}
