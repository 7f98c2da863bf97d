package command

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang/phrase"
)

// NormalizeName is the form in which two names are the same name (D1). It
// is the rules engine's own, so that the grammar and the engine agree.
func NormalizeName(s string) string { return engine.NormalizeName(s) }

// maxLength bounds EXTEND and GRANT: a longer one is more likely a typo
// ("120h" for "12h") than a wish.
const maxLength = 30 * 24 * time.Hour

var units = map[string]time.Duration{
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
}

// parseLength reads a length such as "12h", "1d", "1h30m" or "2 days".
func parseLength(s string) (time.Duration, error) {
	bad := phrase.Errorf("%q is not a length; write it like 12h, 90m or 1d", s)
	rest := strings.ToLower(strings.TrimSpace(s))
	var total time.Duration
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if i <= 0 {
			return 0, bad
		}
		n, err := strconv.Atoi(rest[:i])
		if err != nil || n > 100000 {
			return 0, bad
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := strings.IndexFunc(rest, func(r rune) bool { return r < 'a' || r > 'z' })
		if j < 0 {
			j = len(rest)
		}
		unit, ok := units[rest[:j]]
		if !ok {
			return 0, bad
		}
		total += time.Duration(n) * unit
		if total > maxLength {
			return 0, phrase.Errorf("%q is longer than %d days", s, int(maxLength/(24*time.Hour)))
		}
		rest = strings.TrimLeft(rest[j:], " ,")
	}
	if total <= 0 {
		return 0, bad
	}
	return total, nil
}

// engineVerbs is every verb that reaches the rules engine, with the engine's
// own. The two types are kept apart (the grammar knows NEW GAME, which is the
// host's; the engine knows POST, which is discussion), so they convert
// through this table and never by a bare string conversion.
var engineVerbs = map[Verb]engine.Verb{
	Vote: engine.CmdVote, Unvote: engine.CmdUnvote, Lock: engine.CmdLock, Unlock: engine.CmdUnlock,
	Extend: engine.CmdExtend, Tally: engine.CmdTally, Help: engine.CmdHelp, Status: engine.CmdStatus,
	Kill: engine.CmdKill, NoKill: engine.CmdNoKill, Inspect: engine.CmdInspect, Protect: engine.CmdProtect,
	Shoot: engine.CmdShoot, Pass: engine.CmdPass,
	Add: engine.CmdAdd, Setup: engine.CmdSetup, Start: engine.CmdStart, Close: engine.CmdClose,
	Deadline: engine.CmdDeadline, Grant: engine.CmdGrant, Deny: engine.CmdDeny,
	WeekendClose: engine.CmdWeekendClose, Replace: engine.CmdReplace, Modkill: engine.CmdModkill,
	Suspend: engine.CmdSuspend, Relay: engine.CmdRelay, Reject: engine.CmdReject, Admit: engine.CmdAdmit,
	Pause: engine.CmdPause, Resume: engine.CmdResume, Announce: engine.CmdAnnounce, End: engine.CmdEnd,
	Join: engine.CmdJoin, Zone: engine.CmdZone, Language: engine.CmdLanguage, Mail: engine.CmdMail, Calendar: engine.CmdCalendar,
}

var grammarVerbs = func() map[engine.Verb]Verb {
	m := make(map[engine.Verb]Verb, len(engineVerbs))
	for v, e := range engineVerbs {
		m[e] = v
	}
	return m
}()

// Engine returns the engine's verb for v; ok is false for a verb the engine
// does not take (NEW GAME, which the host handles itself).
func (v Verb) Engine() (verb engine.Verb, ok bool) {
	verb, ok = engineVerbs[v]
	return verb, ok
}

// FromEngine returns the grammar's verb for an engine verb; ok is false for
// one no mail line spells (POST, which is discussion).
func FromEngine(v engine.Verb) (verb Verb, ok bool) {
	verb, ok = grammarVerbs[v]
	return verb, ok
}

// WithTarget is the command's line as written with name as its target
// instead of the one written: what to send to mean another player ("VOTE
// Bob" with Bob dead is "VOTE Bobby"). The target is looked for after the
// verb (after ">>" in "Voter >> Target"); a line that does not hold it as
// written, in a language's words or with odd spaces, is given as the
// English verb and the name.
func (c Command) WithTarget(name string) string {
	raw := strings.TrimSpace(c.Raw)
	from := 0
	if i := strings.Index(raw, ">>"); c.Voter != "" && i >= 0 {
		from = i + len(">>")
	} else if i := strings.IndexFunc(raw, unicode.IsSpace); i >= 0 {
		from = i
	}
	if c.Target != "" {
		if i := strings.Index(raw[from:], c.Target); i >= 0 {
			i += from
			return raw[:i] + name + raw[i+len(c.Target):]
		}
	}
	if c.Voter != "" {
		return c.Voter + " >> " + name
	}
	return string(c.Verb) + " " + name
}
