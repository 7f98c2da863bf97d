package inbound

import (
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

// Processor inspects the messages of a running host: Inspect, plus a rate
// limit per sender that stops one address from flooding the host.
type Processor struct {
	cfg     Config
	dir     Directory
	limiter *Limiter
	// domains and unproven limit the mail whose sender nothing proves (no
	// token, no trusted authentication): per sending domain, and all of
	// it together. They are the sender limiter scaled up (see
	// NewProcessor).
	domains, unproven *Limiter
	// answers allows one answer a day to each address that sends
	// unproven mail: forged mail makes the host write to its victim at
	// most that often.
	answers *Limiter
	log     *slog.Logger
}

// How much larger the allowances of unproven mail are than one sender's:
// a domain's is shared by everyone who writes from it, the pool by
// everyone at all.
const (
	domainAllowanceScale   = 4
	unprovenAllowanceScale = 10
)

// NewProcessor returns a Processor. limiter may be nil for no rate limit;
// log may be nil for slog.Default().
//
// Allowances follow proof. Mail on a participant's channel that passed
// every check (a known token, the registered From, and the trusted
// authentication where configured) draws on that seat's allowance alone:
// no one without the seat's token can touch it. Mail that no token ties
// to a seat (to the host's own address, to a sign-up address) draws on
// its From address's allowance; when no authserv-id is configured, that
// From proves nothing, so it draws as well on its domain's and on one
// pool shared by all unproven mail, four and ten times one sender's.
// Refusals are limited per address they go to, apart from all of these,
// which bounds the refusals a forger can make the host send to a victim.
func NewProcessor(cfg Config, dir Directory, limiter *Limiter, log *slog.Logger) (*Processor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dir == nil {
		return nil, errors.New("inbound: a Processor needs a Directory")
	}
	if log == nil {
		log = slog.Default()
	}
	p := &Processor{cfg: cfg, dir: dir, limiter: limiter, log: log}
	if limiter != nil {
		p.domains = limiter.scaled(domainAllowanceScale)
		p.unproven = limiter.scaled(unprovenAllowanceScale)
		p.answers = NewLimiter(24*time.Hour, 1)
	}
	return p, nil
}

// Process inspects raw, received at now, applies the rate limit and keeps
// its decision at once: for a caller with nothing to make durable.
func (p *Processor) Process(raw []byte, now time.Time) Report {
	r := p.Inspect(raw, len(raw))
	p.Keep(p.Limit(&r, now))
	p.Log(r)
	return r
}

// Inspect reads raw as InspectSized does, with the processor's
// configuration and directory. It leaves the rate limit alone.
func (p *Processor) Inspect(raw []byte, size int) Report {
	return InspectSized(raw, size, p.cfg, p.dir)
}

// Charge is a rate limit decision not yet kept: the keys it drew on (none
// for a message that costs nothing) and the state of their buckets after
// it.
type Charge struct {
	Draws []Draw
}

// Draw is one key's part of a Charge.
type Draw struct {
	Key    string
	Bucket Bucket
}

// Key prefixes: which allowance a saved bucket belongs to.
const (
	keySeat     = "seat:"
	keyFrom     = "from:"
	keyDomain   = "domain:"
	keyUnproven = "unproven"
	keyNotify   = "notify:"
	keyAnswer   = "answer:"
)

// Limit applies the rate limit to r, received at now: a sender over its
// allowance has its message refused, and a refusal to an address that has
// had too many goes unsent. The limiter itself is left unchanged: the
// caller saves the returned charge with the message's outcome and then
// Keeps it, so that a decision whose transaction fails is not counted.
func (p *Processor) Limit(r *Report, now time.Time) Charge {
	if p.limiter == nil {
		return Charge{}
	}
	return p.limit(r, now)
}

// Keep applies a charge from Limit, or one saved before a restart.
func (p *Processor) Keep(c Charge) {
	for _, d := range c.Draws {
		if l := p.limiterFor(d.Key); l != nil {
			l.Put(d.Key, d.Bucket)
		}
	}
}

// limiterFor is the limiter a key's allowance belongs to.
func (p *Processor) limiterFor(key string) *Limiter {
	switch {
	case p.limiter == nil:
		return nil
	case strings.HasPrefix(key, keyDomain):
		return p.domains
	case key == keyUnproven:
		return p.unproven
	case strings.HasPrefix(key, keyAnswer):
		return p.answers
	}
	return p.limiter
}

// RateFillTime is how long an emptied allowance takes to fill again, 0
// without a rate limit: charges older than that no longer matter.
func (p *Processor) RateFillTime() time.Duration {
	if p.limiter == nil {
		return 0
	}
	return max(p.limiter.FillTime(), p.domains.FillTime(), p.unproven.FillTime(), p.answers.FillTime())
}

// Log records what was decided about a message.
func (p *Processor) Log(r Report) {
	p.log.Info("inbound message",
		"message_id", r.MessageID,
		"from", r.Sender.Address,
		"route", string(r.Route.Kind),
		"game", r.Route.Game,
		"verdict", string(r.Verdict.Kind),
		"reason", r.Verdict.Reason,
		"commands", len(r.Commands),
		"command_errors", len(r.Errors),
		"notify", r.Verdict.Notify != "",
	)
}

// allowanceKeys are the keys an accepted message draws on (see
// NewProcessor).
func (p *Processor) allowanceKeys(r *Report) []string {
	if r.Route.Kind.Participant() && r.Sender.Participant != nil {
		return []string{keySeat + r.Route.Game + ":" + r.Route.Token}
	}
	addr := strings.ToLower(r.Sender.Address)
	keys := []string{keyFrom + addr}
	if p.cfg.AuthServID == "" {
		_, domain, _ := splitAddress(addr)
		keys = append(keys, keyDomain+domain, keyUnproven)
	}
	return keys
}

func (p *Processor) limit(r *Report, now time.Time) Charge {
	switch r.Verdict.Kind {
	case Accepted:
		keys := p.allowanceKeys(r)
		var draws, refused []Draw
		first := false
		for _, key := range keys {
			ok, f, b := p.limiterFor(key).Take(key, now)
			if ok {
				draws = append(draws, Draw{key, b})
			} else {
				refused = append(refused, Draw{key, b})
				first = first || f
			}
		}
		if len(refused) == 0 {
			if r.Unproven {
				key := keyAnswer + strings.ToLower(r.Sender.Address)
				ok, _, b := p.answers.Take(key, now)
				r.Quiet = !ok
				draws = append(draws, Draw{key, b})
			}
			return Charge{draws}
		}
		// A refused message takes nothing from the allowances that had
		// room: only the refusals are kept.
		notify := ""
		if first && r.Sender.Participant != nil {
			notify = r.Sender.Participant.Address
		}
		why := phrase.Errorf("A message to %s was not accepted: %s has sent more messages than the host takes in a short time. "+
			"Nothing in it was applied; wait a while and send it again.", describe(r.Route), r.Sender.Address)
		switch {
		case r.Sender.Participant != nil:
			why = phrase.Errorf("A message to %s was not accepted: you have sent more messages than the host takes in a short time. "+
				"Nothing in it was applied; wait a while and send it again.", describe(r.Route))
		case len(refused) > 1 || refused[0].Key != keys[0]:
			why = phrase.Errorf("A message to %s was not accepted: "+
				"the host has had more mail than it takes in a short time from senders it cannot identify. "+
				"Nothing in it was applied; wait a while and send it again.", describe(r.Route))
		}
		r.Verdict = refuse(ReasonRateLimited, why, notify)
		return Charge{refused}
	case Refused:
		if r.Verdict.Notify == "" {
			return Charge{}
		}
		key := keyNotify + strings.ToLower(r.Verdict.Notify)
		ok, _, b := p.limiter.Take(key, now)
		if !ok {
			r.Verdict.Notify = ""
			if r.Verdict.Why != nil {
				r.Verdict.explain(phrase.Errorf("%v (No refusal was sent: too many have gone to this address lately.)", r.Verdict.Why))
			} else {
				r.Verdict.Explanation += " (No refusal was sent: too many have gone to this address lately.)"
			}
		}
		return Charge{[]Draw{{key, b}}}
	}
	return Charge{}
}
