package watcher

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/emersion/go-imap/v2"
)

// The session keeps its unseen messages twice: by UID, for what a fetch
// needs to know of one message, and in UID order, which the choice of each
// batch walks. A backlog of thousands of messages is worked off a batch
// at a time, so the order is kept as messages come and go rather than
// sorted again for every batch, and each message carries a small number
// for its sender, so that sharing turns among senders needs no map of
// addresses per batch.

// add notes an unseen message the session looked at.
func (s *session) add(uid imap.UID, p *pending) {
	if s.unseen == nil {
		s.unseen = map[imap.UID]*pending{}
	}
	if old, ok := s.unseen[uid]; ok {
		s.forget([]imap.UID{old.uid})
	}
	p.uid = uid
	from := p.from
	if from == "" {
		// No sender known: a sender of its own, so that it neither waits
		// behind nor holds up anyone's turn.
		from = fmt.Sprintf("uid:%d", uid)
	}
	id, ok := s.senderIDs[from]
	if !ok {
		if s.senderIDs == nil {
			s.senderIDs = map[string]int{}
		}
		id = len(s.senders)
		s.senderIDs[from] = id
		s.senders = append(s.senders, from)
	}
	p.sender = id
	s.unseen[uid] = p
	if n := len(s.queue); n == 0 || s.queue[n-1].uid < uid {
		s.queue = append(s.queue, p) // UIDs only grow: the usual case
	} else {
		i, _ := slices.BinarySearchFunc(s.queue, uid, byUID)
		s.queue = slices.Insert(s.queue, i, p)
	}
	if p.setAside {
		s.asideN++
	}
}

// forget drops handled messages from what the session knows.
func (s *session) forget(uids []imap.UID) {
	gone := make([]imap.UID, 0, len(uids))
	for _, u := range uids {
		if p, ok := s.unseen[u]; ok {
			delete(s.unseen, u)
			gone = append(gone, u)
			if p.setAside {
				s.asideN--
			}
		}
	}
	if len(gone) == 0 {
		return
	}
	slices.Sort(gone)
	// One pass from the first message gone: the messages of a batch are
	// mostly each sender's oldest, near the front.
	first, _ := slices.BinarySearchFunc(s.queue, gone[0], byUID)
	kept := s.queue[:first]
	for _, p := range s.queue[first:] {
		if len(gone) > 0 && p.uid == gone[0] {
			gone = gone[1:]
			continue
		}
		kept = append(kept, p)
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	if len(s.unseen) == 0 {
		// Sender numbers start afresh once nothing waits, so that a
		// long session does not keep every address it ever saw.
		s.senderIDs, s.senders = nil, nil
	}
}

func byUID(p *pending, u imap.UID) int { return cmp.Compare(p.uid, u) }

// uidsOf lists the UIDs of ps.
func uidsOf(ps []*pending) []imap.UID {
	uids := make([]imap.UID, len(ps))
	for i, p := range ps {
		uids[i] = p.uid
	}
	return uids
}
