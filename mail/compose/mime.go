package compose

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/emersion/go-message"
	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/templates"
)

// draft is one reader's copy of a message, before it is laid out and
// encoded.
type draft struct {
	game     string
	d        delivery
	state    *engine.State
	now      time.Time
	sections []*templates.Section
	main     *templates.Section
	headline string
	self     *templates.Self
	tally    *templates.Tally
	// id is the Message-ID, with brackets.
	id string
	// date is the Date header; zero: now. It is later than now for mail
	// that follows earlier mail of the same batch.
	date time.Time
	// kind is the X-Mafiamail-Kind value; empty: derived from the main
	// section and the conversation.
	kind string
	// fromName is the display name of a relay's author; empty: the host.
	fromName string
	// replyTo, when set, is where a plain Reply goes instead of the
	// conversation's own address, with replyName as its display name and
	// replyWhere, that place in words, for the footer.
	replyTo, replyName, replyWhere string
	// calendar is the iCalendar object the message carries, or nil.
	calendar []byte
}

// finish lays out a draft and encodes it.
func (c *Composer) finish(dr draft) (Outgoing, error) {
	s := dr.state
	l := c.langFor(s, dr.d.r)
	m := &templates.View{
		Lang:     l.Tag,
		Game:     dr.game,
		Channel:  dr.d.ch,
		Reader:   dr.d.r.reader(),
		Now:      moment(s, dr.now, dr.now),
		Headline: dr.headline,
		Self:     dr.self,
		Sections: dr.sections,
		Tally:    dr.tally,
	}
	if s != nil {
		m.Footer = c.footer(s, dr.d, dr.now)
		switch {
		case dr.replyWhere != "":
			m.Footer.RepliesTo, m.Footer.ReplyAddress = dr.replyWhere, dr.replyTo
		case dr.replyTo != "" && dr.d.ch != templates.Thread:
			m.Footer.ReplyThread = true
		}
	} else {
		m.Footer = templates.Footer{Channel: templates.Host}
	}
	kind := dr.kind
	if kind == "" {
		kind = headerKind(dr.main.Kind, dr.d)
	}
	m.Kind = kind
	if own := ownZone(s, dr.d.r); own != nil {
		templates.ShowOwnZone(m, own)
	}
	rendered, err := templates.Render(dr.main.Kind, m)
	if err != nil {
		return Outgoing{}, fmt.Errorf("compose: %s for %s: %w", dr.main.Kind, dr.d.r.key, err)
	}
	var cv conversation
	if dr.game != "" {
		cv = c.conversation(dr.game, s, dr.d, l)
		if dr.replyTo != "" {
			cv.replyTo, cv.replyName = dr.replyTo, dr.replyName
		}
	} else {
		cv = conversation{subject: "[" + productName + "] " + rendered.Subject, replyTo: dr.replyTo, replyName: dr.replyName}
	}
	if dr.replyTo != "" {
		cv.replyTo, cv.replyName = dr.replyTo, dr.replyName
	}
	date := dr.date
	if date.IsZero() {
		date = dr.now
	}
	raw, err := c.encode(envelope{
		id: dr.id, date: date.In(gameZone(s)), game: dr.game, kind: kind,
		fromName: c.fromName(dr.game, dr.fromName), lang: l.Tag, to: dr.d.r, cv: cv, images: inlineImages(dr.sections), calendar: dr.calendar,
	}, rendered)
	if err != nil {
		return Outgoing{}, fmt.Errorf("compose: encode %s: %w", dr.id, err)
	}
	var contents []string
	for _, sec := range dr.sections {
		contents = append(contents, sec.Kind)
		if sec.Reply != nil {
			for _, l := range sec.Reply.Lines {
				for _, sub := range l.Sections {
					contents = append(contents, sub.Kind)
				}
			}
		}
	}
	return Outgoing{
		MessageID: dr.id, Game: dr.game, Kind: kind, From: c.host, To: []string{dr.d.r.addr},
		Raw: raw, Recipient: dr.d.r.key, Date: date, Contents: contents,
	}, nil
}

// headerKind is the X-Mafiamail-Kind of a message, from its main news and
// its conversation.
func headerKind(main string, d delivery) string {
	switch main {
	case "role":
		return KindRole
	case "end":
		return KindEnd
	case "dawn":
		return KindDawn
	case "tally":
		if d.ch != templates.Thread {
			return KindTally
		}
	case "refused":
		return KindError
	}
	switch {
	case d.ch == templates.Thread:
		return KindThread
	case d.ch == templates.Mafia:
		return KindMafia
	case d.r.referee:
		return KindReferee
	}
	switch main {
	case "joined", "renamed", "observer", "action", "extension", "held", "status", "help":
		return KindConfirm
	}
	return KindPrivate
}

// fromName is the display name on the host's From: the author of a relay
// (DMARC-safe, as Mailman's munge_from), or the game's host.
func (c *Composer) fromName(game, author string) string {
	switch {
	case game == "":
		return productName
	case author != "":
		return author + " (" + game + ")"
	}
	return "Mafia " + game
}

// envelope is what the header says about a message.
type envelope struct {
	id       string
	date     time.Time
	game     string
	kind     string
	fromName string
	// lang is the reader's language, for Content-Language.
	lang string
	to   recipient
	cv   conversation
	// images are shown by the HTML part (cid:), which then goes with them
	// in a multipart/related; the plain text never refers to them.
	images []inlineImage
	// calendar, when set, is an iCalendar object that goes beside the
	// text and the HTML: the message is then a multipart/mixed of the
	// alternative and the calendar part.
	calendar []byte
}

// inlineImage is a picture the HTML part shows by its Content-ID.
type inlineImage struct {
	cid  string
	png  []byte
	name string
}

// inlineImages are the pictures a message's sections show: the story's.
func inlineImages(secs []*templates.Section) []inlineImage {
	var out []inlineImage
	for _, sec := range secs {
		if sec.End != nil && sec.End.Story != nil && sec.End.Story.PictureCID != "" {
			out = append(out, inlineImage{cid: sec.End.Story.PictureCID, png: sec.End.Story.Picture, name: "votes.png"})
		}
	}
	return out
}

// encode writes the message: RFC 5322 header, multipart/alternative with a
// plain text and an HTML part, both UTF-8 and quoted-printable. The plain
// text is format=flowed (see encodeFlowed), so that plain-text clients
// reflow its paragraphs to their width and quote them cleanly.
//
// The header fields are formatted by go-message/mail's Header; the body is
// written by go-message's Writer with a boundary derived from the
// Message-ID, so that composing the same message twice gives the same
// bytes (mail.CreateInlineWriter would pick a random one).
func (c *Composer) encode(env envelope, r templates.Rendered) ([]byte, error) {
	var h gomail.Header
	// textproto writes fields in the reverse order of Add; collect them in
	// reading order and add them backwards.
	type field struct{ k, v string }
	var fields []field
	fmtd := func(set func(*gomail.Header), key string) {
		var t gomail.Header
		set(&t)
		if v := t.Get(key); v != "" {
			fields = append(fields, field{key, v})
		}
	}
	add := func(k, v string) { fields = append(fields, field{k, v}) }

	fmtd(func(t *gomail.Header) { t.SetDate(env.date) }, "Date")
	fmtd(func(t *gomail.Header) {
		t.SetAddressList("From", []*gomail.Address{{Name: env.fromName, Address: c.host}})
	}, "From")
	toName := env.to.name
	fmtd(func(t *gomail.Header) {
		t.SetAddressList("To", []*gomail.Address{{Name: toName, Address: env.to.addr}})
	}, "To")
	if env.cv.replyTo != "" {
		fmtd(func(t *gomail.Header) {
			t.SetAddressList("Reply-To", []*gomail.Address{{Name: env.cv.replyName, Address: env.cv.replyTo}})
		}, "Reply-To")
	}
	fmtd(func(t *gomail.Header) { t.SetSubject(env.cv.subject) }, "Subject")
	add("Message-Id", env.id)
	if env.cv.root != "" {
		add("In-Reply-To", env.cv.root)
		add("References", env.cv.root)
	}
	if env.cv.list {
		add("List-Id", env.cv.listID)
		add("List-Help", "<mailto:"+env.cv.help+"?body=HELP>")
		if env.cv.post != "" {
			add("List-Post", "<mailto:"+env.cv.post+">")
		} else {
			add("List-Post", "NO")
		}
		// RFC 2076; old vacation programs look at Precedence only.
		add("Precedence", "list")
	}
	add("Auto-Submitted", "auto-generated")
	add("X-Auto-Response-Suppress", "All")
	add("X-Loop", c.host)
	if env.game != "" {
		add("X-Mafiamail-Game", env.game)
	}
	add("X-Mafiamail-Kind", env.kind)
	if env.lang != "" {
		// RFC 3282: the language the reader reads the message in.
		add("Content-Language", env.lang)
	}
	add("MIME-Version", "1.0")
	text := encodeFlowed(r.Text)
	boundary := pickBoundary(env.id, text.text, r.HTML)
	altType := mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": boundary})
	if env.calendar != nil {
		add("Content-Type", mime.FormatMediaType("multipart/mixed",
			map[string]string{"boundary": pickBoundary(env.id+"/mixed", text.text, r.HTML)}))
	} else {
		add("Content-Type", altType)
	}
	for i := len(fields) - 1; i >= 0; i-- {
		h.Add(fields[i].k, fields[i].v)
	}

	var b bytes.Buffer
	top, err := message.CreateWriter(&b, h.Header)
	if err != nil {
		return nil, err
	}
	w := top
	if env.calendar != nil {
		var ah message.Header
		ah.Set("Content-Type", altType)
		if w, err = top.CreatePart(ah); err != nil {
			return nil, err
		}
	}
	textParams := map[string]string{"charset": "utf-8", "format": "flowed"}
	if text.delSp {
		textParams["delsp"] = "yes"
	}
	textPart := func(w *message.Writer, typ, body string, params map[string]string) error {
		var ph message.Header
		ph.Set("Content-Transfer-Encoding", "quoted-printable")
		ph.Set("Content-Disposition", "inline")
		ph.Set("Content-Type", mime.FormatMediaType(typ, params))
		pw, err := w.CreatePart(ph)
		if err != nil {
			return err
		}
		if _, err := pw.Write([]byte(body)); err != nil {
			return err
		}
		return pw.Close()
	}
	if err := textPart(w, "text/plain", text.text, textParams); err != nil {
		return nil, err
	}
	htmlParams := map[string]string{"charset": "utf-8"}
	if len(env.images) == 0 {
		if err := textPart(w, "text/html", r.HTML, htmlParams); err != nil {
			return nil, err
		}
	} else if err := writeRelated(w, env, r.HTML, htmlParams, textPart); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if env.calendar != nil {
		if err := writeCalendar(top, env.calendar); err != nil {
			return nil, err
		}
		if err := top.Close(); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// writeCalendar adds an iCalendar object as a part of its own, after the
// text and the HTML: Gmail, Outlook and Apple Mail offer to add it to the
// calendar, or update the event they have (T5), and every other client
// shows it as a file.
func writeCalendar(w *message.Writer, cal []byte) error {
	var ch message.Header
	ch.Set("Content-Type", mime.FormatMediaType("text/calendar",
		map[string]string{"charset": "utf-8", "method": "PUBLISH"}))
	ch.Set("Content-Transfer-Encoding", "base64")
	ch.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "deadline.ics"}))
	cw, err := w.CreatePart(ch)
	if err != nil {
		return err
	}
	if _, err := cw.Write(cal); err != nil {
		return err
	}
	return cw.Close()
}

// writeRelated writes the HTML part with the pictures it shows as one
// multipart/related (RFC 2387), the HTML first, each picture inline with
// its Content-ID, so that Gmail, Outlook and Apple Mail show them in place
// and list no attachment. Its boundary derives from the Message-ID too.
func writeRelated(w *message.Writer, env envelope, html string, htmlParams map[string]string,
	textPart func(*message.Writer, string, string, map[string]string) error) error {
	var rh message.Header
	boundary := pickBoundary(env.id+"/related", html)
	rh.Set("Content-Type", mime.FormatMediaType("multipart/related",
		map[string]string{"boundary": boundary, "type": "text/html"}))
	rw, err := w.CreatePart(rh)
	if err != nil {
		return err
	}
	if err := textPart(rw, "text/html", html, htmlParams); err != nil {
		return err
	}
	for _, img := range env.images {
		var ih message.Header
		ih.Set("Content-Type", "image/png")
		ih.Set("Content-Transfer-Encoding", "base64")
		ih.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": img.name}))
		ih.Set("Content-Id", "<"+img.cid+">")
		iw, err := rw.CreatePart(ih)
		if err != nil {
			return err
		}
		if _, err := iw.Write(img.png); err != nil {
			return err
		}
		if err := iw.Close(); err != nil {
			return err
		}
	}
	return rw.Close()
}

// pickBoundary derives the multipart boundary from the Message-ID. A body
// that happens to hold it (a post can be written by anyone who can guess a
// Message-ID) gets the next candidate.
func pickBoundary(id string, bodies ...string) string {
	for n := 0; ; n++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", id, n)))
		b := "mafiamail-" + hex.EncodeToString(sum[:12])
		clash := false
		for _, body := range bodies {
			if strings.Contains(body, b) {
				clash = true
			}
		}
		if !clash {
			return b
		}
	}
}

// ownZone is the zone a player chose for their own copies (ZONE), or nil:
// every time in their copies is then shown in it too, beside the game's.
// The copy is theirs alone, so no one else's mail changes.
func ownZone(s *engine.State, r recipient) *time.Location {
	if s == nil || r.slot <= 0 {
		return nil
	}
	p := s.Player(r.slot)
	if p == nil || p.Zone == "" {
		return nil
	}
	loc, err := engine.ReadZone(p.Zone)
	if err != nil {
		return nil // read once when it was set; a zone database without it shows the game's time alone
	}
	return loc
}
