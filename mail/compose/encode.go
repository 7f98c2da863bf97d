package compose

import (
	"fmt"
	"mime"
	"time"

	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/mimepart"
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
	// receipt, when set, is the reader's own receipt in one line under
	// the headline: the mail's news leads, and the receipt follows.
	receipt string
	self    *templates.Self
	tally   *templates.Tally
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
	flow  *mimepart.Flow
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
		Receipt:  dr.receipt,
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
		if own := privateSubject(dr, l, rendered.Subject); own != "" {
			cv.subject = "[" + dr.game + "] " + own
		}
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
	fromName := c.fromName(dr.game, dr.fromName)
	if dr.main != nil && dr.main.Kind == "mafialist" {
		// The list's first mail comes from the list, by its name, as
		// its Reply-To says where a Reply goes.
		fromName = cv.replyName
	}
	raw, err := c.encode(envelope{
		id: dr.id, date: date.In(gameZone(s)), game: dr.game, kind: kind,
		fromName: fromName, lang: l.Tag, to: dr.d.r, cv: cv, images: inlineImages(dr.sections), calendar: dr.calendar,
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
	images []mimepart.Image
	// calendar, when set, is an iCalendar object that goes beside the
	// text and the HTML: the message is then a multipart/mixed of the
	// alternative and the calendar part.
	calendar []byte
	// flow keeps how the batch's lines break (nil: nothing is kept).
	flow *mimepart.Flow
}

// inlineImages are the pictures a message's sections show: the story's.
func inlineImages(secs []*templates.Section) []mimepart.Image {
	var out []mimepart.Image
	for _, sec := range secs {
		if sec.End != nil && sec.End.Story != nil && sec.End.Story.PictureCID != "" {
			out = append(out, mimepart.Image{CID: sec.End.Story.PictureCID, PNG: sec.End.Story.Picture, Name: "votes.png"})
		}
	}
	return out
}

// encode writes the message: RFC 5322 header, multipart/alternative with a
// plain text and an HTML part, both UTF-8 and quoted-printable. The plain
// text is format=flowed (see mimepart.EncodeFlowed), so that plain-text
// clients reflow its paragraphs to their width and quote them cleanly; no
// soft line of it starts with a command.
//
// The message is written straight into one buffer (see mimepart.Writer) with a
// boundary derived from the Message-ID, so that composing the same message
// twice gives the same bytes (mail.CreateInlineWriter would pick a random
// one). Every command sends at least one message: building go-message's
// Header maps and Writers for each took a fifth of a command's allocations.
func (c *Composer) encode(env envelope, r templates.Rendered) ([]byte, error) {
	flow := env.flow
	if flow == nil {
		flow = plainFlow
	}
	text := flow.Encode(r.Text)
	boundary := mimepart.Boundary(env.id, text.Text, r.HTML)
	altType := mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": boundary})

	var w mimepart.Writer
	w.Grow(2*len(text.Text) + 2*len(r.HTML) + 2048)
	if !env.date.IsZero() {
		var buf [40]byte
		w.Field("Date", string(env.date.AppendFormat(buf[:0], dateLayout)))
	}
	w.Field("From", (&gomail.Address{Name: env.fromName, Address: c.host}).String())
	w.Field("To", (&gomail.Address{Name: env.to.name, Address: env.to.addr}).String())
	if env.cv.replyTo != "" {
		w.Field("Reply-To", (&gomail.Address{Name: env.cv.replyName, Address: env.cv.replyTo}).String())
	}
	if subject := mime.QEncoding.Encode("utf-8", env.cv.subject); subject != "" {
		w.Field("Subject", subject)
	}
	w.Field("Message-Id", env.id)
	if env.cv.root != "" {
		w.Field("In-Reply-To", env.cv.root)
		w.Field("References", env.cv.root)
	}
	if env.cv.list {
		w.Field("List-Id", env.cv.listID)
		w.Field("List-Help", "<mailto:"+env.cv.help+"?body=HELP>")
		if env.cv.post != "" {
			w.Field("List-Post", "<mailto:"+env.cv.post+">")
		} else {
			w.Field("List-Post", "NO")
		}
		// RFC 2076; old vacation programs look at Precedence only.
		w.Field("Precedence", "list")
	}
	w.Field("Auto-Submitted", "auto-generated")
	w.Field("X-Auto-Response-Suppress", "All")
	w.Field("X-Loop", c.host)
	if env.game != "" {
		w.Field("X-Mafiamail-Game", env.game)
	}
	w.Field("X-Mafiamail-Kind", env.kind)
	if env.lang != "" {
		// RFC 3282: the language the reader reads the message in.
		w.Field("Content-Language", env.lang)
	}
	w.Field("Mime-Version", "1.0")
	top := boundary
	if env.calendar != nil {
		top = mimepart.Boundary(env.id+"/mixed", text.Text, r.HTML)
		w.Field("Content-Type", mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": top}))
	} else {
		w.Field("Content-Type", altType)
	}
	w.EndHeader()
	if env.calendar != nil {
		w.Part(top)
		w.Field("Content-Type", altType)
		w.EndHeader()
	}
	textParams := map[string]string{"charset": "utf-8", "format": "flowed"}
	if text.DelSp {
		textParams["delsp"] = "yes"
	}
	w.Part(boundary)
	w.TextPart("text/plain", text.Text, textParams)
	htmlParams := map[string]string{"charset": "utf-8"}
	if len(env.images) == 0 {
		w.Part(boundary)
		w.TextPart("text/html", r.HTML, htmlParams)
	} else {
		w.Related(boundary, env.id, r.HTML, htmlParams, env.images)
	}
	w.Close(boundary)
	if env.calendar != nil {
		// Gmail, Outlook and Apple Mail offer to add the deadline to the
		// calendar, or update the event they have (T5).
		w.CalendarPart(top, "deadline.ics", env.calendar)
		w.Close(top)
	}
	return w.Bytes()
}

// plainFlow breaks the lines of mail composed outside a batch: it keeps
// nothing, so it is safe for every goroutine at once.
var plainFlow = mimepart.NewFlow(readsAsCommand, false)

// newFlow keeps how the lines of one batch's mail break.
func newFlow() *mimepart.Flow { return mimepart.NewFlow(readsAsCommand, true) }

// commandSets are all the places a line may be read as a command.
var commandSets = []command.Set{command.Thread, command.Private, command.Mafia,
	command.Referee, command.Host, command.Signup}

// readsAsCommand reports whether a line starting with text would read as a
// command, or as a broken one, anywhere: no soft line of a text part
// starts so, since a client that does not know format=flowed quotes the
// physical lines back, and the host would read the quote as a command.
func readsAsCommand(text string) bool {
	for _, set := range commandSets {
		if _, ok, err := command.ParseLine(text, set); ok || err != nil {
			return true
		}
	}
	return false
}

// dateLayout is the Date field's layout (RFC 5322 3.3), as go-message/mail
// writes it.
const dateLayout = "Mon, 02 Jan 2006 15:04:05 -0700"

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
