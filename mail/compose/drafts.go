package compose

import "time"

// Drafts is mail decided but not yet laid out: who gets which message,
// with its news, its Message-ID and its Date all settled, but its text,
// HTML and MIME not yet written. Laying out is most of the cost of a
// message, and nothing a host decides next depends on it, only on the
// Dates (Latest): so a host can decide one message's mail, go on to the
// next, and lay out the first's meanwhile.
//
// What Drafts hold is their own: the game states of their batch (folded
// copies), the sections and the copies' shared layout. The caller must
// not change the Batch or Answer they were drafted from until Finish
// returns, and must not run one Drafts' Finish twice at once; Finish of
// different Drafts may run at once.
type Drafts struct {
	c      *Composer
	drafts []draft
}

// Len is the number of messages the drafts make.
func (d Drafts) Len() int { return len(d.drafts) }

// Latest is the latest Date of the drafts' messages, the zero time for
// none: what the game's next batch must not be dated before
// (Batch.NotBefore).
func (d Drafts) Latest() time.Time {
	var latest time.Time
	for _, dr := range d.drafts {
		if t := dr.dateHeader(); t.After(latest) {
			latest = t
		}
	}
	return latest
}

// Finish lays out the drafts: the messages, in the order they go out.
func (d Drafts) Finish() ([]Outgoing, error) { return d.c.finishAll(d.drafts) }

// finishAll lays out drafts in order.
func (c *Composer) finishAll(drafts []draft) ([]Outgoing, error) {
	out := make([]Outgoing, 0, len(drafts))
	for _, dr := range drafts {
		m, err := c.finish(dr)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
