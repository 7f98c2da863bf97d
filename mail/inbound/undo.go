package inbound

// Undo returns the charge that puts back what c's keys hold now: applied
// with Keep after c, it undoes c. A host that keeps a message's charge
// before its transaction commits (each message of a group commit must see
// the draws of the ones before it) applies it when the commit fails, so
// that the retried messages are not charged twice.
func (p *Processor) Undo(c Charge) Charge {
	var u Charge
	for _, d := range c.Draws {
		l := p.limiterFor(d.Key)
		if l == nil {
			continue
		}
		u.Draws = append(u.Draws, Draw{Key: d.Key, Bucket: l.current(d.Key)})
	}
	return u
}

// current is key's bucket as it stands; a key not held has a full one,
// which is what forgetting it means.
func (l *Limiter) current(key string) Bucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[key]; ok {
		return b.export()
	}
	return Bucket{Tokens: l.burst}
}
