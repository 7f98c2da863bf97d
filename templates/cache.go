package templates

import (
	"reflect"
)

// A Cache keeps the parts of messages that read alike for many readers, so
// that a post relayed to a whole town is laid out once, not once per copy:
// the news (the headline's sections) and the official tally. The reader's
// own line is laid out for them each time; their footer is kept apart,
// for all their mail (see footer.go).
//
// What a Cache hands out can never belong to another reader: the news is
// laid out from a copy of the view that holds nothing of the reader (see
// newsView), and is keyed by everything that copy holds; the tally holds
// nothing of the reader to begin with and is keyed whole. Sections whose
// templates read the reader's part of the view (the footer's addresses,
// say) make the news of that copy its own, laid out from the whole view
// and kept nowhere.
//
// A Cache is meant for one batch of mail and is not safe for concurrent
// use. The zero value is not usable; a nil *Cache keeps nothing.
type Cache struct {
	parts map[string]string
	// Hits and Misses count the parts found and laid out, for tests and
	// benchmarks.
	Hits, Misses int
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{parts: map[string]string{}} }

// Render is the package's Render, keeping in c the parts of the message
// that other readers' copies may share. A nil c keeps nothing.
func (c *Cache) Render(kind string, v *View) (Rendered, error) { return render(kind, v, c) }

// part returns the part of format ('t': text, 'h': HTML) named by key,
// laid out by layOut when c has none. key nil means the part is the
// reader's own: it is laid out and not kept.
func (c *Cache) part(format byte, key []byte, layOut func() (string, error)) (string, error) {
	if c == nil || key == nil {
		return layOut()
	}
	k := string(append([]byte{format}, key...))
	if s, ok := c.parts[k]; ok {
		c.Hits++
		return s, nil
	}
	s, err := layOut()
	if err != nil {
		return "", err
	}
	c.Misses++
	c.parts[k] = s
	return s, nil
}

// keys are the keys of one copy's shared parts, worked out once for its
// text and its HTML.
type keys struct {
	news, tally         []byte
	newsDone, tallyDone bool
}

// newsView is the view the news of m is laid out from: m without anything
// of its reader (who they are, their own line, the tally shown to them,
// their footer), with the sections attached to it, or m itself when a
// section's templates read those parts (personal). restore attaches the
// sections to m again.
func newsView(m *View, personal func(kind string) bool) (news *View, shared bool, restore func()) {
	for _, s := range m.Sections {
		if anyPersonal(s, personal) {
			return m, false, func() {}
		}
	}
	// Built field by field, not copied and cleared: a field added to View
	// later stays out of the news until it is known to be the same for
	// every reader.
	v := View{Kind: m.Kind, Game: m.Game, Lang: m.Lang, Channel: m.Channel, Now: m.Now, Headline: m.Headline,
		Sections: m.Sections, main: m.main, headlineSet: m.headlineSet}
	for _, s := range v.Sections {
		_ = attach(&v, s)
	}
	return &v, true, func() {
		for _, s := range m.Sections {
			_ = attach(m, s)
		}
	}
}

// anyPersonal reports whether s or a section it nests has templates that
// read the reader's part of the view.
func anyPersonal(s *Section, personal func(kind string) bool) bool {
	if personal(s.Kind) {
		return true
	}
	if s.Reply != nil {
		for _, l := range s.Reply.Lines {
			for _, sub := range l.Sections {
				if anyPersonal(sub, personal) {
					return true
				}
			}
		}
	}
	return false
}

// newsKey is the key of the news of v, a shared news view: everything in
// it, the place of its main section and whether its headline was set. It
// is nil when v cannot be keyed.
func newsKey(v *View) []byte {
	key := append(make([]byte, 0, 512), "news/"...)
	main := -1
	for i, s := range v.Sections {
		if s == v.main {
			main = i
		}
	}
	return appendKey0(key, reflect.ValueOf(main), reflect.ValueOf(v.headlineSet), reflect.ValueOf(v).Elem())
}

// tallyKey is the key of the tally t, laid out in lang.
func tallyKey(lang string, t *Tally) []byte {
	key := append(make([]byte, 0, 1024), "tally/"...)
	return appendKey0(key, reflect.ValueOf(lang), reflect.ValueOf(t))
}

// appendKey0 appends the keys of vs, or returns nil when one cannot be
// keyed.
func appendKey0(key []byte, vs ...reflect.Value) []byte {
	for _, v := range vs {
		var err error
		if key, err = appendKey(key, v); err != nil {
			return nil
		}
	}
	return key
}
