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

// Process inspects raw, received at now, and applies the rate limit.
func (p *Processor) Process(raw []byte, now time.Time) Report {
	r := Inspect(raw, p.cfg, p.dir)
	if p.limiter != nil {
		p.limit(&r, now)
	}
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
	return r
}

func (p *Processor) limit(r *Report, now time.Time) {
	switch r.Verdict.Kind {
	case Accepted:
		ok, first := p.limiter.Allow("from:"+strings.ToLower(r.Sender.Address), now)
		if ok {
			return
		}
		notify := ""
		if first && r.Sender.Participant != nil {
			notify = r.Sender.Participant.Address
		}
		r.Verdict = refuse(ReasonRateLimited, fmt.Sprintf(
			"A message to %s was not accepted: %s has sent more messages than the host takes in a short time. "+
				"Nothing in it was applied; wait a while and send it again.", describe(r.Route), r.Sender.Address), notify)
	case Refused:
		if r.Verdict.Notify == "" {
			return
		}
		if ok, _ := p.limiter.Allow("notify:"+strings.ToLower(r.Verdict.Notify), now); !ok {
			r.Verdict.Notify = ""
			r.Verdict.Explanation += " (No refusal was sent: too many have gone to this address lately.)"
		}
	}
}
