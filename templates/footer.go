package templates

import (
	"container/list"
	"reflect"
	"strings"
	"sync"
)

// footerView is what a copy's footer is laid out from: the game, the
// standing of whom the copy is for, and their footer. It is all the
// footer's templates can read (a template that reads anything else fails),
// so two copies whose footerViews key alike have the same footer, in any
// message.
type footerView struct {
	Game   string
	Reader footerReader
	Footer Footer
}

// footerReader is what a footer reads of its reader: how they stand in the
// game, not who they are, so that the players of a game who stand alike
// can share one footer.
type footerReader struct {
	Player, Referee, Observer bool
}

// footerCacheBytes bounds what the footers kept take: keys and both
// formats, about 4 KiB a footer. Most are shared by the readers of a game
// who stand alike (see footer), so this holds the footers of some four
// thousand such groups, the players of a thousand games or more.
const footerCacheBytes = 16 << 20

// footers keeps the footers laid out lately. A reader's footer (their
// addresses, the commands open to them now) reads the same in every mail
// they get until the phase or their place in the game changes, and laying
// it out is a third of the time a copy of a thread post or a STATUS answer
// takes to lay out.
var footers = newFooterCache(footerCacheBytes)

// footer lays out the footer of m in format ('t': text, 'h': HTML) with
// layOut, or hands out the one kept for a view that keys the same.
//
// The footers of readers who differ in their token alone (the players of
// a game who stand alike, in the same channel) are kept as one, laid out
// with a placeholder in place of the token, which each copy then gets in
// its own (see sharedView). The first time such a footer is laid out, it
// is laid out for the reader too and kept shared only if putting their
// token in its place gives exactly what was laid out for them; otherwise
// the footers of that view are kept reader by reader, as any footer
// without a token is.
func footer(tag string, format byte, m *View, layOut func(*footerView) (string, error)) (string, error) {
	v := &footerView{Game: m.Game, Footer: m.Footer,
		Reader: footerReader{Player: m.Reader.Player(), Referee: m.Reader.Referee, Observer: m.Reader.Observer}}
	if sv, placeholder, ok := v.sharedView(); ok {
		if key, err := sv.key(tag, format, true); err == nil {
			token := v.Footer.Token
			shared, kept := footers.get(key)
			switch {
			case kept && shared != notShared:
				return strings.ReplaceAll(shared, placeholder, token), nil
			case !kept:
				own, err := layOut(v)
				if err != nil {
					return "", err
				}
				shared, err := layOut(&sv)
				if err != nil || strings.ReplaceAll(shared, placeholder, token) != own {
					shared = notShared
				}
				footers.put(string(key), shared)
				return own, nil
			}
		}
	}
	key, err := v.key(tag, format, false)
	if err != nil {
		return layOut(v) // cannot be keyed: laid out for this copy alone
	}
	if s, ok := footers.get(key); ok {
		return s, nil
	}
	s, err := layOut(v)
	if err != nil {
		return "", err
	}
	footers.put(string(key), s)
	return s, nil
}

// notShared is kept under a shared key whose view does not lay out as its
// readers' footers do with their tokens put in: those footers are kept
// reader by reader. No footer reads so.
const notShared = "\x00"

// sharedView returns v with the reader's token in its addresses replaced
// by a placeholder, and that placeholder, when v has a token: a string as
// long as the token, of a digit no token holds (tokens are lower-case
// base32: letters and the digits 2 to 7), so that the templates lay it
// out as they lay out a token (no character of either is escaped, nor a
// place where an address may break) and it is never one.
func (v *footerView) sharedView() (footerView, string, bool) {
	token := v.Footer.Token
	if !isToken(token) {
		return footerView{}, "", false
	}
	placeholder := strings.Repeat("0", len(token))
	sv := *v
	f := &sv.Footer
	for _, s := range []*string{&f.Thread, &f.Private, &f.Mafia, &f.ReplyAddress, &f.Token} {
		*s = strings.ReplaceAll(*s, token, placeholder)
	}
	return sv, placeholder, true
}

// isToken reports whether s reads as a token: lower-case base32.
func isToken(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			return false
		}
	}
	return s != ""
}

// key is what v's footer is kept by: the language and format it is laid
// out in, whether it is shared by the readers of v with their tokens put
// in (see footer), and v whole.
func (v *footerView) key(tag string, format byte, shared bool) ([]byte, error) {
	key := append(make([]byte, 0, 512), format, 0)
	if shared {
		key[1] = 1
	}
	key = appendString(key, tag)
	return appendKey(key, reflect.ValueOf(v).Elem())
}

// footerCache is a map of laid-out footers that forgets the least recently
// used first once it holds more than max bytes. It is safe for concurrent
// use.
type footerCache struct {
	mu      sync.Mutex
	max     int
	size    int
	entries map[string]*list.Element // of *footerEntry
	order   list.List                // most recently used first
	// hits and misses count lookups, for tests and benchmarks.
	hits, misses int
}

type footerEntry struct {
	key, text string
}

func newFooterCache(max int) *footerCache {
	return &footerCache{max: max, entries: map[string]*list.Element{}}
}

func (c *footerCache) get(key []byte) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[string(key)] // no allocation: the compiler looks up by the bytes
	if !ok {
		c.misses++
		return "", false
	}
	c.hits++
	c.order.MoveToFront(e)
	return e.Value.(*footerEntry).text, true
}

func (c *footerCache) put(key, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		return // laid out twice at once: the first kept is as good
	}
	c.entries[key] = c.order.PushFront(&footerEntry{key: key, text: text})
	c.size += len(key) + len(text)
	for c.size > c.max && c.order.Len() > 0 {
		last := c.order.Back()
		e := last.Value.(*footerEntry)
		c.order.Remove(last)
		delete(c.entries, e.key)
		c.size -= len(e.key) + len(e.text)
	}
}
