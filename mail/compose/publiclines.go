package compose

import (
	"strconv"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/templates"
)

// A reply that quotes thread or mafia-list mail is relayed with the lines
// it answers (an inline reply's context), and those lines must be the
// host's own record of what everyone was sent: neither a line the author
// made up and dressed as a quote, nor one that was only the author's (their
// receipt, their own state, news told to them as "You …", times in their
// zone). So every copy of such mail carries, for the outbox, its public
// lines (Outgoing.Public): the lines of the copy that the same mail laid out
// for an outsider, a reader with no part in the game, holds as well.

// outsider is the reader with no part in the game, writing in the language
// of tag: no seat, no token, no zone, not the referee.
func outsider(tag string) recipient { return recipient{key: "outsider", tag: tag} }

// publicNews is how a copy's public lines are found: the news of its
// message as an outsider would have it, built when first needed and laid
// out once for the copies of a batch that share key.
type publicNews struct {
	key   string
	build func() (sections []*templates.Section, main *templates.Section, tally *templates.Tally, err error)
	// memo keeps the outsider's text by key, for the batch (nil: none).
	memo map[string]string
}

// groupPublic is the public news of a reader's message made of a group's
// items in conversation ch, in the reader's language tag.
func (c *Composer) groupPublic(items []item, ch templates.Channel, tag string, sh *shared, s *engine.State, now time.Time) *publicNews {
	if ch != templates.Thread && ch != templates.Mafia {
		return nil
	}
	var key strings.Builder
	key.WriteString(tag + "/" + string(ch))
	for _, it := range items {
		key.WriteString("/" + strconv.FormatInt(it.l.Seq, 10))
	}
	d := delivery{r: outsider(tag), ch: ch}
	return &publicNews{key: key.String(), memo: sh.publicMemo(), build: func() ([]*templates.Section, *templates.Section, *templates.Tally, error) {
		out := make([]item, len(items))
		for i, it := range items {
			sec, err := c.section(it.l.Event, it.s, d)
			if err != nil {
				return nil, nil, nil, err
			}
			out[i] = item{it.l, it.s, sec}
		}
		var secs []*templates.Section
		for _, it := range dropRedundant(out) {
			secs = append(secs, it.sec)
		}
		var tally *templates.Tally
		if ch == templates.Thread {
			tally = runningTally(s, now, c.langFor(s, d.r))
		}
		return secs, mainSection(secs), tally, nil
	}}
}

// publicMemo is where a batch keeps its outsiders' texts; nil for a nil sh.
func (sh *shared) publicMemo() map[string]string {
	if sh == nil {
		return nil
	}
	return sh.public
}

// publicText is the public lines of a copy whose text is text: see
// Outgoing.Public.
func (c *Composer) publicText(dr draft, text string) (string, error) {
	pn := dr.public
	out, ok := pn.memo[pn.key]
	if !ok {
		secs, main, tally, err := pn.build()
		if err != nil {
			return "", err
		}
		s := dr.state
		r := outsider(c.langFor(s, dr.d.r).Tag)
		v := &templates.View{
			Lang: r.tag, Game: dr.game, Channel: dr.d.ch, Reader: r.reader(),
			Now: moment(s, dr.now, dr.now), Sections: secs, Tally: tally,
			Footer: templates.Footer{Channel: dr.d.ch},
			Kind:   headerKind(main.Kind, delivery{r: r, ch: dr.d.ch}),
		}
		rendered, err := dr.cache.Render(main.Kind, v)
		if err != nil {
			return "", err
		}
		out = rendered.Text
		if pn.memo != nil {
			pn.memo[pn.key] = out
		}
	}
	return publicLines(out, text), nil
}

// publicLines keeps the lines of outsider, the text of a mail laid out for
// an outsider, that text, one reader's copy of it, holds too; the rest are
// left blank: the headline (its first line: who writes, or the reader's
// own receipt), the headings of the news ("▸ Bob writes"), and from the
// signature separator on, the footer. What is left is what every reader
// was sent, as the host wrote it.
func publicLines(outsider, text string) string {
	copyLines := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		copyLines[strings.TrimRight(l, " ")] = true
	}
	lines := strings.Split(outsider, "\n")
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "--" {
			break
		}
		if i == 0 || strings.HasPrefix(l, "▸ ") || !copyLines[l] {
			l = ""
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}
