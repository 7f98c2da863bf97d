package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/templates"
)

// Digest is the thread's posts and votes of one digest interval (T1).
type Digest struct {
	// State is the game now, at the digest's send time.
	State *engine.State
	Dir   Directory
	// Events are the interval's thread events, in log order; those that
	// Digestible refuses are an error.
	Events []Logged
	// Since is when the interval began (zero: not shown).
	Since time.Time
	Now   time.Time
	// byChoice sends it only to the readers who take digests (MAIL),
	// as a batch's digest does; Composer.Digest sends it to every reader.
	byChoice bool
}

// eventsDigest is a digest of events' contents (not their numbers in the
// log), for a Message-ID.
func eventsDigest(evs []Logged) (string, error) {
	h := sha256.New()
	for _, l := range evs {
		b, err := engine.MarshalEvent(l.Event)
		if err != nil {
			return "", fmt.Errorf("compose: digest: event %d: %w", l.Seq, err)
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Digest composes one digest for every reader of the thread: the posts
// and votes in order, ending with the official tally while a vote runs
// (D15).
func (c *Composer) Digest(dg Digest) ([]Outgoing, error) {
	drafts, err := c.digestDrafts(dg, dg.Now)
	if err != nil {
		return nil, err
	}
	return c.finishAll(drafts)
}

// digestDrafts decides a digest with the given Date, which may be later
// than its Now: after the mail composed before it in the same batch.
func (c *Composer) digestDrafts(dg Digest, date time.Time) ([]draft, error) {
	s := dg.State
	if s == nil {
		return nil, errors.New("compose: a digest needs the game's state")
	}
	if len(dg.Events) == 0 {
		return nil, errors.New("compose: a digest needs at least one event")
	}
	posts, votes := 0, 0
	for _, l := range dg.Events {
		if !Digestible(l.Event) {
			return nil, fmt.Errorf("compose: event %d (%s) does not go into digests", l.Seq, l.Event.Type)
		}
		if l.Event.Type == engine.EvThreadPost || l.Event.Type == engine.EvPostRelayed {
			posts++
		} else {
			votes++
		}
	}
	first, last := dg.Events[0].Seq, dg.Events[len(dg.Events)-1].Seq
	// Every digest says the span it covers: the first one, with no digest
	// before it, from its first news on.
	since := dg.Since
	if since.IsZero() || dg.Events[0].Event.At.Before(since) {
		since = dg.Events[0].Event.At
	}
	// What the digest holds, which every reader of it sees, tells two
	// digests composed at the same count apart.
	contents, err := eventsDigest(dg.Events)
	if err != nil {
		return nil, err
	}
	var out []draft
	memo := map[string]string{}
	for _, d := range deliveries(engine.Event{To: engine.Audience{Public: true}}, s, dg.Dir) {
		if dg.byChoice && !readsDigests(s, d.r) {
			continue // has had each post as it came (MAIL EACH)
		}
		intro := &templates.Section{Kind: digestKind, Count: posts, Total: votes,
			At: moment(s, since, dg.Now), When: moment(s, dg.Now, dg.Now)}
		if s.MailPlan > 0 {
			// Under the plan for the sending budget the answers to the
			// reader's own thread commands come here, not on their own (T3).
			intro.Text = ownReceipt(s, dg.Events, d.r)
		}
		secs := []*templates.Section{intro}
		for _, l := range dg.Events {
			sec, err := c.section(l.Event, s, d)
			if err != nil {
				return nil, fmt.Errorf("compose: digest: event %d: %w", l.Seq, err)
			}
			secs = append(secs, sec)
		}
		out = append(out, draft{
			game: s.Game, d: d, state: s, now: dg.Now, sections: secs, main: intro,
			self: selfView(s, d.r, dg.Now), tally: runningTally(s, dg.Now, c.langFor(s, d.r)),
			id:     c.opaqueID(idKey(dg.Dir, s.Game), s.Game, namePart(s, d.r, first, last), contents, d.r.key, "t", digestKind),
			date:   date,
			public: c.digestPublic(dg, posts, votes, contents, since, c.langFor(s, d.r).Tag, memo),
		})
	}
	return out, nil
}

// readsDigests reports whether the thread reaches r in digests: a player
// as they chose (MAIL), everyone else as the setup says (T1); everyone
// while the host's plan for its sending budget is in force (T3).
func readsDigests(s *engine.State, r recipient) bool {
	if s.MailPlan > 0 {
		return true
	}
	if r.slot > 0 && !r.referee && !r.observer {
		if p := s.Player(r.slot); p != nil {
			return s.TakesDigests(p)
		}
	}
	return s.Setup.DigestInterval > 0
}

// ownReceipt says which of the digest's news was the reader's own doing,
// as the answer to their thread commands that the sending plan folds into
// the digest (T3); empty when none was.
func ownReceipt(s *engine.State, evs []Logged, r recipient) string {
	if r.slot == 0 || r.referee || r.observer {
		return ""
	}
	var done []string
	posts := 0
	for _, l := range evs {
		e := l.Event
		if e.Slot != r.slot {
			continue
		}
		switch e.Type {
		case engine.EvThreadPost:
			posts++
		case engine.EvVoted:
			switch {
			case e.Null:
				done = append(done, "VOTE NULL")
			case s.Player(e.Target) != nil:
				done = append(done, "VOTE "+s.Player(e.Target).Name)
			}
		case engine.EvUnvoted:
			done = append(done, "UNVOTE")
		case engine.EvLocked:
			done = append(done, "LOCK")
		case engine.EvUnlocked:
			done = append(done, "UNLOCK")
		}
	}
	l := lang.Get(s.LanguageOf(s.Player(r.slot)))
	switch {
	case posts == 1:
		done = append(done, l.Phrase("your post"))
	case posts > 1:
		done = append(done, l.Sprintf("your %d posts", posts))
	}
	if len(done) == 0 {
		return ""
	}
	return l.Sprintf("Your messages since the last digest, all done: %s.", templates.ListIn(l.Tag, done))
}

// digestPublic is the public news of a digest (see publiclines.go): the digest
// as an outsider has it, without the answers to the reader's own commands
// that the sending plan folds into it.
func (c *Composer) digestPublic(dg Digest, posts, votes int, contents string, since time.Time, tag string, memo map[string]string) *publicNews {
	s := dg.State
	d := delivery{r: outsider(tag), ch: templates.Thread}
	return &publicNews{key: tag + "/digest/" + contents, memo: memo, build: func() ([]*templates.Section, *templates.Section, *templates.Tally, error) {
		intro := &templates.Section{Kind: digestKind, Count: posts, Total: votes,
			At: moment(s, since, dg.Now), When: moment(s, dg.Now, dg.Now)}
		secs := []*templates.Section{intro}
		for _, l := range dg.Events {
			sec, err := c.section(l.Event, s, d)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("compose: digest: event %d: %w", l.Seq, err)
			}
			secs = append(secs, sec)
		}
		return secs, intro, runningTally(s, dg.Now, c.langFor(s, d.r)), nil
	}}
}
