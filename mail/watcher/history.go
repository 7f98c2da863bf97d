package watcher

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message/textproto"
)

// Stored is one message a mailbox holds, as History lists it.
type Stored struct {
	// Mailbox, UIDValidity and UID identify it on the server.
	Mailbox     string
	UIDValidity uint32
	UID         uint32
	// Arrived is its INTERNALDATE: when it reached the mailbox, set by the
	// receiving server (a MOVE keeps it).
	Arrived time.Time
	Size    int64
	Seen    bool
	// MessageID is its Message-ID as written, "" for none: a message moved
	// to another folder keeps it and gets a new UID.
	MessageID string
	// To are the addresses it was written or delivered to (To, Cc,
	// Delivered-To, X-Original-To), lower-cased; those that do not parse
	// are left out.
	To []string
}

// Folder is what History found of one folder.
type Folder struct {
	Name        string
	UIDValidity uint32
	// UIDNext is the UID the folder's next message will get.
	UIDNext uint32
	// Missing says whether the folder does not exist.
	Missing bool
}

// History is every message of the watched mailbox and of Config.MoveTo,
// \Seen or not, in the order they reached the mailbox: a host that lost
// its database replays it (docs/hosting.md, "Restoring").
type History struct {
	w        *Watcher
	s        *session
	selected string
	// Folders are the watched mailbox, then MoveTo if set.
	Folders []Folder
	// Messages are in order of arrival: INTERNALDATE, then the folder
	// mail is moved to before the watched one (what was moved was there
	// first), then UID.
	Messages []Stored
}

// OpenHistory connects and logs in as Run does and lists the messages of
// the watched mailbox and of MoveTo, changing nothing on the server (the
// folders are opened read-only). Close ends the connection.
func OpenHistory(ctx context.Context, cfg Config) (*History, error) {
	w, err := New(cfg, func(context.Context, Fetched) error { return nil })
	if err != nil {
		return nil, err
	}
	c, err := w.dial(ctx, &imapclient.Options{TLSConfig: w.tls})
	if err != nil {
		return nil, err
	}
	h := &History{w: w, s: &session{w: w, c: c}}
	if err := h.s.login(ctx); err != nil {
		c.Close()
		return nil, err
	}
	names := []string{w.cfg.Mailbox}
	if w.cfg.MoveTo != "" {
		names = append(names, w.cfg.MoveTo)
	}
	for i, name := range names {
		f, msgs, err := h.list(ctx, name)
		if err != nil {
			h.Close()
			return nil, err
		}
		if f.Missing && i == 0 {
			h.Close()
			return nil, fmt.Errorf("open mailbox %q: it does not exist", name)
		}
		h.Folders = append(h.Folders, f)
		h.Messages = append(h.Messages, msgs...)
	}
	rank := func(box string) int {
		if box == w.cfg.Mailbox {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(h.Messages, func(a, b Stored) int {
		return cmp.Or(a.Arrived.Compare(b.Arrived), cmp.Compare(rank(a.Mailbox), rank(b.Mailbox)), cmp.Compare(a.UID, b.UID))
	})
	return h, nil
}

// list reads the UIDs, arrival times, sizes and flags of a folder's
// messages.
func (h *History) list(ctx context.Context, name string) (Folder, []Stored, error) {
	f := Folder{Name: name}
	var sel *imap.SelectData
	err := h.s.cmd(ctx, "EXAMINE "+name, func() (err error) {
		sel, err = h.s.c.Select(name, &imap.SelectOptions{ReadOnly: true}).Wait()
		return err
	})
	var imapErr *imap.Error
	if errors.As(err, &imapErr) && imapErr.Type == imap.StatusResponseTypeNo && name != h.w.cfg.Mailbox {
		f.Missing = true
		return f, nil, nil
	}
	if err != nil {
		return f, nil, fmt.Errorf("open mailbox %q: %w", name, err)
	}
	h.selected = name
	f.UIDValidity, f.UIDNext = sel.UIDValidity, uint32(sel.UIDNext)
	if sel.NumMessages == 0 {
		return f, nil, nil
	}
	var out []Stored
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: listedFields, Peek: true}
	err = h.s.cmd(ctx, "UID FETCH 1:*", func() error {
		all := imap.UIDSet{imap.UIDRange{Start: 1, Stop: 0}}
		msgs, err := h.s.c.Fetch(all, &imap.FetchOptions{UID: true, InternalDate: true, RFC822Size: true, Flags: true,
			BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return err
		}
		for _, m := range msgs {
			id, to := listedHeader(m.FindBodySection(section))
			out = append(out, Stored{Mailbox: name, UIDValidity: f.UIDValidity, UID: uint32(m.UID),
				Arrived: m.InternalDate, Size: m.RFC822Size, Seen: slices.Contains(m.Flags, imap.FlagSeen),
				MessageID: id, To: to})
		}
		return nil
	})
	if err != nil {
		return f, nil, fmt.Errorf("list mailbox %q: %w", name, err)
	}
	return f, out, nil
}

// Read fetches a message the listing holds, as Run hands it over: whole,
// or its header alone when it is larger than Config.MaxMessageBytes. It
// sets no flag.
func (h *History) Read(ctx context.Context, m Stored) (Fetched, error) {
	f := Fetched{Mailbox: m.Mailbox, UIDValidity: m.UIDValidity, UID: m.UID, Size: m.Size, Arrived: m.Arrived}
	if h.selected != m.Mailbox {
		if err := h.s.cmd(ctx, "EXAMINE "+m.Mailbox, func() error {
			sel, err := h.s.c.Select(m.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
			if err == nil && sel.UIDValidity != m.UIDValidity {
				err = fmt.Errorf("its UIDVALIDITY changed from %d to %d while it was read", m.UIDValidity, sel.UIDValidity)
			}
			return err
		}); err != nil {
			return f, fmt.Errorf("open mailbox %q: %w", m.Mailbox, err)
		}
		h.selected = m.Mailbox
	}
	section := &imap.FetchItemBodySection{Peek: true}
	if max := h.w.cfg.MaxMessageBytes; max > 0 && m.Size > max {
		section.Specifier, f.HeaderOnly = imap.PartSpecifierHeader, true
	}
	err := h.s.cmd(ctx, "UID FETCH", func() error {
		msgs, err := h.s.c.Fetch(imap.UIDSetNum(imap.UID(m.UID)), &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return fmt.Errorf("message %d went away while it was read", m.UID)
		}
		f.Raw = msgs[0].FindBodySection(section)
		return nil
	})
	if err != nil {
		return f, fmt.Errorf("read message %d of %q: %w", m.UID, m.Mailbox, err)
	}
	if !f.HeaderOnly {
		f.Size = int64(len(f.Raw))
	}
	return f, nil
}

// Close logs out.
func (h *History) Close() {
	h.s.logout()
	h.s.c.Close()
}

// SentMessageIDs reads the Message-IDs (canonical: in angle brackets, as
// written) of every message in the folder where the provider keeps what
// the host sent: folder, or the one the server marks \Sent (SPECIAL-USE,
// RFC 6154) when folder is empty. It returns the folder it read, "" when
// there is none.
func (h *History) SentMessageIDs(ctx context.Context, folder string) (string, map[string]bool, error) {
	if folder == "" {
		if err := h.s.cmd(ctx, "LIST", func() error {
			boxes, err := h.s.c.List("", "*", &imap.ListOptions{ReturnSpecialUse: h.s.c.Caps().Has(imap.CapSpecialUse)}).Collect()
			for _, b := range boxes {
				if folder == "" && slices.Contains(b.Attrs, imap.MailboxAttrSent) {
					folder = b.Mailbox
				}
			}
			return err
		}); err != nil {
			return "", nil, fmt.Errorf("list the folders: %w", err)
		}
		if folder == "" {
			return "", nil, nil
		}
	}
	f, msgs, err := h.list(ctx, folder)
	if err != nil {
		return folder, nil, err
	}
	if f.Missing {
		return "", nil, fmt.Errorf("the folder of sent mail %q does not exist", folder)
	}
	ids := map[string]bool{}
	if len(msgs) == 0 {
		return folder, ids, nil
	}
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Message-ID"}, Peek: true}
	err = h.s.cmd(ctx, "UID FETCH Message-ID", func() error {
		all := imap.UIDSet{imap.UIDRange{Start: 1, Stop: 0}}
		fetched, err := h.s.c.Fetch(all, &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return err
		}
		for _, m := range fetched {
			if id := headerMessageID(m.FindBodySection(section)); id != "" {
				ids[id] = true
			}
		}
		return nil
	})
	if err != nil {
		return folder, nil, fmt.Errorf("read the Message-IDs of %q: %w", folder, err)
	}
	return folder, ids, nil
}

// headerMessageID is the Message-ID of a header, as written, "" for none.
// listedFields are the header fields a listing reads of each message.
var listedFields = []string{"Message-ID", "To", "Cc", "Delivered-To", "X-Original-To"}

// listedHeader reads a listed message's Message-ID and the addresses it
// was written or delivered to.
func listedHeader(header []byte) (id string, to []string) {
	hdr, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(header)))
	if err != nil {
		return "", nil
	}
	for _, k := range listedFields[1:] {
		for _, v := range hdr.Values(k) {
			list, err := mail.ParseAddressList(v)
			if err != nil {
				continue
			}
			for _, a := range list {
				to = append(to, strings.ToLower(a.Address))
			}
		}
	}
	return strings.TrimSpace(hdr.Get("Message-Id")), to
}

func headerMessageID(header []byte) string {
	hdr, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(header)))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(hdr.Get("Message-Id"))
}
