package message

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

// HTMLToText turns an HTML body into the text its reader sees.
//
// Quoted parts come out with "> " in front of every line, so that package
// reply can tell them from the author's words: <blockquote>, Gmail's
// gmail_quote, Yahoo's yahoo_quoted, and everything from Outlook's reply
// header on (appendonsend, divRplyFwdMsg, the new Outlook's reference
// message container), which Outlook does not nest. A signature block
// (Gmail's gmail_signature, Thunderbird's moz-signature, Outlook's
// Signature) comes after a "-- " line.
func HTMLToText(src string) string {
	c := &converter{}
	z := html.NewTokenizer(strings.NewReader(src))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			c.flush(false)
			return strings.TrimRight(c.out.String(), "\n")
		case html.TextToken:
			if c.skip == 0 {
				c.text(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			var attrs map[string]string
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "class", "id", "data-smartmail":
					if attrs == nil {
						attrs = make(map[string]string, 2)
					}
					attrs[string(k)] = string(v)
				}
			}
			c.start(string(name), attrs, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			name, _ := z.TagName()
			c.end(string(name))
		}
	}
}

// Limits that keep hostile HTML from growing the output or the stack.
const (
	maxStack      = 512
	maxQuotePrint = 8 // deeper quotes print this many ">"
)

type elem struct {
	name                   string
	quote, pre, skip, para bool
}

type converter struct {
	out       strings.Builder
	line      strings.Builder
	lineLevel int  // quote level of the line being built
	content   bool // the line has content
	space     bool // whitespace seen since the last content
	blank     bool // a paragraph ended: a blank line goes before the next text
	emitted   bool // some line was written
	lastBlank bool // the last line written was empty
	signed    bool // a "-- " line was written

	quote, pre, skip int
	quoteRest        bool // Outlook's reply header was seen: the rest is quote
	stack            []elem
}

var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true,
}

var blockElements = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "center": true, "dd": true,
	"div": true, "dl": true, "dt": true, "fieldset": true, "figcaption": true, "figure": true,
	"footer": true, "form": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"header": true, "hr": true, "li": true, "main": true, "nav": true, "ol": true, "p": true, "pre": true,
	"section": true, "table": true, "tr": true, "ul": true, "body": true, "html": true,
}

var skipElements = map[string]bool{"head": true, "script": true, "style": true, "title": true, "template": true}

func hasClass(attrs map[string]string, names ...string) bool {
	for _, c := range strings.Fields(attrs["class"]) {
		for _, n := range names {
			if strings.EqualFold(c, n) {
				return true
			}
		}
	}
	return false
}

func (c *converter) level() int {
	if c.quoteRest {
		return c.quote + 1
	}
	return c.quote
}

func (c *converter) start(name string, attrs map[string]string, selfClosing bool) {
	if name == "body" {
		// A body ends a head that was never closed.
		for len(c.stack) > 0 && c.skip > 0 {
			c.pop()
		}
	}
	id := attrs["id"]
	if strings.EqualFold(id, "appendonsend") || strings.EqualFold(id, "divRplyFwdMsg") ||
		strings.EqualFold(id, "mail-editor-reference-message-container") ||
		hasClass(attrs, "ms-outlook-mobile-reference-message", "OutlookMessageHeader") {
		c.flush(false)
		c.quoteRest = true
	}
	if hasClass(attrs, "gmail_signature", "moz-signature") || strings.EqualFold(id, "Signature") ||
		strings.EqualFold(id, "ms-outlook-mobile-signature") || attrs["data-smartmail"] == "gmail_signature" {
		c.flush(false)
		if !c.signed {
			c.signed = true
			c.paragraph()
			c.emit("-- ", c.level())
		}
	}
	if blockElements[name] {
		c.flush(false)
	}
	switch name {
	case "br":
		c.flush(true)
	case "li":
		c.addString("- ")
	case "td", "th":
		if c.content {
			c.space = true
		}
	}
	if voidElements[name] || selfClosing || len(c.stack) >= maxStack {
		return
	}
	e := elem{name: name}
	switch {
	case skipElements[name]:
		e.skip = true
		c.skip++
	case name == "blockquote" || hasClass(attrs, "gmail_quote", "yahoo_quoted"):
		e.quote = true
		c.quote++
	case name == "pre":
		e.pre = true
		c.pre++
	}
	// Paragraphs have a margin, except Outlook's MsoNormal ones, which
	// stand for single lines.
	e.para = name == "p" && !hasClass(attrs, "MsoNormal")
	if e.para && c.emitted {
		c.blank = true
	}
	c.stack = append(c.stack, e)
}

func (c *converter) end(name string) {
	i := len(c.stack) - 1
	for i >= 0 && c.stack[i].name != name {
		i--
	}
	if blockElements[name] {
		c.flush(false)
	}
	if i < 0 {
		return
	}
	for len(c.stack) > i {
		c.pop()
	}
}

func (c *converter) pop() {
	e := c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	if e.quote || e.pre || e.para {
		c.flush(false)
	}
	if e.quote {
		c.quote--
	}
	if e.pre {
		c.pre--
	}
	if e.skip {
		c.skip--
	}
	if e.para && c.emitted {
		c.blank = true
	}
}

// text adds the text of a text token, collapsing white space as a browser
// does, except inside <pre>. A no-break space is content, so that
// "<p>&nbsp;</p>" makes a blank line as it does on screen.
func (c *converter) text(s string) {
	for _, r := range s {
		switch {
		case c.pre > 0 && r == '\n':
			c.flush(true)
		case c.pre > 0 && r == '\r':
		case c.pre > 0:
			c.add(r)
		case r == '\u00a0':
			c.add(' ')
		case unicode.IsSpace(r):
			if c.content {
				c.space = true
			}
		default:
			c.add(r)
		}
	}
}

func (c *converter) addString(s string) {
	for _, r := range s {
		c.add(r)
	}
}

func (c *converter) add(r rune) {
	if !c.content {
		c.paragraph()
		c.content = true
		c.lineLevel = c.level()
	} else if c.space {
		c.line.WriteByte(' ')
	}
	c.space = false
	c.line.WriteRune(r)
}

// paragraph writes the blank line a paragraph's margin stands for, once.
func (c *converter) paragraph() {
	if c.blank && !c.lastBlank {
		c.emit("", c.level())
	}
	c.blank = false
}

// flush ends the line being built. An empty line is written only when force
// is set (a <br> on its own).
func (c *converter) flush(force bool) {
	switch {
	case c.content:
		c.emit(c.line.String(), c.lineLevel)
	case force:
		c.emit("", c.level())
	}
	c.line.Reset()
	c.content, c.space = false, false
}

func (c *converter) emit(s string, level int) {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	if level > maxQuotePrint {
		level = maxQuotePrint
	}
	if level > 0 {
		c.out.WriteString(strings.Repeat(">", level))
		if s != "" {
			c.out.WriteByte(' ')
		}
	}
	c.out.WriteString(s)
	c.out.WriteByte('\n')
	c.emitted = true
	c.lastBlank = s == ""
}

// unflow joins the lines of a format=flowed text (RFC 3676): a line that
// ends in a space goes on in the next line of the same quote depth. Space
// stuffing is undone; with delsp=yes the trailing space is dropped too.
func unflow(text string, delsp bool) string {
	var out, cur strings.Builder
	curDepth, open := 0, false
	emit := func(depth int) {
		if depth > 0 {
			out.WriteString(strings.Repeat(">", depth))
			out.WriteByte(' ')
		}
		out.WriteString(cur.String())
		out.WriteByte('\n')
		cur.Reset()
		open = false
	}
	for _, l := range strings.Split(text, "\n") {
		depth := len(l) - len(strings.TrimLeft(l, ">"))
		content := strings.TrimPrefix(l[depth:], " ")
		flowed := strings.HasSuffix(content, " ") && content != "-- "
		if open && depth != curDepth {
			emit(curDepth)
		}
		if flowed && delsp {
			content = content[:len(content)-1]
		}
		cur.WriteString(content)
		curDepth = depth
		if flowed {
			open = true
			continue
		}
		emit(depth)
	}
	if open {
		emit(curDepth)
	}
	return strings.TrimSuffix(out.String(), "\n")
}
