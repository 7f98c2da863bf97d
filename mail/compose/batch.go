package compose

import (
	"fmt"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/mimepart"
	"github.com/mafiamail/mafiamail/story"
	"github.com/mafiamail/mafiamail/templates"
)

// Batch is a run of consecutive events of one game's log, typically the
// events of one engine step (an Apply or a Tick). Compose writes each reader
// one message per conversation for the whole batch, so that a round that
// closes with missed votes, an elimination and nightfall is one message,
// not five.
type Batch struct {
	// Before is the game's state before the first event (nil or empty when
	// the batch starts with the game's creation). It is not changed: each
	// event is folded into a copy, so that every copy shows the game as it
	// stood just after its own news.
	Before *engine.State
	Events []Logged
	Dir    Directory
	// Sender, when set, is the participant whose message's commands caused
	// the events. Their own private copies are left out: the one Reply to
	// their message (docs/design.md "Commands") carries them.
	Sender *engine.Actor
	// HoldForDigest leaves out the thread copies of the events Digestible
	// accepts for the readers who take digests: they wait for the next
	// digest (T1). A host sets it for games in which anyone takes digests
	// (engine.State.DigestEvery), before or after the batch; it is the
	// caller's to set because a post held here and never digested is lost.
	HoldForDigest bool
	// Held are the thread's posts and votes that earlier batches held for
	// the next digest, and HeldSince when the last digest went out. When
	// the batch holds the engine's EvDigest, the digest of Held and of the
	// batch's own news before it goes out there, between the mail of the
	// events before it and that of the events after: a close's digest
	// comes before the close. The caller keeps what is still held after
	// the batch (see engine.Digestible).
	Held      []Logged
	HeldSince time.Time
	// Answer, when set, is the one answer to the message whose commands
	// caused the batch (see Reply), with Sender its sender; the events of
	// its lines are the batch's. It comes after
	// the batch's other mail. When every line of it was accepted and all
	// it has to say is public news that the sender's own thread copy in
	// this batch carries, that copy says so in its first line instead,
	// and no answer of its own is sent: one mail for a post, not two.
	Answer *Answer
	// NotBefore, when set, is the latest Date of the game's mail composed
	// before this batch: no message of the batch is dated earlier, so that
	// mail caused by a later event never carries an earlier Date, even
	// when the earlier batch's last mail was dated ahead of its events.
	NotBefore time.Time
	// History is the game's log before the batch. It is read only when the
	// batch ends the game: the end mail tells the whole story (see package
	// story). A caller that leaves it out sends an end mail that tells the
	// batch's events alone.
	History []Logged
}

// Event composes one event: the messages it causes, one per reader. after
// is the game's state just after the event.
func (c *Composer) Event(l Logged, after *engine.State, dir Directory) ([]Outgoing, error) {
	if after == nil {
		return nil, fmt.Errorf("compose: event %d (%s): no state", l.Seq, l.Event.Type)
	}
	drafts, err := c.compose(Batch{Events: []Logged{l}, Dir: dir}, []*engine.State{after})
	if err != nil {
		return nil, err
	}
	return c.finishAll(drafts)
}

// Batch composes a run of events.
func (c *Composer) Batch(b Batch) ([]Outgoing, error) {
	d, err := c.DraftBatch(b)
	if err != nil {
		return nil, err
	}
	return d.Finish()
}

// DraftBatch decides a run of events' mail as Batch does, and leaves it
// to be laid out (see Drafts).
func (c *Composer) DraftBatch(b Batch) (Drafts, error) {
	states, err := foldEach(b.Before, b.Events)
	if err != nil {
		return Drafts{}, err
	}
	drafts, err := c.compose(b, states)
	if err != nil {
		return Drafts{}, err
	}
	return Drafts{c: c, drafts: drafts}, nil
}

// story is the game's story up to and including the batch's event i.
func (b Batch) story(i int) story.History {
	log := make([]engine.Event, 0, len(b.History)+i+1)
	for _, l := range b.History {
		log = append(log, l.Event)
	}
	for _, l := range b.Events[:i+1] {
		log = append(log, l.Event)
	}
	return story.Build(log)
}

// foldEach returns the state just after each event. The caller's state
// is never changed; the last event's state is the one folded, not a copy
// of it, so that a batch of one event (most commands make one, or none)
// copies the game once.
func foldEach(before *engine.State, events []Logged) ([]*engine.State, error) {
	if len(events) == 0 {
		return nil, nil
	}
	cur := &engine.State{}
	if before != nil {
		cur = before.Clone()
	}
	states := make([]*engine.State, len(events))
	for i, l := range events {
		if err := cur.Fold(l.Event); err != nil {
			return nil, fmt.Errorf("compose: fold event %d (%s): %w", l.Seq, l.Event.Type, err)
		}
		if i < len(events)-1 {
			states[i] = cur.Clone()
		} else {
			states[i] = cur
		}
	}
	return states, nil
}

// Digestible reports whether an event's thread copies may wait for a
// digest (T1): posts and votes. Everything else the thread hears (days,
// closes, dawns, deadlines, announcements) goes out at once.
func Digestible(e engine.Event) bool { return engine.Digestible(e) }

// item is one section of a message in the making, with the event and state
// it came from.
type item struct {
	l   Logged
	s   *engine.State
	sec *templates.Section
}

// group is one reader's message in one conversation.
type group struct {
	d     delivery
	items []item
}

// compose decides the mail of a batch: its drafts, in the order they go
// out.
func (c *Composer) compose(b Batch, states []*engine.State) ([]draft, error) {
	dir, sender, hold := b.Dir, b.Sender, b.HoldForDigest
	receipt, folded := c.receipt(b)
	var out []draft
	var order []*group
	groups := map[string]*group{}
	held := append([]Logged(nil), b.Held...)
	since := b.HeldSince
	// Mail goes out in the order of the events that cause it, and each
	// flush of mail that follows earlier mail of the batch is dated a
	// second after it, so that a reader's Date headers increase in that
	// order too; none is dated before the game's mail composed before.
	step := 0
	sh := newShared()
	if c.alone {
		sh = nil
	}
	dated := func(t time.Time, step int) time.Time {
		if t.Before(b.NotBefore) {
			t = b.NotBefore
		}
		return t.Add(time.Duration(step) * time.Second)
	}
	flush := func() error {
		for _, g := range order {
			var headline string
			if folded && g.d.ch == templates.Thread && isSender(g.d.r, *sender) {
				headline = receipt
			}
			dr, err := c.groupDraft(g, dir, headline, sh, func(t time.Time) time.Time { return dated(t, step) })
			if err != nil {
				return err
			}
			out = append(out, dr)
		}
		if len(order) > 0 {
			step++
		}
		order, groups = nil, map[string]*group{}
		return nil
	}
	for i, l := range b.Events {
		s := states[i]
		e := l.Event
		var hist *story.History
		var picture []byte
		if e.Type == engine.EvGameEnded {
			h := b.story(i)
			hist = &h
			var err error
			if picture, err = story.Picture(h, lang.Get(s.GameLanguage()).Phrase); err != nil {
				return nil, fmt.Errorf("compose: event %d: %w", l.Seq, err)
			}
		}
		if hold && e.Type == engine.EvDigest {
			if err := flush(); err != nil {
				return nil, err
			}
			if len(held) > 0 {
				msgs, err := c.digestDrafts(Digest{State: s, Dir: dir, Events: held, Since: since, Now: e.At, byChoice: true}, dated(e.At, step))
				if err != nil {
					return nil, err
				}
				out = append(out, msgs...)
				step++
			}
			held, since = nil, e.At
			continue
		}
		if hold && Digestible(e) {
			held = append(held, l)
		}
		for _, d := range deliveries(e, s, dir) {
			// The sender's private copies are in their answer; their own
			// post to the mafia list comes to them as the list's, as a
			// post to the thread does.
			if sender != nil && d.ch != templates.Thread && isSender(d.r, *sender) &&
				(d.ch != templates.Mafia || e.Type != engine.EvMafiaPost) {
				continue
			}
			if hold && d.ch == templates.Thread && Digestible(e) && readsDigests(s, d.r) {
				continue
			}
			sec, err := c.section(e, s, d)
			if err != nil {
				return nil, fmt.Errorf("compose: event %d: %w", l.Seq, err)
			}
			if hist != nil && sec.End != nil && len(hist.Days) > 0 {
				sec.End.Story = StoryView(*hist, s.Setup, c.langFor(s, d.r))
				if picture != nil {
					sec.End.Story.Picture = picture
					sec.End.Story.PictureCID = c.pictureCID(s.Game)
				}
			}
			key := d.r.key + "/" + string(d.ch)
			g := groups[key]
			if g == nil {
				g = &group{d: d}
				groups[key] = g
				order = append(order, g)
			}
			g.items = append(g.items, item{l, s, sec})
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if b.Answer != nil && !folded {
		a := *b.Answer
		a.Now = dated(a.Now, max(step-1, 0))
		dr, err := c.replyDraft(a)
		if err != nil {
			return nil, err
		}
		out = append(out, dr)
	}
	return out, nil
}

// receipt decides whether the batch's Answer rides on its sender's own
// thread copy, and gives that copy's first line: "Your message: VOTE Erin
// done". It does only for a message sent to the thread, and only when
// that copy tells the sender everything the answer would: every line was
// accepted and changed something, and every copy of those changes meant
// for the sender is thread news that goes out in this batch, not held for
// a digest. A refused line, a private answer (a tally, a night action, a
// status) or a vote held for the digest keeps the answer a mail of its
// own, so the sender learns at once, and in private, what became of each
// line; except under the plan for the sending budget (T3), where the
// sender's next digest says what became of the lines it holds.
func (c *Composer) receipt(b Batch) (string, bool) {
	a := b.Answer
	// Only a message to the thread: an answer to the private channel is
	// awaited there, as the referee's CLOSE or ANNOUNCE is.
	if a == nil || b.Sender == nil || a.State == nil || len(a.Lines) == 0 || a.Channel != engine.Thread {
		return "", false
	}
	to := senderRecipient(a.State, a.Dir, a.Sender)
	if !isSender(to, *b.Sender) {
		return "", false
	}
	var done []string
	for _, ln := range a.Lines {
		if ln.Err != nil || len(ln.Events) == 0 {
			return "", false
		}
		thread := false
		for _, e := range ln.Events {
			for _, d := range deliveries(e, a.State, a.Dir) {
				if d.r.key != to.key {
					continue
				}
				if d.ch != templates.Thread {
					return "", false
				}
				if b.HoldForDigest && Digestible(e) && readsDigests(a.State, d.r) && a.State.MailPlan == 0 {
					return "", false
				}
				// Thread news of this batch, or, under the plan for the
				// sending budget, news that the sender's next digest
				// carries with its receipt (T3).
				thread = true
			}
		}
		if !thread {
			return "", false
		}
		done = append(done, strings.TrimSpace(ln.Text))
	}
	l := c.langFor(a.State, to)
	return l.Sprintf("Your message: %s done", templates.ListIn(l.Tag, done)), true
}

// groupDraft decides one reader's message for a group of sections.
// headline, when set, is the reader's receipt: it replaces the first line
// of a message of their own votes and posts, and follows the first line of
// one that carries news of the game; dated gives its Date from
// the time of its news.
func (c *Composer) groupDraft(g *group, dir Directory, headline string, sh *shared, dated func(time.Time) time.Time) (draft, error) {
	items := dropRedundant(g.items)
	last := items[len(items)-1]
	s := last.s
	now := last.l.Event.At
	var secs []*templates.Section
	for _, it := range items {
		secs = append(secs, it.sec)
	}
	main := mainSection(secs)
	dr := draft{
		game:     s.Game,
		d:        g.d,
		state:    s,
		now:      now,
		sections: secs,
		main:     main,
		id: c.opaqueID(idKey(dir, s.Game), s.Game, namePart(s, g.d.r, items[0].l.Seq, last.l.Seq), g.d.r.key,
			channelLetter(g.d.ch), main.Kind),
		fromName: relayAuthor(secs, main),
		headline: headline,
		date:     dated(now),
		cache:    sh.cache(),
		flow:     sh.flowMemo(),
	}
	if headline != "" && rank[main.Kind] > rank["post"] {
		// News of the game (a close, a death, the end) leads, in the
		// first line as everyone's copy has it; the sender's receipt for
		// the command that caused it follows in one line.
		dr.receipt, dr.headline = headline, ""
	}
	if g.d.ch == templates.Thread {
		dr.self = selfView(s, g.d.r, now)
		dr.tally = sh.runningTally(s, now, c.langFor(s, g.d.r))
	}
	dr.public = c.groupPublic(g.items, g.d.ch, c.langFor(s, g.d.r).Tag, sh, s, now)
	cal, err := c.roundCalendar(items, g.d)
	if err != nil {
		return draft{}, err
	}
	dr.calendar = cal
	if main.Kind == "reminder" && main.Variant != "night" && g.d.r.token != "" {
		// A reminder to vote is answered with a vote: its Reply goes to
		// the thread. A night action's reminder stays private.
		dr.replyTo, dr.replyName = c.ThreadAddress(s.Game, g.d.r.token), s.Game+" town thread"
	}
	return dr, nil
}

// dropRedundant folds a close's missed votes into one section, and leaves
// out a death that the round's close in the same message already tells:
// "Bob is eliminated" needs no second line.
func dropRedundant(items []item) []item {
	var merged []item
	for _, it := range items {
		if n := len(merged); n > 0 && it.sec.Kind == "missed" && merged[n-1].sec.Kind == "missed" {
			prev := *merged[n-1].sec
			prev.Missed = append(append([]templates.Missed(nil), prev.Missed...), it.sec.Missed...)
			merged[n-1].sec = &prev
			continue
		}
		merged = append(merged, it)
	}
	items = merged
	closes := false
	for _, it := range items {
		if it.sec.Kind == "close" {
			closes = true
		}
	}
	if !closes {
		return items
	}
	var out []item
	for _, it := range items {
		if it.sec.Kind == "death" && (it.sec.Variant == string(engine.ByVote) || it.sec.Variant == string(engine.ByMissedVotes)) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// rank orders section kinds by how much their news matters: the main
// section of a message is its headline.
var rank = map[string]int{
	"end": 100, "dawn": 90, "close": 85, "runoff": 80, "day": 75, "night": 70,
	"death": 65, "start": 60, "role": 58, "mafialist": 57, "inspection": 55, "draw": 54, "cleared": 52,
	"deadline": 50, "mailplan": 49, "pause": 48, "announce": 47, "missed": 46, "substitute": 45,
	"post": 40, "mafia": 40, "action": 35, "held": 34, "extension": 33,
	"tally": 30, "status": 30, "help": 30, "joined": 28, "renamed": 28, "observer": 28,
	"created": 28, "setup": 27, "replaced": 26, "suspended": 25, "note": 24,
	"reminder": 22, "vote": 20,
}

func mainSection(secs []*templates.Section) *templates.Section {
	main := secs[0]
	for _, s := range secs[1:] {
		if rank[s.Kind] > rank[main.Kind] {
			main = s
		}
	}
	return main
}

// relayAuthor is the display name of a relay: a message that carries only
// one player's own posts (and votes) comes under their name; anything else
// comes from the host.
func relayAuthor(secs []*templates.Section, main *templates.Section) string {
	if main.Kind != "post" && main.Kind != "mafia" {
		return ""
	}
	for _, s := range secs {
		switch s.Kind {
		case "post", "mafia", "vote":
			if s.Name != main.Name {
				return ""
			}
		default:
			return ""
		}
	}
	if main.Variant == "referee" {
		return "Referee"
	}
	return main.Name
}

func channelLetter(ch templates.Channel) string {
	switch ch {
	case templates.Thread:
		return "t"
	case templates.Mafia:
		return "m"
	}
	return "p"
}

// runningTally is the tally that ends thread mail while a vote runs (D15).
func runningTally(s *engine.State, now time.Time, l *lang.Language) *templates.Tally {
	return (*shared)(nil).runningTally(s, now, l)
}

// shared is what the copies of one batch's mail have in common, worked
// out once for all of them: the layout of the news they share, the tally
// of each state they show it for, and how their lines break. The states
// of a batch do not change while it is composed.
type shared struct {
	layouts *templates.Cache
	tallies map[tallyAt]*engine.Tally
	flow    *mimepart.Flow
	// public keeps the text of the batch's mail laid out for an outsider,
	// by publicNews.key.
	public map[string]string
}

// cache is where the batch's copies keep the layout they share; nil for
// a nil sh.
func (sh *shared) cache() *templates.Cache {
	if sh == nil {
		return nil
	}
	return sh.layouts
}

type tallyAt struct {
	s   *engine.State
	now time.Time
}

func newShared() *shared {
	return &shared{layouts: templates.NewCache(), tallies: map[tallyAt]*engine.Tally{}, flow: newFlow(),
		public: map[string]string{}}
}

// flowMemo is where the batch's copies keep how their lines break; nil
// for a nil sh.
func (sh *shared) flowMemo() *mimepart.Flow {
	if sh == nil {
		return nil
	}
	return sh.flow
}

// runningTally is the tally of s at now for one reader: the view is the
// reader's own (their language; their zone is added to its times), the
// count beneath it is worked out once. A nil sh works it out each time.
func (sh *shared) runningTally(s *engine.State, now time.Time, l *lang.Language) *templates.Tally {
	if s.Phase != engine.DayPhase {
		return nil
	}
	if sh == nil {
		return tallyView(s.Tally(now), s, false, now, l)
	}
	at := tallyAt{s, now}
	t, ok := sh.tallies[at]
	if !ok {
		t = s.Tally(now)
		sh.tallies[at] = t
	}
	return tallyView(t, s, false, now, l)
}

// selfView is the reader's own position, for their copy of thread mail.
func selfView(s *engine.State, r recipient, now time.Time) *templates.Self {
	if r.referee {
		v := &templates.Self{Phase: string(s.Phase)}
		for _, slot := range s.Asked {
			if p := s.Player(slot); p != nil {
				v.Asked = append(v.Asked, p.Name)
			}
		}
		for _, h := range s.Held {
			if h.Open {
				v.Held++
			}
		}
		if len(v.Asked) == 0 && v.Held == 0 {
			return nil
		}
		return v
	}
	p := s.Player(r.slot)
	if p == nil {
		return nil
	}
	v := &templates.Self{
		Phase: string(s.Phase), Day: s.Day, Round: string(s.Round), Paused: s.Paused,
		Alive: p.Alive, Missed: p.Missed, Locked: p.Locked,
	}
	if !p.Alive {
		v.Cause = CauseWords(p.Cause)
	}
	switch {
	case p.Vote == engine.NullVote:
		v.Null = true
	case p.Vote > 0:
		if t := s.Player(p.Vote); t != nil {
			v.Vote = t.Name
		}
	}
	switch s.Phase {
	case engine.DayPhase:
		v.Closes = closesMoment(s, now)
		v.OwesVote = p.Alive && p.Vote <= 0
		if s.Round == engine.Runoff {
			for _, cand := range s.Candidates {
				if t := s.Player(cand); t != nil {
					v.Runoff = append(v.Runoff, t.Name)
				}
			}
		}
	case engine.NightPhase:
		// The night's latest end, which only the referee moves: the mark
		// it will end at once every action is in tells when the last one
		// came, a secret until the night resolves (N6).
		v.Closes = moment(s, s.ClosesAt(), now)
	}
	return v
}
