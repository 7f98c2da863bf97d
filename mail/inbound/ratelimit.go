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

// scaled is a limiter whose allowance is n times l's: n times the burst,
// refilled n times as fast.
func (l *Limiter) scaled(n int) *Limiter {
	return NewLimiter(max(l.every/time.Duration(n), 1), int(l.burst)*n)
}

// Bucket is the state of one key: its tokens as of Last, and whether its
// last message was refused. A host saves it with each message that drew on
// it, so that a restart does not give every sender a fresh allowance.
type Bucket struct {
	Tokens  float64
	Last    time.Time
	Refused bool
}

// Allow takes one token from key's bucket at time now. It reports whether
// there was one, and, when there was not, whether this is the first refusal
// since the key was last allowed — the one refusal worth telling the sender
// about.
func (l *Limiter) Allow(key string, now time.Time) (allowed, firstRefusal bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	allowed, firstRefusal, b := l.take(key, now)
	l.put(key, b)
	return allowed, firstRefusal
}

// Take decides like Allow but changes nothing: it returns the state key's
// bucket would have after the decision, for the caller to Put once the
// message's outcome is durable. A decision that is never Put (its
// transaction failed) leaves the limit as it was.
func (l *Limiter) Take(key string, now time.Time) (allowed, firstRefusal bool, after Bucket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.take(key, now)
}

func (l *Limiter) take(key string, now time.Time) (allowed, firstRefusal bool, after Bucket) {
	b := bucket{tokens: l.burst, last: now}
	if cur, ok := l.buckets[key]; ok {
		b = *cur
	}
	l.refill(&b, now)
	if b.tokens >= 1 {
		b.tokens--
		b.refused = false
		return true, false, b.export()
	}
	first := !b.refused
	b.refused = true
	return false, first, b.export()
}

// Put sets key's bucket: the result of a Take, or a state saved before a
// restart.
func (l *Limiter) Put(key string, b Bucket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.put(key, b)
}

func (l *Limiter) put(key string, b Bucket) {
	cur, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			l.forgetFull(b.Last)
		}
		cur = &bucket{}
		l.buckets[key] = cur
	}
	*cur = bucket{tokens: min(b.Tokens, l.burst), last: b.Last, refused: b.Refused}
}

// FillTime is how long an empty bucket takes to fill: a bucket last drawn on
// longer ago than that is full, the same as one never drawn on.
func (l *Limiter) FillTime() time.Duration {
	return time.Duration(l.burst * float64(l.every))
}

func (b bucket) export() Bucket { return Bucket{Tokens: b.tokens, Last: b.last, Refused: b.refused} }

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
