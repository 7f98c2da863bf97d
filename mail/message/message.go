// Package message reads an incoming mail into what the host needs from it:
// its header, its text, the attachments it carries (which are ignored), and,
// for a delivery status notification, which address bounced.
//
// Text is what a person would read: text/plain when the mail has it,
// otherwise its HTML turned into text, with transfer encodings
// (quoted-printable, base64) and charsets (UTF-8 and legacy ones such as
// windows-1252, ISO-8859-1 or ISO-2022-JP) decoded, and format=flowed lines
// joined again.
package message

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	gomessage "github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // legacy charsets
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
	"golang.org/x/text/encoding/charmap"
)

// ErrMalformed is wrapped by every error about a message that cannot be
// read: its header, its MIME structure or an encoding.
var ErrMalformed = errors.New("malformed message")

// Limits on the MIME tree, so that a hostile message cannot make the parser
// recurse or allocate without bound.
const (
	maxParts = 200
	maxDepth = 16
)

// Parsed is a parsed incoming mail.
type Parsed struct {
	// Header is the top-level header, for any field not lifted out below.
	Header mail.Header
	// Size is the size of the raw message in bytes.
	Size int

	From      []*mail.Address // usually one
	Subject   string
	MessageID string

	// Text is the body a person would read, as UTF-8 with "\n" line ends.
	Text string
	// TextType is the media type Text came from: "text/plain",
	// "text/html", or "" when the message has no text.
	TextType    string
	Attachments []Attachment
	// Report is the delivery status of a DSN (RFC 3464), nil otherwise.
	Report *DeliveryReport
	// Warnings are problems the parser worked around (an unknown charset,
	// a missing final boundary).
	Warnings []string
}

// Attachment is a part that is not text for people to read. The host ignores
// attachments; they are listed so a referee can see what was dropped.
type Attachment struct {
	Filename string `json:"filename,omitempty"`
	Type     string `json:"type"`
	Size     int    `json:"size"`
}

// Parse reads a raw message. On an unreadable header it returns a nil
// Message; on a broken body it returns the Message with its header filled in
// and the error, so that the message can still be routed and answered. Both
// errors wrap ErrMalformed.
func Parse(raw []byte) (*Parsed, error) {
	raw = skipMboxLine(raw)
	if err := checkBareCR(raw); err != nil {
		// Bare CRs are how SMTP smuggling hides a second message; no
		// legitimate client sends them.
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	ent, entErr := gomessage.Read(bytes.NewReader(raw))
	if ent == nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformed, entErr)
	}
	m := &Parsed{Header: mail.Header{Header: ent.Header}, Size: len(raw)}
	if err := m.readHeader(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}

	p := &walker{msg: m}
	root, err := p.walk(ent, entErr, 0)
	if err != nil {
		return m, fmt.Errorf("%w: body: %v", ErrMalformed, err)
	}
	text, typ := root.pick()
	m.Text = strings.TrimRight(text, "\n")
	m.TextType = typ
	return m, nil
}

// Texts reads every text version of a message: the plain text and the
// HTML (as text) of an alternative, in the order they come, each as Parse
// would read it alone. A reply quotes whichever its author's client
// showed, so what the reply quotes is looked for in all of them.
func Texts(raw []byte) ([]string, error) {
	raw = skipMboxLine(raw)
	ent, entErr := gomessage.Read(bytes.NewReader(raw))
	if ent == nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformed, entErr)
	}
	p := &walker{msg: &Parsed{}}
	root, err := p.walk(ent, entErr, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: body: %v", ErrMalformed, err)
	}
	var out []string
	var visit func(n *node)
	visit = func(n *node) {
		switch n.typ {
		case "text/plain":
			out = append(out, strings.TrimRight(n.text, "\n"))
		case "text/html":
			out = append(out, strings.TrimRight(HTMLToText(n.text), "\n"))
		}
		for _, c := range n.children {
			visit(c)
		}
	}
	visit(root)
	return out, nil
}

// ParseHeader reads only the header of raw, for a message too large to be
// read whole. It never reads the body.
func ParseHeader(raw []byte) (*Parsed, error) {
	raw = skipMboxLine(raw)
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if i := bytes.Index(raw, []byte("\n\n")); i >= 0 && (end < 0 || i < end) {
		end = i
	}
	head := raw
	if end >= 0 {
		head = raw[:end+2]
	}
	if err := checkBareCR(head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	ent, err := gomessage.Read(bytes.NewReader(head))
	if ent == nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	m := &Parsed{Header: mail.Header{Header: ent.Header}, Size: len(raw)}
	if err := m.readHeader(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return m, nil
}

func (m *Parsed) readHeader() error {
	if !m.Header.Has("From") {
		return errors.New("the message has no From header")
	}
	if len(m.Header.Values("From")) > 1 {
		return errors.New("the message has more than one From header")
	}
	from, err := m.Header.AddressList("From")
	if err != nil {
		return fmt.Errorf("the From header cannot be read: %v", err)
	}
	if len(from) == 0 {
		return errors.New("the From header holds no address")
	}
	m.From = from
	if s, err := m.Header.Subject(); err == nil || gomessage.IsUnknownCharset(err) {
		m.Subject = s
	} else {
		m.Subject = m.Header.Get("Subject")
	}
	if id, err := m.Header.MessageID(); err == nil {
		m.MessageID = id
	} else {
		m.MessageID = strings.Trim(m.Header.Get("Message-Id"), "<> ")
	}
	return nil
}

// skipMboxLine drops the "From sender date" line that mbox files and some
// saved messages start with; it is not a header field.
func skipMboxLine(raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte("From ")) {
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			return raw[i+1:]
		}
	}
	return raw
}

func checkBareCR(raw []byte) error {
	for i := bytes.IndexByte(raw, '\r'); i >= 0; {
		if i+1 >= len(raw) || raw[i+1] != '\n' {
			line := 1 + bytes.Count(raw[:i], []byte("\n"))
			return fmt.Errorf("line %d holds a carriage return that does not end the line (a bare CR)", line)
		}
		j := bytes.IndexByte(raw[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return nil
}

// node is one part of the MIME tree, with the text of its text parts read.
type node struct {
	typ      string
	params   map[string]string
	text     string // decoded text of a text/plain or text/html leaf
	children []*node
}

type walker struct {
	msg   *Parsed
	parts int
}

// walk reads entity e and its subparts. entErr is the error go-message gave
// when it made e: an unknown charset (the body is then read as it is) or an
// unknown transfer encoding (the body is then undecoded).
func (w *walker) walk(e *gomessage.Entity, entErr error, depth int) (*node, error) {
	w.parts++
	if w.parts > maxParts {
		return nil, fmt.Errorf("more than %d MIME parts", maxParts)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("MIME parts nested more than %d deep", maxDepth)
	}
	typ, params, err := e.Header.ContentType()
	if err != nil {
		// An unreadable Content-Type is read as text/plain, as RFC 2045
		// says for a missing one; the parameters are lost.
		w.msg.Warnings = append(w.msg.Warnings, fmt.Sprintf("Content-Type %q cannot be read; read as text/plain", e.Header.Get("Content-Type")))
		typ, params = "text/plain", nil
	}
	typ = strings.ToLower(typ)
	n := &node{typ: typ, params: params}

	if mr := e.MultipartReader(); mr != nil {
		if params["boundary"] == "" {
			return nil, errors.New("a multipart part has no boundary")
		}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if part == nil {
				if len(n.children) > 0 && strings.Contains(err.Error(), "EOF") {
					// The final boundary is missing: clients show what
					// came before it, and so do we.
					w.msg.Warnings = append(w.msg.Warnings, "the final MIME boundary is missing")
					break
				}
				if len(n.children) == 0 {
					return nil, fmt.Errorf("no part of the multipart body starts with its boundary %q", params["boundary"])
				}
				return nil, err
			}
			child, err := w.walk(part, err, depth+1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, child)
		}
		if typ == "multipart/report" {
			w.readReport(n)
		}
		return n, nil
	}

	disp, dparams, _ := e.Header.ContentDisposition()
	isText := (typ == "text/plain" || typ == "text/html") && !strings.EqualFold(disp, "attachment")
	isStatus := typ == "message/delivery-status" || typ == "message/global-delivery-status"
	if !isText && !isStatus {
		size, err := io.Copy(io.Discard, e.Body)
		if err != nil {
			w.msg.Warnings = append(w.msg.Warnings, fmt.Sprintf("attachment %s: %v", typ, err))
		}
		name := dparams["filename"]
		if name == "" {
			name = params["name"]
		}
		w.msg.Attachments = append(w.msg.Attachments, Attachment{Filename: name, Type: typ, Size: int(size)})
		n.typ = "attachment"
		return n, nil
	}
	if gomessage.IsUnknownEncoding(entErr) {
		return nil, fmt.Errorf("%s part: %v", typ, entErr)
	}
	if gomessage.IsUnknownCharset(entErr) {
		w.msg.Warnings = append(w.msg.Warnings, entErr.Error())
	}
	b, err := io.ReadAll(e.Body)
	if err != nil && !(errors.Is(err, io.ErrUnexpectedEOF) && len(b) > 0) {
		return nil, fmt.Errorf("%s part: %v", typ, err)
	}
	if err != nil {
		w.msg.Warnings = append(w.msg.Warnings, fmt.Sprintf("%s part ends early: %v", typ, err))
	}
	n.text = w.toUTF8(b, params["charset"])
	if typ == "text/plain" && strings.EqualFold(params["format"], "flowed") {
		n.text = unflow(n.text, strings.EqualFold(params["delsp"], "yes"))
	}
	return n, nil
}

// toUTF8 makes sure text is valid UTF-8. go-message has already converted
// declared charsets it knows. Text that is still not UTF-8 either declares
// UTF-8 and has a few bad bytes (they become U+FFFD, the rest stays as
// written), or declares nothing, US-ASCII or an unknown charset, and is then
// most likely windows-1252, the legacy charset of most clients that get
// this wrong.
func (w *walker) toUTF8(b []byte, charset string) string {
	// Line ends become "\n"; a CR left alone (decoded from base64 or
	// quoted-printable, or before a boundary) ends a line too.
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	b = bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
	if utf8.Valid(b) {
		return string(b)
	}
	if cs := strings.ToLower(charset); cs == "utf-8" || cs == "utf8" {
		w.msg.Warnings = append(w.msg.Warnings, "text declared as UTF-8 holds invalid bytes; they were replaced")
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	if d, err := charmap.Windows1252.NewDecoder().Bytes(b); err == nil {
		w.msg.Warnings = append(w.msg.Warnings, fmt.Sprintf("text is not valid in charset %q; read as windows-1252", charset))
		return strings.ToValidUTF8(string(d), "\uFFFD")
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// pick chooses the text of a subtree: in multipart/alternative the plain
// version (the HTML one if the plain one is empty or missing); in any other
// multipart, the text of each inline part in order; attachments give none.
func (n *node) pick() (string, string) {
	switch {
	case n.typ == "text/plain":
		return n.text, "text/plain"
	case n.typ == "text/html":
		return HTMLToText(n.text), "text/html"
	case n.typ == "multipart/alternative":
		var html *node
		for _, c := range n.children {
			t, typ := c.pick()
			if typ == "text/plain" && strings.TrimSpace(t) != "" {
				return t, typ
			}
			if typ != "" && html == nil {
				html = c
			}
		}
		if html != nil {
			return html.pick()
		}
		return "", ""
	case n.typ == "multipart/report":
		// The human-readable first part of a report; the status itself
		// is in Message.Report.
		if len(n.children) > 0 {
			return n.children[0].pick()
		}
		return "", ""
	case strings.HasPrefix(n.typ, "multipart/"):
		var texts []string
		typ := ""
		for _, c := range n.children {
			t, ct := c.pick()
			if ct == "" {
				continue
			}
			if strings.TrimSpace(t) != "" {
				texts = append(texts, strings.TrimRight(t, "\n"))
			}
			if typ == "" || ct == "text/html" {
				typ = ct
			}
		}
		return strings.Join(texts, "\n\n"), typ
	}
	return "", ""
}

// DeliveryReport is what a delivery status notification (RFC 3464) says
// about the first recipient it reports on, preferring one that failed.
type DeliveryReport struct {
	// Recipient is the address as the host sent to it: the
	// Original-Recipient field when there is one, else Final-Recipient.
	Recipient  string `json:"recipient,omitempty"`
	Action     string `json:"action,omitempty"` // failed, delayed, delivered, relayed, expanded
	Status     string `json:"status,omitempty"` // e.g. 5.1.1
	Diagnostic string `json:"diagnostic,omitempty"`
}

// Failed reports a permanent failure, the kind that counts against an
// address.
func (r *DeliveryReport) Failed() bool { return r != nil && strings.EqualFold(r.Action, "failed") }

func (w *walker) readReport(n *node) {
	if !strings.EqualFold(n.params["report-type"], "delivery-status") &&
		!strings.EqualFold(n.params["report-type"], "global-delivery-status") {
		return
	}
	for _, c := range n.children {
		if c.typ != "message/delivery-status" && c.typ != "message/global-delivery-status" {
			continue
		}
		if r := parseDeliveryStatus(c.text); r != nil {
			w.msg.Report = r
		} else {
			w.msg.Warnings = append(w.msg.Warnings, "the delivery status names no recipient")
		}
		return
	}
}

// parseDeliveryStatus reads the per-recipient fields of a
// message/delivery-status body: blocks of header fields separated by blank
// lines, the first one about the message as a whole.
func parseDeliveryStatus(body string) *DeliveryReport {
	var first *DeliveryReport
	for i, block := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
		if i == 0 || strings.TrimSpace(block) == "" {
			continue
		}
		h, err := textproto.ReadHeader(bufio.NewReader(strings.NewReader(strings.TrimLeft(block, "\n") + "\n\n")))
		if err != nil {
			continue
		}
		r := &DeliveryReport{
			Recipient:  dsnAddress(h.Get("Original-Recipient")),
			Action:     strings.ToLower(strings.TrimSpace(h.Get("Action"))),
			Status:     strings.TrimSpace(h.Get("Status")),
			Diagnostic: strings.TrimSpace(h.Get("Diagnostic-Code")),
		}
		if r.Recipient == "" {
			r.Recipient = dsnAddress(h.Get("Final-Recipient"))
		}
		if r.Recipient == "" {
			continue
		}
		if r.Failed() {
			return r
		}
		if first == nil {
			first = r
		}
	}
	return first
}

// dsnAddress reads "rfc822; bob@example.org" (RFC 3464 address-type;
// address).
func dsnAddress(v string) string {
	_, addr, ok := strings.Cut(v, ";")
	if !ok {
		addr = v
	}
	addr = strings.Trim(strings.TrimSpace(addr), "<>")
	if !strings.Contains(addr, "@") || strings.ContainsAny(addr, " \t") {
		return ""
	}
	return strings.ToLower(addr)
}
