package service

import (
	"bufio"
	"bytes"
	"cmp"
	"mime"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-message/textproto"

	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/store"
)

// Missing is a message the backup had read that the mailbox no longer
// holds, in the folder it was read from or, by its Message-ID, in any
// folder the restore reads: a person or a provider's retention rule
// deleted it (the host never deletes mail).
type Missing struct {
	// Game is the game it was for, "" for none.
	Game      string
	Mailbox   string
	UID       uint32
	MessageID string
	Arrived   time.Time
	From      string
	Subject   string
}

// Gap is a run of UIDs a folder once gave to messages that it no longer
// holds and that no message the backup read accounts for. A server that
// numbers its messages one by one, as Dovecot does, gave each of them to a
// message that was deleted since; one that skips numbers (Gmail) leaves
// gaps of its own, so a gap is a warning, not a proof: which game the
// message was for cannot be told.
type Gap struct {
	Folder string
	// First and Last are the run's UIDs; Count how many messages are gone
	// (for the folder mail is moved to, all its gaps less those the
	// backup's missing messages account for, in one Gap).
	First, Last uint32
	Count       int
	// After and Before are the arrivals of the messages the folder still
	// holds on either side (zero when there is none): the ones gone came
	// between them.
	After, Before time.Time
}

// findMissing compares the messages the backup read (none without a
// backup) with what the mailbox holds now: the ones it no longer holds,
// and the runs of UIDs no message accounts for. moveTo is the folder the
// host moves what it read to, "" for none.
func findMissing(reads []store.Read, hist *watcher.History, moveTo string) ([]Missing, []Gap) {
	type key struct {
		box     string
		uv, uid uint32
	}
	held := map[key]bool{}
	ids := map[string]bool{}
	uids := map[string][]watcher.Stored{}
	for _, m := range hist.Messages {
		held[key{m.Mailbox, m.UIDValidity, m.UID}] = true
		if id := bareID(m.MessageID); id != "" {
			ids[id] = true
		}
		uids[m.Mailbox] = append(uids[m.Mailbox], m)
	}
	read := map[key]bool{}
	var missing []Missing
	for _, r := range reads {
		read[key{r.Mailbox, r.UIDValidity, r.UID}] = true
		switch {
		case held[key{r.Mailbox, r.UIDValidity, r.UID}]:
			continue
		case bareID(r.MessageID) != "" && ids[bareID(r.MessageID)]:
			continue
		case bareID(r.MessageID) == "" && moveTo != "":
			// Moved, it has another UID and nothing else to know it by.
			continue
		}
		from, subject := fromAndSubject(r.Header)
		missing = append(missing, Missing{Game: r.Game, Mailbox: r.Mailbox, UID: r.UID, MessageID: r.MessageID,
			Arrived: r.ReceivedAt, From: from, Subject: subject})
	}

	var gaps []Gap
	for _, f := range hist.Folders {
		// What the host read is moved out of the watched folder when
		// moveTo is set: its gaps are the moves.
		if f.Missing || (moveTo != "" && f.Name != moveTo) {
			continue
		}
		msgs := uids[f.Name]
		slices.SortFunc(msgs, func(a, b watcher.Stored) int { return cmp.Compare(a.UID, b.UID) })
		var runs []Gap
		prev := watcher.Stored{}
		emit := func(first, last uint32, before time.Time) {
			g := Gap{Folder: f.Name, After: prev.Arrived, Before: before}
			for u := first; u <= last && u != 0; u++ {
				if moveTo == "" && read[key{f.Name, f.UIDValidity, u}] {
					// The backup read it: it is missing above, or was
					// never gone.
					if g.Count > 0 {
						runs = append(runs, g)
						g = Gap{Folder: f.Name, After: prev.Arrived, Before: before}
					}
					continue
				}
				if g.Count == 0 {
					g.First = u
				}
				g.Last, g.Count = u, g.Count+1
			}
			if g.Count > 0 {
				runs = append(runs, g)
			}
		}
		for _, m := range msgs {
			if m.UID > prev.UID+1 {
				emit(prev.UID+1, m.UID-1, m.Arrived)
			}
			prev = m
		}
		if f.UIDNext > prev.UID+1 {
			emit(prev.UID+1, f.UIDNext-1, time.Time{})
		}
		if moveTo == "" {
			gaps = append(gaps, runs...)
			continue
		}
		// In the folder mail is moved to, the backup's missing messages
		// were gaps too (moved there, deleted there); the rest is told as
		// one count.
		n := 0
		for _, g := range runs {
			n += g.Count
		}
		if n -= len(missing); n > 0 {
			gaps = append(gaps, Gap{Folder: f.Name, First: runs[0].First, Last: runs[len(runs)-1].Last, Count: n})
		}
	}
	return missing, gaps
}

// bareID is a Message-ID without its angle brackets, as the store and the
// header may write it either way.
func bareID(id string) string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(id), "<"), ">"))
}

// fromAndSubject are the From and the decoded Subject of a header.
func fromAndSubject(header []byte) (from, subject string) {
	hdr, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(header)))
	if err != nil {
		return "", ""
	}
	dec := new(mime.WordDecoder)
	decode := func(v string) string {
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		return shorten(strings.Join(strings.Fields(v), " "), 72)
	}
	return decode(hdr.Get("From")), decode(hdr.Get("Subject"))
}

// shorten cuts s to at most n runes, with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
