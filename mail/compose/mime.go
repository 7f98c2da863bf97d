package compose

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"slices"
	"strings"
	"time"

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
	// cache keeps the layout this copy shares with others, and flow how
	// its lines break (nil: nothing is kept).
	cache *templates.Cache
	flow  *flowMemo
	// public, for thread and mafia-list mail, finds the copy's public
	// lines (Outgoing.Public); nil for other mail.
	public *publicNews
}

// dateHeader is the draft's Date: date, or now when date is not set.
func (dr draft) dateHeader() time.Time {
	if dr.date.IsZero() {
		return dr.now
	}
	return dr.date
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
	rendered, err := dr.cache.Render(dr.main.Kind, m)
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
	date := dr.dateHeader()
	raw, err := c.encode(envelope{
		id: dr.id, date: date.In(gameZone(s)), game: dr.game, kind: kind,
		fromName: c.fromName(dr.game, dr.fromName), lang: l.Tag, to: dr.d.r, cv: cv, images: inlineImages(dr.sections), calendar: dr.calendar,
		flow: dr.flow,
	}, rendered)
	if err != nil {
		return Outgoing{}, fmt.Errorf("compose: encode %s: %w", dr.id, err)
	}
	var public, publicIn string
	if dr.public != nil {
		publicIn = string(dr.d.ch)
		if public, err = c.publicText(dr, rendered.Text); err != nil {
			return Outgoing{}, fmt.Errorf("compose: %s for %s, as every reader has it: %w", dr.main.Kind, dr.d.r.key, err)
		}
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
		Raw: raw, Recipient: dr.d.r.key, Date: date, Contents: contents, Town: dr.town(),
		Public: public, PublicIn: publicIn,
	}, nil
}

// town reports whether a draft is mail the town needs before a round's
// close (see Outgoing.Town).
func (dr draft) town() bool {
	if dr.game == "" || dr.d.r.referee {
		return false
	}
	if dr.d.ch == templates.Thread {
		return true
	}
	for _, sec := range dr.sections {
		if sec.Kind == "reminder" && sec.Variant != "night" {
			return true
		}
	}
	return false
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
	// flow keeps how the batch's lines break (nil: nothing is kept).
	flow *flowMemo
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
// The message is written straight into one buffer (see mimeWriter) with a
// boundary derived from the Message-ID, so that composing the same message
// twice gives the same bytes (mail.CreateInlineWriter would pick a random
// one). Every command sends at least one message: building go-message's
// Header maps and Writers for each took a fifth of a command's allocations.
func (c *Composer) encode(env envelope, r templates.Rendered) ([]byte, error) {
	text := env.flow.encode(r.Text)
	boundary := pickBoundary(env.id, text.text, r.HTML)
	altType := mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": boundary})

	w := mimeWriter{}
	w.b.Grow(2*len(text.text) + 2*len(r.HTML) + 2048)
	if !env.date.IsZero() {
		var buf [40]byte
		w.field("Date", string(env.date.AppendFormat(buf[:0], dateLayout)))
	}
	w.field("From", (&gomail.Address{Name: env.fromName, Address: c.host}).String())
	w.field("To", (&gomail.Address{Name: env.to.name, Address: env.to.addr}).String())
	if env.cv.replyTo != "" {
		w.field("Reply-To", (&gomail.Address{Name: env.cv.replyName, Address: env.cv.replyTo}).String())
	}
	if subject := mime.QEncoding.Encode("utf-8", env.cv.subject); subject != "" {
		w.field("Subject", subject)
	}
	w.field("Message-Id", env.id)
	if env.cv.root != "" {
		w.field("In-Reply-To", env.cv.root)
		w.field("References", env.cv.root)
	}
	if env.cv.list {
		w.field("List-Id", env.cv.listID)
		w.field("List-Help", "<mailto:"+env.cv.help+"?body=HELP>")
		if env.cv.post != "" {
			w.field("List-Post", "<mailto:"+env.cv.post+">")
		} else {
			w.field("List-Post", "NO")
		}
		// RFC 2076; old vacation programs look at Precedence only.
		w.field("Precedence", "list")
	}
	w.field("Auto-Submitted", "auto-generated")
	w.field("X-Auto-Response-Suppress", "All")
	w.field("X-Loop", c.host)
	if env.game != "" {
		w.field("X-Mafiamail-Game", env.game)
	}
	w.field("X-Mafiamail-Kind", env.kind)
	if env.lang != "" {
		// RFC 3282: the language the reader reads the message in.
		w.field("Content-Language", env.lang)
	}
	w.field("Mime-Version", "1.0")
	top := boundary
	if env.calendar != nil {
		top = pickBoundary(env.id+"/mixed", text.text, r.HTML)
		w.field("Content-Type", mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": top}))
	} else {
		w.field("Content-Type", altType)
	}
	w.endHeader()
	if env.calendar != nil {
		w.part(top)
		w.field("Content-Type", altType)
		w.endHeader()
	}
	textParams := map[string]string{"charset": "utf-8", "format": "flowed"}
	if text.delSp {
		textParams["delsp"] = "yes"
	}
	w.part(boundary)
	w.textPart("text/plain", text.text, textParams)
	htmlParams := map[string]string{"charset": "utf-8"}
	if len(env.images) == 0 {
		w.part(boundary)
		w.textPart("text/html", r.HTML, htmlParams)
	} else {
		writeRelated(&w, boundary, env, r.HTML, htmlParams)
	}
	w.close(boundary)
	if env.calendar != nil {
		writeCalendar(&w, top, env.calendar)
		w.close(top)
	}
	if w.err != nil {
		return nil, w.err
	}
	return w.b.Bytes(), nil
}

// dateLayout is the Date field's layout (RFC 5322 3.3), as go-message/mail
// writes it.
const dateLayout = "Mon, 02 Jan 2006 15:04:05 -0700"

// writeCalendar adds an iCalendar object as a part of its own, after the
// text and the HTML: Gmail, Outlook and Apple Mail offer to add it to the
// calendar, or update the event they have (T5), and every other client
// shows it as a file.
func writeCalendar(w *mimeWriter, boundary string, cal []byte) {
	w.part(boundary)
	w.field("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "deadline.ics"}))
	w.field("Content-Transfer-Encoding", "base64")
	w.field("Content-Type", mime.FormatMediaType("text/calendar",
		map[string]string{"charset": "utf-8", "method": "PUBLISH"}))
	w.endHeader()
	w.base64(cal)
}

// writeRelated writes the HTML part with the pictures it shows as one
// multipart/related (RFC 2387), the HTML first, each picture inline with
// its Content-ID, so that Gmail, Outlook and Apple Mail show them in place
// and list no attachment. Its boundary derives from the Message-ID too.
func writeRelated(w *mimeWriter, outer string, env envelope, html string, htmlParams map[string]string) {
	boundary := pickBoundary(env.id+"/related", html)
	w.part(outer)
	w.field("Content-Type", mime.FormatMediaType("multipart/related",
		map[string]string{"boundary": boundary, "type": "text/html"}))
	w.endHeader()
	w.part(boundary)
	w.textPart("text/html", html, htmlParams)
	for _, img := range env.images {
		w.part(boundary)
		w.field("Content-Id", "<"+img.cid+">")
		w.field("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": img.name}))
		w.field("Content-Transfer-Encoding", "base64")
		w.field("Content-Type", "image/png")
		w.endHeader()
		w.base64(img.png)
	}
	w.close(boundary)
}

// mimeWriter writes a MIME message into one buffer, byte for byte as
// go-message's Writer writes it: header fields folded as its textproto
// folds them, each part opened by its boundary line (a CRLF before every
// boundary but the first of the message), quoted-printable by
// mime/quotedprintable, and base64 in lines of 76 characters.
type mimeWriter struct {
	b bytes.Buffer
	// opened are the boundaries with a part begun: their next boundary
	// line starts on a line of its own. The first part of a multipart
	// starts right under the header that names its boundary.
	opened []string
	// err is the first field that cannot be written.
	err error
}

// field writes one header field, folded (RFC 5322 2.2.3). The name must be
// in canonical form (textproto.CanonicalMIMEHeaderKey), as go-message
// writes it.
func (w *mimeWriter) field(k, v string) {
	if i := strings.IndexAny(v, "\r\n"); i >= 0 && w.err == nil {
		w.err = fmt.Errorf("header field %s: value contains \\r\\n (at %d)", k, i)
	}
	w.b.WriteString(k)
	w.b.WriteString(": ")
	if v == "" {
		w.b.WriteString("\r\n")
		return
	}
	first := true
	for len(v) > 0 {
		keylen := 0
		if first {
			keylen = len(k) + 2
		}
		// First try with a soft limit; a fold that would change the value
		// tries the hard limit.
		l, fold, next, ok := foldLine(v, preferredHeaderLen-keylen)
		if !ok {
			l, fold, next, _ = foldLine(v, maxHeaderLen-keylen)
		}
		w.b.WriteString(l)
		w.b.WriteString(fold)
		v = next
		first = false
	}
}

// The lengths of a header line: folded at the preferred one where there is
// whitespace to fold at, at the most at the hard one.
const (
	preferredHeaderLen = 76
	maxHeaderLen       = 998
)

// foldLine cuts the first line of a header field value, at the last
// whitespace within maxlen, as go-message's textproto does: it returns the
// line, what ends it ("\r\n", or "\r\n " where it had to cut a word,
// which ok then reports), and the rest.
func foldLine(v string, maxlen int) (line, fold, next string, ok bool) {
	ok = true
	foldBefore := maxlen + 1
	foldAt := len(v)
	if foldBefore > len(v) {
		if v[len(v)-1] != '\n' {
			fold = "\r\n"
		}
	} else {
		foldAt = strings.LastIndexAny(v[:foldBefore], " \t\n")
		if foldAt == 0 {
			// The whitespace found is the previous fold's.
			foldAt = foldBefore - 1
		} else if foldAt < 0 {
			foldAt = foldBefore - 2
		}
		switch v[foldAt] {
		case ' ', '\t':
			if v[foldAt-1] != '\n' {
				fold = "\r\n"
			}
		case '\n':
		default:
			fold = "\r\n "
			ok = false
		}
	}
	return v[:foldAt], fold, v[foldAt:], ok
}

// endHeader ends a header: the body follows.
func (w *mimeWriter) endHeader() { w.b.WriteString("\r\n") }

// part opens a part of the multipart with the boundary: its header
// follows.
func (w *mimeWriter) part(boundary string) {
	if slices.Contains(w.opened, boundary) {
		w.b.WriteString("\r\n")
	} else {
		w.opened = append(w.opened, boundary)
	}
	w.b.WriteString("--")
	w.b.WriteString(boundary)
	w.b.WriteString("\r\n")
}

// close ends the multipart with the boundary.
func (w *mimeWriter) close(boundary string) {
	w.b.WriteString("\r\n--")
	w.b.WriteString(boundary)
	w.b.WriteString("--\r\n")
}

// textPart writes the header and the quoted-printable body of a text
// part, whose boundary line is written.
func (w *mimeWriter) textPart(typ, body string, params map[string]string) {
	w.field("Content-Type", mime.FormatMediaType(typ, params))
	w.field("Content-Disposition", "inline")
	w.field("Content-Transfer-Encoding", "quoted-printable")
	w.endHeader()
	// Text mode (the Writer's default): every line break of the body,
	// LF or CRLF, goes out as CRLF, and trailing white space is encoded.
	qw := quotedprintable.NewWriter(&w.b)
	if _, err := qw.Write([]byte(body)); err != nil && w.err == nil {
		w.err = fmt.Errorf("%s part: %w", typ, err)
	}
	if err := qw.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("%s part: %w", typ, err)
	}
}

// base64 writes data in base64, in lines of 76 characters with no line
// break after the last.
func (w *mimeWriter) base64(data []byte) {
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		w.b.WriteString(enc[:76])
		w.b.WriteString("\r\n")
		enc = enc[76:]
	}
	w.b.WriteString(enc)
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
