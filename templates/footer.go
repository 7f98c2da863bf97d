package templates

import (
	"container/list"
	"reflect"
	"sync"
)

// footerView is what a copy's footer is laid out from: the game, whom the
// copy is for, and their footer. It is all the footer's templates can read
// (a template that reads anything else fails), so two copies whose
// footerViews key alike have the same footer, in any message.
type footerView struct {
	Game   string
	Reader Reader
	Footer Footer
}

// footerCacheBytes bounds what the footers kept take: keys and both
// formats, about 4 KiB a footer, so some four thousand readers' footers,
// the readers of a few dozen busy games.
const footerCacheBytes = 16 << 20

// footers keeps the footers laid out lately. A reader's footer (their
// addresses, the commands open to them now) reads the same in every mail
// they get until the phase or their place in the game changes, and laying
// it out is a third of the time a copy of a thread post or a STATUS answer
// takes to lay out.
var footers = newFooterCache(footerCacheBytes)

// footer lays out the footer of m in format ('t': text, 'h': HTML) with
// layOut, or hands out the one kept for a view that keys the same.
func footer(tag string, format byte, m *View, layOut func(*footerView) (string, error)) (string, error) {
	v := &footerView{Game: m.Game, Reader: m.Reader, Footer: m.Footer}
	key, err := v.key(tag, format)
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

// key is what v's footer is kept by: the language and format it is laid
// out in, and v whole.
func (v *footerView) key(tag string, format byte) ([]byte, error) {
	key := append(make([]byte, 0, 512), format)
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
