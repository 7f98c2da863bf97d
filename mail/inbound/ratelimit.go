package inbound

import (
	"sync"
	"time"
)

// Limiter is a token bucket per key (a sender's address): each key may take
// Burst messages at once and then one more every Every. It keeps no clock of
// its own: every call says what time it is, so tests and replays decide
// time.
//
// It is safe for concurrent use. Keys whose bucket has filled up again are
// forgotten once more than maxKeys are held, so memory stays bounded however
// many addresses write.
type Limiter struct {
	every time.Duration
	burst float64

	mu      sync.Mutex
	buckets map[string]*bucket
	maxKeys int
}

type bucket struct {
	tokens  float64
	last    time.Time
	refused bool // the last call was refused
}

// NewLimiter returns a limiter that lets each key send burst messages at
// once and one more every every. It panics on a non-positive argument: a
// limiter that lets nothing through is a configuration error.
func NewLimiter(every time.Duration, burst int) *Limiter {
	if every <= 0 || burst <= 0 {
		panic("inbound: NewLimiter needs a positive interval and burst")
	}
	return &Limiter{every: every, burst: float64(burst), buckets: make(map[string]*bucket), maxKeys: 10000}
}

// Allow takes one token from key's bucket at time now. It reports whether
// there was one, and, when there was not, whether this is the first refusal
// since the key was last allowed — the one refusal worth telling the sender
// about.
func (l *Limiter) Allow(key string, now time.Time) (allowed, firstRefusal bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			l.forgetFull(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		b.refused = false
		return true, false
	}
	first := !b.refused
	b.refused = true
	return false, first
}

func (l *Limiter) refill(b *bucket, now time.Time) {
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens += float64(elapsed) / float64(l.every)
		if b.tokens > l.burst {
			b.tokens = l.burst
		}
		b.last = now
	}
	// A clock that steps back gives nothing and takes nothing.
}

// forgetFull drops the buckets that would be full at now: forgetting them
// changes no decision. If that frees too little (a flood from ever new
// addresses), arbitrary buckets go too, down to nine tenths of maxKeys, so
// that pruning happens once per maxKeys/10 new keys rather than on every
// call.
func (l *Limiter) forgetFull(now time.Time) {
	for k, b := range l.buckets {
		l.refill(b, now)
		if b.tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < l.maxKeys*9/10 {
			break
		}
		delete(l.buckets, k)
	}
}
