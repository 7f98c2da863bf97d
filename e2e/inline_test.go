//go:build integration

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/hostrun"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/mimepart"
	"github.com/mafiamail/mafiamail/service"
)

// inlineRun is `serve --embedded` in the test's process: the embedded IMAP
// and SMTP servers, and the host on them, with mail clients that read over
// IMAP and answer over SMTP.
type inlineRun struct {
	t    *testing.T
	imap string
	smtp string
	host *hostrun.Runtime
	sent int
	// referee is the referee's password, made for the run.
	referee string
}

// inlineLetter is one mail a client read.
type inlineLetter struct {
	uid                     imap.UID
	id, kind, game, subject string
	replyTo                 string
	text, html              string
	textFormat, textDelSp   string
	date                    time.Time
	fromName                string
	inReplyTo               []string
	raw                     []byte
}

func startInline(t *testing.T, speed float64) *inlineRun {
	t.Helper()
	// The embedded servers and configuration as serve --embedded makes
	// them (cmd/mafiamail's embeddedConfig): the host's and the referee's
	// mailboxes with passwords of their own.
	srv, err := mailserver.Start(mailserver.Config{Domain: "example.org", AutoCreateUsers: true, AuthResults: true,
		AutoCreatePassword: inlinePlayersPassword,
		Users:              map[string]string{"host": inlineHostPassword, "referee": inlineRefereePassword}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cfg := service.Embedded(srv, inlineHostPassword, filepath.Join(t.TempDir(), "host.db"))
	cfg.Speed = speed
	log := testlog.New(t, slog.LevelWarn)
	clock := host.Clock{Anchor: time.Now(), Start: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Speed: speed}
	rt := hostrun.Start(t, &cfg, service.Config{Clock: clock, Log: log})
	return &inlineRun{t: t, imap: srv.IMAPAddr(), smtp: srv.SMTPAddr(), host: rt, referee: inlineRefereePassword}
}

// The passwords of the embedded mailboxes: the players', and the host's
// and the referee's own.
const (
	inlinePlayersPassword = "mafia"
	inlineHostPassword    = "host-secret"
	inlineRefereePassword = "referee-secret"
)

// password is user's password on the embedded servers.
func (r *inlineRun) password(user string) string {
	if user == "referee" {
		return r.referee
	}
	return inlinePlayersPassword
}

func inlineAddr(user string) string { return user + "@example.org" }

// send writes a mail as a client would: From, To, In-Reply-To and the body
// with the given Content-Type parameters.
func (r *inlineRun) send(user, to, subject, inReplyTo, body, format string) {
	r.t.Helper()
	r.sent++
	var h strings.Builder
	fmt.Fprintf(&h, "From: %s <%s>\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: <%s.%d@clients.example.org>\r\nDate: %s\r\n",
		user, inlineAddr(user), to, subject, user, r.sent, time.Now().Format(time.RFC1123Z))
	if inReplyTo != "" {
		// As clients write them: the Message-ID between angle brackets.
		fmt.Fprintf(&h, "In-Reply-To: <%s>\r\nReferences: <%s>\r\n", inReplyTo, inReplyTo)
	}
	ct := "text/plain; charset=utf-8"
	if format != "" {
		ct += "; " + format
	}
	fmt.Fprintf(&h, "MIME-Version: 1.0\r\nContent-Type: %s\r\nContent-Transfer-Encoding: 8bit\r\n\r\n", ct)
	raw := h.String() + strings.ReplaceAll(body, "\n", "\r\n")
	c, err := smtp.Dial(r.smtp)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", user, r.password(user))); err != nil {
		r.t.Fatalf("log in as %s: %v", user, err)
	}
	if err := c.SendMail(inlineAddr(user), []string{to}, strings.NewReader(raw)); err != nil {
		r.t.Fatalf("send from %s: %v", user, err)
	}
	_ = c.Quit()
}

// inbox reads user's INBOX over IMAP.
func (r *inlineRun) inbox(user string) []inlineLetter {
	r.t.Helper()
	c, err := imapclient.DialInsecure(r.imap, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, r.password(user)).Wait(); err != nil {
		r.t.Fatalf("login %s: %v", user, err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		r.t.Fatal(err)
	}
	var out []inlineLetter
	if sel.NumMessages == 0 {
		return nil
	}
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true,
		BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, m := range msgs {
		l := parseInline(r.t, m.FindBodySection(section))
		l.uid = m.UID
		out = append(out, l)
	}
	return out
}

func parseInline(t *testing.T, raw []byte) inlineLetter {
	t.Helper()
	l := inlineLetter{raw: raw}
	mr, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("read mail: %v", err)
	}
	defer mr.Close()
	l.id, _ = mr.Header.MessageID()
	l.kind = mr.Header.Get("X-Mafiamail-Kind")
	l.game = mr.Header.Get("X-Mafiamail-Game")
	l.subject, _ = mr.Header.Subject()
	l.date, _ = mr.Header.Date()
	l.inReplyTo, _ = mr.Header.MsgIDList("In-Reply-To")
	if from, err := mr.Header.AddressList("From"); err == nil && len(from) == 1 {
		l.fromName = from[0].Name
	}
	if rt, err := mr.Header.AddressList("Reply-To"); err == nil && len(rt) == 1 {
		l.replyTo = rt[0].Address
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read part: %v", err)
		}
		h, ok := p.Header.(*gomail.InlineHeader)
		if !ok {
			continue
		}
		ct, params, _ := h.ContentType()
		body, _ := io.ReadAll(p.Body)
		s := strings.ReplaceAll(string(body), "\r\n", "\n")
		switch ct {
		case "text/plain":
			l.text, l.textFormat, l.textDelSp = s, params["format"], params["delsp"]
		case "text/html":
			l.html = s
		}
	}
	return l
}

// await waits for a mail to user that cond accepts.
func (r *inlineRun) await(user, what string, cond func(inlineLetter) bool) inlineLetter {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range r.inbox(user) {
			if cond(l) {
				return l
			}
		}
		time.Sleep(150 * time.Millisecond)
	}
	r.t.Fatalf("%s: no %s within a minute", user, what)
	return inlineLetter{}
}

func (r *inlineRun) game(id string) *engine.State {
	s, ok := r.host.Host().Game(id)
	if !ok {
		r.t.Fatalf("no game %s", id)
	}
	return s
}

func (r *inlineRun) waitGame(id, what string, cond func(*engine.State) bool) *engine.State {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if s, ok := r.host.Host().Game(id); ok && cond(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Fatalf("game %s: no %s within a minute", id, what)
	return nil
}

// unflowed is a text part as a format=flowed reader shows it.
func unflowed(l inlineLetter) string {
	return strings.TrimSuffix(mimepart.DecodeFlowed(l.text, strings.EqualFold(l.textDelSp, "yes")), "\n")
}

// muttQuote quotes a mail as mutt does by default: an attribution line,
// then every physical line of the text part behind "> ".
func muttQuote(l inlineLetter) []string {
	q := []string{fmt.Sprintf("On %s, %s wrote:", l.date.Format("Mon, Jan 02, 2006 at 03:04:05PM -0700"), l.fromName)}
	for _, pl := range strings.Split(strings.TrimSuffix(l.text, "\n"), "\n") {
		q = append(q, strings.TrimRight("> "+pl, " "))
	}
	return q
}

// thunderbirdQuote quotes a mail as Thunderbird does with format=flowed:
// the attribution, then every paragraph one quote level deeper (">" before
// quote marks, "> " before text), sent as flowed again.
func thunderbirdQuote(l inlineLetter) []string {
	q := []string{fmt.Sprintf("On %s, %s wrote:", l.date.Format("1/2/06 3:04 PM"), l.fromName)}
	for _, p := range strings.Split(unflowed(l), "\n") {
		switch {
		case strings.HasPrefix(p, ">"):
			q = append(q, ">"+p)
		case p == "":
			q = append(q, ">")
		default:
			q = append(q, "> "+p)
		}
	}
	return q
}

// answerBelow writes answer into a quote, right below the first quoted
// line that contains after, and cuts the quote a few lines further down,
// as people trim what they answer.
func answerBelow(t *testing.T, quote []string, after string, answer string, keep int) string {
	t.Helper()
	for i, q := range quote {
		if strings.Contains(q, after) {
			end := min(i+1+keep, len(quote))
			out := append(append([]string{}, quote[:i+1]...), "", answer, "")
			return strings.Join(append(out, quote[i+1:end]...), "\n") + "\n"
		}
	}
	t.Fatalf("no quoted line holds %q:\n%s", after, strings.Join(quote, "\n"))
	return ""
}

// TestInlineRepliesKeepTheirContext plays on the embedded servers: a
// player answers a digest inline with mutt's quoting, another answers the
// next digest inline with Thunderbird's. The relayed posts show the
// answered lines, marked as quotes under the author's words, as the host
// sent them; the host's headings ("▸ Bob writes") are left out. A vote
// line the first one slipped into his quote, which the digest never held,
// is neither taken as a command nor relayed, and he is told why.
func TestInlineRepliesKeepTheirContext(t *testing.T) {
	t.Parallel()
	r := startInline(t, 720) // an hour of game time in five seconds
	const game = "inl"
	players := []string{"alice", "bob", "carol", "dave", "erin"}

	r.openInline(game, "players=5 mafia=1 inspectors=0 doctors=0 vigilantes=0 digest_interval=1h day_length=96h", players)

	// Bob posts; the post comes to everyone in a digest.
	dayMail := r.await("bob", "Day 1 thread mail", func(l inlineLetter) bool { return l.game == game && l.kind == "thread" })
	r.send("bob", dayMail.replyTo, "Re: "+dayMail.subject, dayMail.id,
		"I agree with Carol. Alice jumped on Erin with no reason.\n", "")
	digest1 := r.await("dave", "digest with Bob's post", func(l inlineLetter) bool {
		return l.kind == "thread" && strings.Contains(l.text, "Alice jumped on Erin")
	})
	if !strings.Contains(unflowed(digest1), "What happened in the town thread from ") {
		t.Errorf("the first digest does not say when its span starts:\n%s", unflowed(digest1))
	}
	if digest1.textFormat != "flowed" {
		t.Errorf("the digest's text part is format=%q", digest1.textFormat)
	}

	// Dave answers it inline, mutt-style, and his quote holds a vote line
	// the digest did not.
	quote := muttQuote(digest1)
	for i, q := range quote {
		if strings.Contains(q, "Alice jumped on Erin") {
			quote = append(quote[:i], append([]string{"> VOTE Erin"}, quote[i:]...)...)
			break
		}
	}
	body := answerBelow(t, quote, "Alice jumped on Erin", "No reason? Alice gave one.", 2)
	r.send("dave", digest1.replyTo, "Re: "+digest1.subject, digest1.id, body, "")
	digest2 := r.await("erin", "digest with Dave's answer", func(l inlineLetter) bool {
		return l.kind == "thread" && strings.Contains(l.text, "Alice gave one")
	})
	text := unflowed(digest2)
	if !strings.Contains(text, "▸ Dave writes\n> > I agree with Carol. Alice jumped on Erin with no reason.\n> No reason? Alice gave one.") {
		t.Errorf("Dave's relayed post does not show the line it answers, quoted under his words:\n%s", text)
	}
	if strings.Contains(text, "VOTE Erin") {
		t.Errorf("the vote line Dave made up in his quote is relayed:\n%s", text)
	}
	told := r.await("dave", "the answer about the quoted vote line", func(l inlineLetter) bool {
		return l.game == game && strings.Contains(unflowed(l), "which does not hold it")
	})
	if s := strings.Join(strings.Fields(unflowed(told)), " "); !strings.Contains(s, "✗ VOTE Erin") ||
		!strings.Contains(s, "quoted lines are never done") {
		t.Errorf("Dave's answer does not say what became of the quoted vote line:\n%s", unflowed(told))
	}
	if !strings.Contains(digest2.html, "Alice jumped on Erin with no reason.") || strings.Count(digest2.html, "<blockquote") < 2 {
		t.Errorf("the HTML does not nest the answered line in Dave's post:\n%s", digest2.html)
	}
	if s := r.game(game); s.Player(slotByAddress(s, inlineAddr("dave"))).Vote != 0 {
		t.Errorf("a vote was taken from Dave's quote")
	}

	// Erin answers the digest inline, Thunderbird-style (format=flowed),
	// below Dave's answer.
	quote = thunderbirdQuote(digest2)
	body = answerBelow(t, quote, "Alice gave one", "She gave one, and it was thin.\nVOTE Alice", 1)
	r.send("erin", digest2.replyTo, "Re: "+digest2.subject, digest2.id, body, "format=flowed")
	defer func() {
		if t.Failed() {
			for _, l := range r.inbox("erin") {
				t.Logf("erin got %s %q:\n%s", l.kind, l.subject, unflowed(l))
			}
			t.Logf("erin sent:\n%s", body)
		}
	}()
	digest3 := r.await("carol", "digest with Erin's answer", func(l inlineLetter) bool {
		return l.kind == "thread" && strings.Contains(l.text, "it was thin")
	})
	text = unflowed(digest3)
	if !strings.Contains(text, "▸ Erin writes\n> > I agree with Carol. Alice jumped on Erin with no reason.\n> > No reason? Alice gave one.\n> She gave one, and it was thin.") {
		t.Errorf("Erin's relayed post does not show the lines it answers:\n%s", text)
	}
	s := r.waitGame(game, "Erin's vote", func(s *engine.State) bool {
		return s.Player(slotByAddress(s, inlineAddr("erin"))).Vote != 0
	})
	if got := s.Player(s.Player(slotByAddress(s, inlineAddr("erin"))).Vote).Name; got != "Alice" {
		t.Errorf("Erin's own VOTE line counted for %s, not Alice", got)
	}
	for _, p := range s.Players {
		if p.Vote > 0 && p.Address != inlineAddr("erin") {
			t.Errorf("%s has a vote, taken from a quote", p.Name)
		}
	}
	for _, l := range []inlineLetter{digest1, digest2, digest3} {
		for i, pl := range strings.Split(l.text, "\n") {
			if n := len([]rune(pl)); n > 78 {
				t.Errorf("%s line %d has %d characters: %q", l.id, i+1, n, pl)
			}
		}
	}
}

func slotByAddress(s *engine.State, addr string) int {
	for _, p := range s.Players {
		if strings.EqualFold(p.Address, addr) {
			return p.Slot
		}
	}
	return 0
}

// openInline creates a game of five on the embedded servers with setup
// and starts it.
func (r *inlineRun) openInline(game, setup string, players []string) (refereeChannel string) {
	r.t.Helper()
	r.send("referee", inlineAddr("host"), "new", "", "NEW GAME "+game+"\n", "")
	created := r.await("referee", "answer to NEW GAME", func(l inlineLetter) bool { return l.game == game && l.replyTo != "" })
	r.send("referee", created.replyTo, "Re: "+created.subject, created.id, "SETUP "+setup+"\n", "")
	r.waitGame(game, "setup", func(s *engine.State) bool { return s.Setup.Players == len(players) })
	for _, p := range players {
		r.send(p, "host+"+game+"@example.org", "join", "", "JOIN "+strings.ToUpper(p[:1])+p[1:]+"\n", "")
	}
	r.waitGame(game, "sign-ups", func(s *engine.State) bool { return len(s.Players) == len(players) })
	r.send("referee", created.replyTo, "Re: "+created.subject, created.id, "START\n", "")
	r.waitGame(game, "Day 1", func(s *engine.State) bool { return s.Phase == engine.DayPhase })
	return created.replyTo
}

// TestInlineReplyToAThreadMail: in a game without digests, a player
// answers a thread mail inline with mutt's quoting, below a quoted command
// line the mail never held; the thread shows the answered lines quoted in
// the relayed post, and the made-up command is neither taken nor shown.
func TestInlineReplyToAThreadMail(t *testing.T) {
	t.Parallel()
	r := startInline(t, 1)
	const game = "thr"
	r.openInline(game, "players=5 mafia=1 inspectors=0 doctors=0 vigilantes=0", []string{"alice", "bob", "carol", "dave", "erin"})
	day := r.await("alice", "Day 1 thread mail", func(l inlineLetter) bool { return l.game == game && l.kind == "thread" })
	r.send("alice", day.replyTo, "Re: "+day.subject, day.id,
		"I agree with Carol.\nErin jumped on Bob with no reason.\n", "")
	post := r.await("bob", "Alice's post", func(l inlineLetter) bool { return l.kind == "thread" && strings.Contains(l.text, "no reason") })
	if first, _, _ := strings.Cut(unflowed(post), "\n"); first != "Alice writes" {
		t.Errorf("the thread mail opens with %q", first)
	}
	quote := muttQuote(post)
	for i, q := range quote {
		if strings.Contains(q, "no reason") {
			quote = append(quote[:i+1], append([]string{"> VOTE Erin"}, quote[i+1:]...)...)
			break
		}
	}
	body := answerBelow(t, quote, "VOTE Erin", "No reason? Erin gave one.", 3)
	r.send("bob", post.replyTo, "Re: "+post.subject, post.id, body, "")
	answer := r.await("carol", "Bob's answer", func(l inlineLetter) bool { return l.kind == "thread" && strings.Contains(l.text, "Erin gave one") })
	text := unflowed(answer)
	if !strings.HasPrefix(text, "Bob writes\n> > I agree with Carol.\n> > Erin jumped on Bob with no reason.\n> No reason? Erin gave one.") {
		t.Errorf("Bob's post does not show what it answers:\n%s", text)
	}
	if !strings.Contains(answer.html, "Erin jumped on Bob with no reason.") || strings.Count(answer.html, "<blockquote") < 2 {
		t.Errorf("the HTML does not nest the answered lines in Bob's post:\n%s", answer.html)
	}
	for _, p := range r.game(game).Players {
		if p.Vote != 0 {
			t.Errorf("%s has a vote, taken from a quote", p.Name)
		}
	}

	// Carol's client asked whether to reply to the tokened Reply-To, and
	// she said no: her answer to Bob's post goes to the bare host address.
	carolsCopy := r.await("carol", "Bob's answer", func(l inlineLetter) bool { return l.kind == "thread" && strings.Contains(l.text, "Erin gave one") })
	r.send("carol", inlineAddr("host"), "Re: "+carolsCopy.subject, carolsCopy.id,
		"VOTE Erin\n\nBob is right.\n\n"+strings.Join(muttQuote(carolsCopy), "\n")+"\n", "")
	told := r.await("carol", "the answer to her misdirected reply", func(l inlineLetter) bool {
		return l.game == game && strings.Contains(l.text, "host's own address")
	})
	if told.replyTo != carolsCopy.replyTo {
		t.Errorf("the answer's Reply-To is %q, not Carol's thread address %q", told.replyTo, carolsCopy.replyTo)
	}
	for _, want := range []string{"> VOTE Erin", "> Bob is right.", carolsCopy.replyTo, "nothing in it was done"} {
		if !strings.Contains(unflowed(told), want) {
			t.Errorf("the answer does not show %q:\n%s", want, unflowed(told))
		}
	}
	if strings.Contains(told.text, "Erin gave one") {
		t.Errorf("the answer shows the quoted lines as lines the host read:\n%s", told.text)
	}
	if s := r.game(game); s.Player(slotByAddress(s, inlineAddr("carol"))).Vote != 0 {
		t.Fatalf("a message to the bare host address was applied")
	}
	// Pressing Reply and sending again does it.
	r.send("carol", told.replyTo, "Re: "+told.subject, told.id, "VOTE Erin\n", "")
	s := r.waitGame(game, "Carol's vote", func(s *engine.State) bool { return s.Player(slotByAddress(s, inlineAddr("carol"))).Vote != 0 })
	if got := s.Player(s.Player(slotByAddress(s, inlineAddr("carol"))).Vote).Name; got != "Erin" {
		t.Errorf("Carol's vote went to %s", got)
	}
}
