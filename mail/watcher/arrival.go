package watcher

import (
	"bytes"
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// pending is what the session knows of an unseen message before handing it
// over: what one look at its header told.
type pending struct {
	// from is the sender (the From field's address, lower case; "" if
	// unknown), for fair turns through a backlog.
	from string
	// size is RFC822.SIZE.
	size int64
	// arrived is when the message reached the mailbox (see Message.Arrived).
	arrived time.Time
	// setAside is set for mail that Config.Triage found no game can use.
	setAside bool
	// uid is the message's; sender numbers its sender among the
	// session's (see add).
	uid    imap.UID
	sender int
}

// routingFields are the header fields one look at a message reads: whom it
// is from, and the recipient fields that route it.
var routingFields = []string{"From", "To", "Cc", "Delivered-To", "X-Original-To"}

// routingSection is BODY.PEEK[HEADER.FIELDS (From To Cc Delivered-To X-Original-To)].
var routingSection = &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: routingFields, Peek: true}

// lookChunk bounds the UIDs of one header fetch.
const lookChunk = 1000

// scan offers every unseen message that is due to the handler, in batches,
// and reports the watermark as it rises. Mail that Triage sets aside goes
// last; the rest in fair turns among its senders, but never across the
// next deadline (Config.Barrier): mail that arrived after it waits until
// everything that arrived before it has been handled and the watermark has
// passed it. While the handler works on one batch, the next is picked
// and fetched (ahead.go); the scan returns once the handler is done.
func (s *session) scan(ctx context.Context) (err error) {
	if len(s.unseen) == 0 {
		if err := s.moveLeftovers(ctx); err != nil {
			return err
		}
	}
	defer func() {
		// What was fetched and not handed over stays unseen, for the
		// next scan; the group in hand is waited for and flagged.
		s.ready = nil
		if s.ahead != nil {
			s.turn, s.ahead = s.ahead.turn, nil
		}
		if herr := s.handOver(ctx); err == nil {
			err = herr
		}
	}()
	// While the handler works, the turns picked ahead come from what the
	// search at the start of its group found: one search per group, as
	// when the handler was waited for, so that mail that trickles in
	// does not cost a search and two fetches of its own.
	search := true
	for {
		if search {
			if err := s.look(ctx); err != nil {
				return err
			}
			s.report()
		}
		search = true
		if s.busy != nil {
			if !s.handlerDone() {
				if next := s.pickAhead(time.Now()); next != nil {
					if err := s.batch(ctx, next); err != nil {
						return err
					}
					if ctx.Err() != nil {
						return nil
					}
					search = false
					continue
				}
			}
			searched, err := s.topUp(ctx)
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil
			}
			if err := s.handOver(ctx); err != nil {
				return err
			}
			s.report()
			if s.busy != nil {
				search = !searched
				continue
			}
		}
		next, wait := s.pick(time.Now())
		if len(next) == 0 {
			if wait <= 0 {
				s.w.floodOver()
				return nil
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			case <-s.c.Closed():
				t.Stop()
				return fmt.Errorf("the server closed the connection")
			}
			continue
		}
		if err := s.batch(ctx, next); err != nil {
			return err
		}
		s.report()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// look searches for unseen mail the session does not know yet and reads,
// in one fetch per chunk, what scheduling needs of it: sender, routing
// fields, size and INTERNALDATE. While a backlog is worked off only mail
// with a UID above the highest one seen is searched for, so that a large
// backlog is not listed again and again; once it is gone the search covers
// the whole mailbox again.
func (s *session) look(ctx context.Context) error {
	started := time.Now()
	criteria := &imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}
	full := len(s.unseen) == 0
	if !full {
		criteria.UID = []imap.UIDSet{{imap.UIDRange{Start: s.lastUID + 1, Stop: 0}}}
	}
	what := "UID SEARCH UNSEEN"
	if !full {
		what = fmt.Sprintf("UID SEARCH UID %d:* UNSEEN", s.lastUID+1)
	}
	found, err := s.search(ctx, what, criteria)
	if err != nil {
		return err
	}
	var fresh []imap.UID
	for _, u := range found {
		if _, known := s.unseen[u]; !known && (full || u > s.lastUID) {
			fresh = append(fresh, u)
		}
	}
	slices.Sort(fresh)
	// A message first found now was not in the mailbox when the previous
	// search began, less the slack: within INTERNALDATE's whole second,
	// that bounds its arrival from below.
	after := s.w.searched
	if !after.IsZero() {
		after = after.Add(-s.w.cfg.ArrivalSlack)
	}
	for len(fresh) > 0 {
		n := min(len(fresh), lookChunk)
		chunk := fresh[:n]
		var msgs []*imapclient.FetchMessageBuffer
		if err := s.cmd(ctx, "UID FETCH (RFC822.SIZE INTERNALDATE BODY.PEEK[HEADER.FIELDS])", func() (err error) {
			msgs, err = s.c.Fetch(imap.UIDSetNum(chunk...), &imap.FetchOptions{UID: true, RFC822Size: true,
				InternalDate: true, BodySection: []*imap.FetchItemBodySection{routingSection}}).Collect()
			return err
		}); err != nil {
			return err
		}
		read := time.Now()
		for _, m := range msgs {
			if m.UID == 0 {
				continue
			}
			header := m.FindBodySection(routingSection)
			p := &pending{from: fromAddress(header), size: m.RFC822Size, arrived: arrival(m.InternalDate, after, read)}
			if s.w.cfg.Triage != nil && !s.w.cfg.Triage(header) {
				p.setAside = true
				s.w.setAside(m.UID, p.arrived)
			}
			s.add(m.UID, p)
			s.lastUID = max(s.lastUID, m.UID)
		}
		for _, u := range chunk {
			if _, ok := s.unseen[u]; !ok {
				// Nothing came back: expunged meanwhile. The next full
				// search finds it if it is still there.
				s.lastUID = max(s.lastUID, u)
			}
		}
		fresh = fresh[n:]
	}
	for _, u := range found {
		s.lastUID = max(s.lastUID, u)
	}
	s.searched, s.w.searched = started, started
	return nil
}

// arrival is when a message reached the mailbox: its INTERNALDATE, which the
// receiving server sets (never the sender's Date), in whole seconds. When
// the previous search (less the slack, given as after) began within that
// second and did not find the message, it came after that; and it cannot
// have come after the moment it was read.
func arrival(internal, after, read time.Time) time.Time {
	t := internal
	if t.IsZero() {
		return read
	}
	if after.After(t) && after.Before(t.Add(time.Second)) {
		t = after
	}
	if t.After(read) {
		t = read
	}
	return t
}

// fromAddress reads the From address of a header, lower case; "" if none.
func fromAddress(header []byte) string {
	if len(header) == 0 {
		return ""
	}
	if !bytes.HasSuffix(header, []byte("\r\n\r\n")) && !bytes.HasSuffix(header, []byte("\n\n")) {
		header = append(slices.Clip(header), "\r\n\r\n"...)
	}
	m, err := mail.ReadMessage(bytes.NewReader(header))
	if err != nil {
		return ""
	}
	a, err := mail.ParseAddress(m.Header.Get("From"))
	if err != nil {
		return strings.ToLower(strings.TrimSpace(m.Header.Get("From")))
	}
	return strings.ToLower(a.Address)
}

// watermark is the moment before which every message that reached the
// mailbox has been handed to the handler, mail set aside by Triage apart:
// the start of the session's latest search less ArrivalSlack, or the
// arrival of a message still waiting (or deferred after a handler error)
// if that is earlier. A message the search did not find gets an arrival
// no earlier than that (see arrival), whole seconds of INTERNALDATE or not.
func (s *session) watermark() time.Time {
	if s.searched.IsZero() {
		return time.Time{}
	}
	w := s.searched.Add(-s.w.cfg.ArrivalSlack)
	for _, p := range s.queue {
		if !p.setAside && p.arrived.Before(w) {
			w = p.arrived
		}
	}
	return w
}

// report tells Config.OnWatermark of a higher watermark.
func (s *session) report() {
	if s.w.cfg.OnWatermark == nil {
		return
	}
	if w := s.watermark(); w.After(s.w.reported) {
		s.w.reported = w
		s.w.cfg.OnWatermark(w)
	}
}

// barrierWait is how long after a barrier the search must begin for the
// watermark to pass it.
func (s *session) barrierWait() time.Duration { return s.w.cfg.ArrivalSlack + 10*time.Millisecond }

// pick chooses the next batch, or says how long to wait before looking
// again when mail waits that may not be handled yet.
func (s *session) pick(now time.Time) (next []imap.UID, wait time.Duration) {
	due, retryAt := s.w.due(s.queue, now)
	game, aside := due, []*pending(nil)
	if s.asideN > 0 {
		game = nil
		for _, p := range due {
			if p.setAside {
				aside = append(aside, p)
			} else {
				game = append(game, p)
			}
		}
	}
	if len(game) > 0 {
		early, barrier := s.early(game)
		if len(early) > 0 {
			return s.turns(early), 0
		}
		// All the mail that waits arrived after the next deadline: it goes
		// to the handler once the deadline is applied, which needs the
		// watermark past it.
		if s.watermark().Before(barrier) {
			d := barrier.Add(s.barrierWait()).Sub(now)
			if !retryAt.IsZero() {
				d = min(d, retryAt.Sub(now))
			}
			return nil, max(d, 10*time.Millisecond)
		}
		// The watermark has passed the deadline and the handler has been
		// told, yet it is still the next: the earliest arrival goes alone,
		// so that whatever the handler does first is in order of arrival.
		first := slices.MinFunc(game, func(a, b *pending) int { return a.arrived.Compare(b.arrived) })
		return []imap.UID{first.uid}, 0
	}
	// Mail deferred after a handler error does not hold up set-aside mail:
	// it waits for its retry, which may take long.
	if len(aside) > 0 {
		return uidsOf(aside[:min(len(aside), s.w.cfg.BatchSize)]), 0
	}
	return nil, 0
}

// early returns the messages of game that arrived before the barrier, and
// the barrier (zero for none); game itself when they all did, which the
// caller must not change.
func (s *session) early(game []*pending) (early []*pending, barrier time.Time) {
	if s.w.cfg.Barrier != nil {
		barrier = s.w.cfg.Barrier()
	}
	late := func(p *pending) bool { return !p.arrived.Before(barrier) }
	if !barrier.IsZero() && slices.ContainsFunc(game, late) {
		return slices.DeleteFunc(slices.Clone(game), late), barrier
	}
	return game, barrier
}

// turnBatch bounds a batch taken by turns: mail that arrives during a
// backlog waits for at most this many messages before its sender's turn.
const turnBatch = 10

// turns returns the next batch of ps (ascending by UID): all of them when
// they fit in one batch, otherwise the senders take fair turns
// (fairQueue), each sender's mail oldest first, in a batch of at most
// turnBatch, so that one address flooding the mailbox, or a crowd of
// auto-responders, delays everyone else's mail by a batch, not by the
// whole backlog.
func (s *session) turns(ps []*pending) []imap.UID {
	if len(ps) <= s.w.cfg.BatchSize {
		s.turn = fairQueue{}
		return uidsOf(ps)
	}
	limit := min(s.w.cfg.BatchSize, turnBatch, len(ps))
	// A batch takes at most limit messages of one sender: a longer
	// queue would change nothing. The queues are laid out in one array,
	// each sender's in a stretch of its own, in order of their first
	// message: a slice for each sender at each turn of a long backlog
	// kept the collector busier than the choice itself.
	count := make([]int, len(s.senders))
	var ids []int // senders by their first message
	for _, p := range ps {
		c := count[p.sender]
		if c == 0 {
			ids = append(ids, p.sender)
		}
		if c < limit {
			count[p.sender] = c + 1
		}
	}
	at := make([]int, len(s.senders)) // where the next message of a sender goes
	bounds := make([]int, len(ids)+1)
	for i, id := range ids {
		at[id] = bounds[i]
		bounds[i+1] = bounds[i] + count[id]
	}
	flat := make([]imap.UID, bounds[len(ids)])
	for _, p := range ps {
		if id := p.sender; count[id] > 0 {
			flat[at[id]] = p.uid
			at[id]++
			count[id]--
		}
	}
	order := make([]string, len(ids))
	queues := make([][]imap.UID, len(ids))
	for i, id := range ids {
		order[i] = s.senders[id]
		queues[i] = flat[bounds[i]:bounds[i+1]]
	}
	next := s.turn.take(order, queues, limit)
	slices.Sort(next)
	return next
}

// setAside counts a message that Triage set aside, towards a flood, once
// however often a reconnection has it looked at again.
func (w *Watcher) setAside(uid imap.UID, arrived time.Time) {
	if w.floodUIDs == nil {
		w.floodUIDs = map[imap.UID]bool{}
	}
	if w.floodUIDs[uid] {
		return
	}
	w.floodUIDs[uid] = true
	f := &w.flood
	if f.Messages == 0 || arrived.Before(f.First) {
		f.First = arrived
	}
	if arrived.After(f.Last) {
		f.Last = arrived
	}
	f.Messages++
	if f.Messages == w.cfg.FloodSize {
		w.log.Warn("a flood of mail that no game can use: set aside behind the games' mail", "so_far", f.Messages)
	}
}

// floodOver reports a flood once its mail has all been handled and none
// has come for FloodQuiet, and starts counting afresh.
func (w *Watcher) floodOver() {
	f := w.flood
	if f.Messages == 0 || time.Since(f.Last) < w.cfg.FloodQuiet {
		return
	}
	w.flood, w.floodUIDs = Flood{}, nil
	if f.Messages < w.cfg.FloodSize {
		return
	}
	w.log.Warn("flood worked off", "messages", f.Messages, "first", f.First, "last", f.Last)
	if w.cfg.OnFlood != nil {
		w.cfg.OnFlood(f)
	}
}

// flooding reports whether the set-aside mail counted so far is a flood.
func (w *Watcher) flooding() bool { return w.flood.Messages >= w.cfg.FloodSize }

// Flood describes mail that no game could use, set aside in bulk.
type Flood struct {
	// Messages is how many there were; First and Last when the first and
	// the last reached the mailbox.
	Messages    int
	First, Last time.Time
}
