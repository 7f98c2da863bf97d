package inbound

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Processor inspects the messages of a running host: Inspect, plus a rate
// limit per sender that stops one address from flooding the host.
type Processor struct {
	cfg     Config
	dir     Directory
	limiter *Limiter
	log     *slog.Logger
}

// NewProcessor returns a Processor. limiter may be nil for no rate limit;
// log may be nil for slog.Default().
//
// The limiter is used with two kinds of keys: the sender of each accepted
// message, and the address each refusal is sent to. The second bounds the
// refusals a forger can make the host send to a victim's address; keeping
// them apart means forged mail cannot use up the real sender's allowance.
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
	return &Processor{cfg: cfg, dir: dir, limiter: limiter, log: log}, nil
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

// Charge is a rate limit decision not yet kept: the key it drew on ("" for
// none) and the state of that key's bucket after it.
type Charge struct {
	Key    string
	Bucket Bucket
}

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
	if p.limiter != nil && c.Key != "" {
		p.limiter.Put(c.Key, c.Bucket)
	}
}

// RateFillTime is how long an emptied allowance takes to fill again, 0
// without a rate limit: charges older than that no longer matter.
func (p *Processor) RateFillTime() time.Duration {
	if p.limiter == nil {
		return 0
	}
	return p.limiter.FillTime()
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

func (p *Processor) limit(r *Report, now time.Time) Charge {
	switch r.Verdict.Kind {
	case Accepted:
		key := "from:" + strings.ToLower(r.Sender.Address)
		ok, first, b := p.limiter.Take(key, now)
		if ok {
			return Charge{key, b}
		}
		notify := ""
		if first && r.Sender.Participant != nil {
			notify = r.Sender.Participant.Address
		}
		r.Verdict = refuse(ReasonRateLimited, fmt.Sprintf(
			"A message to %s was not accepted: %s has sent more messages than the host takes in a short time. "+
				"Nothing in it was applied; wait a while and send it again.", describe(r.Route), r.Sender.Address), notify)
		return Charge{key, b}
	case Refused:
		if r.Verdict.Notify == "" {
			return Charge{}
		}
		key := "notify:" + strings.ToLower(r.Verdict.Notify)
		ok, _, b := p.limiter.Take(key, now)
		if !ok {
			r.Verdict.Notify = ""
			r.Verdict.Explanation += " (No refusal was sent: too many have gone to this address lately.)"
		}
		return Charge{key, b}
	}
	return Charge{}
}
