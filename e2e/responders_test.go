//go:build integration

package e2e

import (
	"math/rand/v2"
	"strings"
	"sync"
)

// responders are the auto-responders that TestAttack and TestSiege set
// loose on a game: one player answers every message with Auto-Submitted:
// auto-replied, two answer the host and each other, and every other player
// has an out-of-office reply as mail clients send them. The suites differ
// only in how the responders see their mail (an SMTP hook, an IMAP reader)
// and how they send, which they supply.
type responders struct {
	// nextID makes a Message-ID; pass is the passing
	// Authentication-Results field for mail from an address; send hands a
	// message to the MTA; record notes an auto-reply to the host, which
	// the host must ignore; errorf reports a failure to send.
	nextID func(tag string) string
	pass   func(addr string) string
	send   func(from string, rcpts []string, raw []byte) error
	record func(m *attackMsg)
	errorf func(format string, args ...any)

	mu       sync.Mutex
	rng      *rand.Rand
	on       bool
	inflight sync.WaitGroup
	autoAddr string            // answers every mail, Auto-Submitted: auto-replied
	pair     map[string]string // two auto-responders, each naming the other
	pairSent map[string]int    // replies one of the pair sent to the other
	ooo      map[string]bool   // out-of-office at every other player
	loopMail map[string]int    // mail to and from each looping address
	// depth is how long the chain of answers is that ends in each
	// auto-reply (by Message-ID): 1 for an answer to the host's own mail.
	depth map[string]int
}

func newResponders(rng *rand.Rand) *responders {
	return &responders{rng: rng, pair: map[string]string{}, pairSent: map[string]int{}, ooo: map[string]bool{},
		loopMail: map[string]int{}, depth: map[string]int{}}
}

// start puts the auto-responder at auto, the pair at a and b, and
// out-of-office replies at the other players, and has them answer from
// now on.
func (r *responders) start(auto, a, b string, players []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.autoAddr = auto
	r.pair[a], r.pair[b] = b, a
	for _, p := range players {
		if p != auto && r.pair[p] == "" {
			r.ooo[p] = true
		}
	}
	r.on = true
}

// stop has them answer nothing more, and waits for the answers under way.
func (r *responders) stop() {
	r.mu.Lock()
	r.on = false
	r.mu.Unlock()
	r.inflight.Wait()
}

// loops returns the longest chain of answers and the mail to and from
// each looping address.
func (r *responders) loops() (largest int, mail map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.depth {
		largest = max(largest, d)
	}
	mail = make(map[string]int, len(r.loopMail))
	for k, v := range r.loopMail {
		mail[k] = v
	}
	return largest, mail
}

// incoming is a message delivered to a participant, as a responder sees it.
type incoming struct {
	rcpt    string // the address it was delivered to, lower case
	envFrom string // the envelope sender, lower case
	replyTo string // the first Reply-To address, lower case; "" for none
	id      string // Message-ID without angle brackets
	subject string
}

func fromHostAddr(addr string) bool {
	return strings.HasPrefix(addr, "host@") || strings.HasPrefix(addr, "host+")
}

// offer shows the responders a delivered message: mail to a looping
// address from the host or from the other of the pair is counted and, while
// they are on, answered in the background.
func (r *responders) offer(in incoming) {
	r.mu.Lock()
	looping := in.rcpt == r.autoAddr || r.pair[in.rcpt] != "" || r.ooo[in.rcpt]
	if !looping || !(fromHostAddr(in.envFrom) || r.pair[in.envFrom] != "") {
		r.mu.Unlock()
		return
	}
	r.loopMail[in.rcpt]++
	if !r.on {
		r.mu.Unlock()
		return
	}
	r.inflight.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.inflight.Done()
		r.respond(in)
	}()
}

// respond answers one message delivered to a looping address.
func (r *responders) respond(in incoming) {
	at, envFrom := in.rcpt, in.envFrom
	replyTo := cmpOr(in.replyTo, envFrom)
	ref := []string{"In-Reply-To: <" + in.id + ">", "References: <" + in.id + ">"}
	auto := append([]string{"Auto-Submitted: auto-replied"}, ref...)
	r.mu.Lock()
	other := r.pair[at]
	fromPair := r.pair[envFrom] != ""
	if fromPair && r.pairSent[at] >= 3 {
		// The pair would answer each other forever; their own mail
		// systems give up after a few rounds, as real ones do.
		r.mu.Unlock()
		return
	}
	if fromPair {
		r.pairSent[at]++
	}
	heads := r.rng.IntN(2) == 0
	r.mu.Unlock()

	send := func(rcpts []string, what, subj string, extra []string) {
		id := r.nextID("auto")
		r.mu.Lock()
		r.loopMail[at]++
		r.depth[id] = r.depth[in.id] + 1
		r.mu.Unlock()
		for _, rcpt := range rcpts {
			if fromHostAddr(rcpt) {
				r.record(&attackMsg{id: id, from: at, to: rcpt, what: what, expect: attackIgnored})
				break
			}
		}
		raw := attackMail(id, at, rcpts[0], subj, r.pass(at), extra, "I am away and will answer when I am back.")
		if err := r.send(at, rcpts, raw); err != nil {
			r.mu.Lock()
			on := r.on
			r.mu.Unlock()
			if on { // once stopped, the servers may be going away
				r.errorf("responder at %s: %v", at, err)
			}
		}
	}
	switch {
	case at == r.autoAddr:
		send([]string{replyTo}, "auto-reply", "Re: "+in.subject, auto)
	case other != "" && fromPair:
		// One of the pair answers the other, and the host it was
		// answering too.
		rcpts := []string{envFrom}
		if in.replyTo != "" && in.replyTo != envFrom {
			rcpts = append(rcpts, in.replyTo)
		}
		send(rcpts, "pair auto-reply", "Re: "+in.subject, append(auto, "Reply-To: <"+rcpts[len(rcpts)-1]+">"))
	case other != "":
		send([]string{replyTo, other}, "pair auto-reply", "Re: "+in.subject, append(auto, "Reply-To: <"+replyTo+">"))
	default:
		// Out-of-office replies come as mail clients send them: no
		// Auto-Submitted, only the subject, to the envelope sender or
		// the Reply-To.
		subj, rcpt := "Automatic reply: "+in.subject, envFrom
		if heads {
			subj, rcpt = "Out of Office: "+in.subject, replyTo
		}
		send([]string{rcpt}, "out-of-office", subj, ref)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
