package compose

import (
	"bytes"
	"mime"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message"
	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/mail/mimepart"
	"github.com/mafiamail/mafiamail/templates"
)

// TestEncodeAsGoMessage holds the message writer to what go-message writes
// for the same message, byte for byte, in the shapes the goldens do not
// show: a calendar beside the alternative, pictures beside the HTML, long
// and non-ASCII fields that fold.
func TestEncodeAsGoMessage(t *testing.T) {
	t.Parallel()
	c, err := New("Mafia Host <host@example.org>")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Zoë spoke at length ", 12)
	r := templates.Rendered{
		Subject: "Status",
		Text:    "Day 2.\n\n" + long + "\n> quoted =3D text\n-- \nfooter\n",
		HTML:    "<p>" + long + "</p>\n<p>caf\u00e9 = ok</p>\n",
	}
	date := time.Date(2026, 12, 1, 15, 0, 0, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		name string
		env  envelope
	}{
		{"plain", envelope{id: "<a@example.org>", date: date, kind: "confirm", fromName: "Mafia g1",
			to: recipient{name: "Ann", addr: "ann@example.org"}, cv: conversation{subject: "[g1] Status " + strings.Repeat("words and more ", 9) + strings.Repeat("x", 90)}}},
		{"list", envelope{id: "<b@example.org>", date: date, game: "g1", kind: "thread", fromName: "Zoë Ünterberg (g1)", lang: "de",
			to: recipient{name: "Bö, \"the\" Builder", addr: "bob@example.org"},
			cv: conversation{root: "<root@example.org>", subject: "[g1] " + long, replyTo: "host+g1-t-x@example.org", replyName: "Town of g1",
				list: true, listID: "<g1.example.org>", help: "host+g1@example.org", post: "host+g1-t-x@example.org"}}},
		{"calendar", envelope{id: "<c@example.org>", date: date, game: "g1", kind: "private", fromName: "Mafia g1",
			to: recipient{name: "Ann", addr: "ann@example.org"}, cv: conversation{subject: "[g1] Deadline", list: true, listID: "<g1.example.org>"},
			calendar: []byte(strings.Repeat("BEGIN:VCALENDAR\r\n", 20))}},
		{"pictures", envelope{id: "<d@example.org>", date: date, game: "g1", kind: "end", fromName: "Mafia g1",
			to: recipient{name: "Ann", addr: "ann@example.org"}, cv: conversation{subject: "[g1] The end"},
			images: []mimepart.Image{{CID: "votes@example.org", PNG: bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 57), Name: "votes.png"},
				{CID: "more@example.org", PNG: []byte("x"), Name: "b.png"}}}},
		{"both", envelope{id: "<e@example.org>", game: "g1", kind: "end", fromName: "Mafia g1",
			to: recipient{name: "Ann", addr: "ann@example.org"}, cv: conversation{subject: "[g1] The end"},
			calendar: []byte("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"),
			images:   []mimepart.Image{{CID: "votes@example.org", PNG: []byte("png"), Name: "votes.png"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.encode(tc.env, r)
			if err != nil {
				t.Fatal(err)
			}
			want, err := encodeGoMessage(c, tc.env, r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encode differs from go-message:\n%s\n---- go-message:\n%s", got, want)
			}
		})
	}
	bad := envelope{id: "<f@example.org>", fromName: "x", to: recipient{addr: "a@example.org"}, cv: conversation{listID: "a\r\nb", list: true}}
	if _, err := c.encode(bad, r); err == nil {
		t.Error("a field with a line break was written")
	}
}

// encodeGoMessage is the message as go-message's Header and Writer write
// it, for TestEncodeAsGoMessage.
func encodeGoMessage(c *Composer, env envelope, r templates.Rendered) ([]byte, error) {
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
	text := plainFlow.Encode(r.Text)
	boundary := mimepart.Boundary(env.id, text.Text, r.HTML)
	altType := mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": boundary})
	if env.calendar != nil {
		add("Content-Type", mime.FormatMediaType("multipart/mixed",
			map[string]string{"boundary": mimepart.Boundary(env.id+"/mixed", text.Text, r.HTML)}))
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
	if text.DelSp {
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
	if err := textPart(w, "text/plain", text.Text, textParams); err != nil {
		return nil, err
	}
	htmlParams := map[string]string{"charset": "utf-8"}
	if len(env.images) == 0 {
		if err := textPart(w, "text/html", r.HTML, htmlParams); err != nil {
			return nil, err
		}
	} else if err := goMessageRelated(w, env, r.HTML, htmlParams, textPart); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if env.calendar != nil {
		if err := goMessageCalendar(top, env.calendar); err != nil {
			return nil, err
		}
		if err := top.Close(); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

func goMessageCalendar(w *message.Writer, cal []byte) error {
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

func goMessageRelated(w *message.Writer, env envelope, html string, htmlParams map[string]string,
	textPart func(*message.Writer, string, string, map[string]string) error) error {
	var rh message.Header
	boundary := mimepart.Boundary(env.id+"/related", html)
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
		ih.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": img.Name}))
		ih.Set("Content-Id", "<"+img.CID+">")
		iw, err := rw.CreatePart(ih)
		if err != nil {
			return err
		}
		if _, err := iw.Write(img.PNG); err != nil {
			return err
		}
		if err := iw.Close(); err != nil {
			return err
		}
	}
	return rw.Close()
}
