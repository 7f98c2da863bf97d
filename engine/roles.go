package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/lang/phrase"
)

// Role is a player's secret role.
type Role string

// The roles of docs/rules.md (S1).
const (
	Townsperson Role = "Townsperson"
	Mafia       Role = "Mafia"
	Inspector   Role = "Inspector"
	Doctor      Role = "Doctor"
	Vigilante   Role = "Vigilante"
)

// Side is a team: the town (every role but Mafia) or the Mafia.
type Side string

// The two sides, and None for a game the referee ended without a winner.
const (
	Town     Side = "Town"
	MafiaWin Side = "Mafia"
	NoWinner Side = "None"
)

// SideOf reports the side a role plays for.
func SideOf(r Role) Side {
	if r == Mafia {
		return MafiaWin
	}
	return Town
}

// InspectorResult says what an inspection answers (S1).
type InspectorResult string

// Alignment answers "is Mafia" / "is not Mafia"; ExactRole names the role.
const (
	Alignment InspectorResult = "alignment"
	ExactRole InspectorResult = "role"
)

// Unlimited is the value of Setup.DoctorSaves for a doctor whose saves never run out.
const Unlimited = -1

// Setup is the data that defines a game (S1): how many of each role and the
// options. Nothing in it changes once the game has started.
type Setup struct {
	Name       string `json:"name"`
	Players    int    `json:"players"`
	Mafia      int    `json:"mafia"`
	Inspectors int    `json:"inspectors"`
	Doctors    int    `json:"doctors"`
	Vigilantes int    `json:"vigilantes"`

	InspectorResult       InspectorResult `json:"inspector_result"`
	InspectorKnowsMafioso bool            `json:"inspector_knows_mafioso"`
	VigilanteShots        int             `json:"vigilante_shots"`
	DoctorSaves           int             `json:"doctor_saves"`

	DayLength    time.Duration `json:"day_length"`
	RunoffLength time.Duration `json:"runoff_length"`
	ExtraLength  time.Duration `json:"extra_length"`
	TieExtension time.Duration `json:"tie_extension"`
	NightStep    time.Duration `json:"night_step"`
	NightLength  time.Duration `json:"night_length"`
	// ReminderBefore is how long before a round closes (or a night's last
	// mark) the players who still owe a vote or an action are reminded.
	// Zero sends no reminders.
	ReminderBefore time.Duration `json:"reminder_before"`
	// DigestInterval gathers thread posts into digests (T1); zero relays
	// each post at once. The engine only carries it for the mail layer.
	DigestInterval time.Duration `json:"digest_interval"`
	// Zone is the game time zone in which times are shown (D8).
	Zone string `json:"zone"`
	// WeekendZone is the zone of the weekend window the referee named
	// (weekend_zone=), or "" for the window D7 gives the setup: the seed's
	// (America/Chicago) in the default zone, the game's own zone otherwise.
	WeekendZone string `json:"weekend_zone,omitempty"`
	// NoWeekend: the weekend rule is off (weekend=off), and day rounds
	// close on weekends like any other day (D7).
	NoWeekend bool `json:"no_weekend,omitempty"`
	// MailGrace is how long, in real time, a deadline waits for mail that
	// reached the host's mailbox before it while the mailbox cannot be read
	// (D8); zero leaves it to the host (15 minutes unless configured). The
	// engine only carries it for the host's clock.
	MailGrace time.Duration `json:"mail_grace,omitempty"`
	// HeldMailGrace is how long, in game time, a round's close waits at
	// most for mail the host's sending limit holds back (T4): zero is the
	// default of 2 hours, a negative value no wait at all.
	HeldMailGrace time.Duration `json:"held_mail_grace,omitempty"`
	// PostGameTalk is how long after the end thread posts are still
	// relayed to every participant: zero is the default of a week, a
	// negative value none at all.
	PostGameTalk time.Duration `json:"post_game_talk,omitempty"`
	// NoCalendar: the mail that opens a voting round or moves its close
	// carries no calendar event for anyone (calendar=off, T5).
	NoCalendar bool `json:"no_calendar,omitempty"`
	// Language is the language of the game's mail, a tag of package lang
	// (language=fr); "" for the host's default. Each player may choose
	// their own (LANGUAGE).
	Language string `json:"language,omitempty"`
}

// DefaultPostGameTalk is how long the talk after a game's end lasts unless
// the setup says otherwise.
const DefaultPostGameTalk = 7 * 24 * time.Hour

// TalkAfterEnd is how long the post-game talk lasts.
func (s Setup) TalkAfterEnd() time.Duration {
	switch {
	case s.PostGameTalk == 0:
		return DefaultPostGameTalk
	case s.PostGameTalk < 0:
		return 0
	}
	return s.PostGameTalk
}

// WeekendWindow is the zone of the weekend window in force (D7): the one
// weekend_zone= named; else the seed's, America/Chicago, for a game in the
// default zone (classic, mafia150 and every setup that names no zone, as
// the seed's own game showed New York times and held Chicago weekends);
// else the game's own zone. on is false when weekend=off turned the rule
// off.
func (s Setup) WeekendWindow() (zone string, on bool) {
	switch {
	case s.NoWeekend:
		return "", false
	case s.WeekendZone != "":
		return s.WeekendZone, true
	case s.Zone == "" || s.Zone == DefaultZone:
		return SeedWeekendZone, true
	}
	return s.Zone, true
}

// ZonePlace is how a zone is named in a sentence: the place of a zone
// database name ("Chicago" for America/Chicago, "Buenos Aires" for
// America/Argentina/Buenos_Aires), or the name itself (UTC).
func ZonePlace(zone string) string {
	place := zone[strings.LastIndexByte(zone, '/')+1:]
	return strings.ReplaceAll(place, "_", " ")
}

// PlaceTime is a zone's local time in words, "Chicago time", worded by
// word, which gives a language's wording of an English format.
func PlaceTime(zone string, word func(format string) string) string {
	return fmt.Sprintf(word(lang.Key("%s time")), ZonePlace(zone))
}

// Townspeople is the number of plain Townspeople: everyone without another role.
func (s Setup) Townspeople() int {
	return s.Players - s.Mafia - s.Inspectors - s.Doctors - s.Vigilantes
}

func baseSetup() Setup {
	return Setup{
		InspectorResult: Alignment,
		VigilanteShots:  2,
		DoctorSaves:     Unlimited,
		DayLength:       36 * time.Hour,
		RunoffLength:    24 * time.Hour,
		ExtraLength:     24 * time.Hour,
		TieExtension:    12 * time.Hour,
		NightStep:       6 * time.Hour,
		NightLength:     18 * time.Hour,
		ReminderBefore:  6 * time.Hour,
		Zone:            DefaultZone,
	}
}

// Classic is the setup of the seed rules 1–2: 11 players, 3 Mafia, 1 Inspector
// who is told one Mafioso's name, yes/no inspections.
func Classic() Setup {
	s := baseSetup()
	s.Name = "classic"
	s.Players, s.Mafia, s.Inspectors = 11, 3, 1
	s.InspectorKnowsMafioso = true
	return s
}

// Mafia150 is the setup of "Mafia 150 Additional Rules": 25 players, 7 Mafia,
// an Inspector, a Doctor and a Vigilante; inspections name the exact role.
// As in classic, every Inspector starts knowing the same one Mafioso (S1).
func Mafia150() Setup {
	s := baseSetup()
	s.Name = "mafia150"
	s.Players, s.Mafia, s.Inspectors, s.Doctors, s.Vigilantes = 25, 7, 1, 1, 1
	s.InspectorResult = ExactRole
	s.InspectorKnowsMafioso = true
	return s
}

// BuiltinSetup returns a built-in setup by name.
func BuiltinSetup(name string) (Setup, bool) {
	switch strings.ToLower(name) {
	case "classic":
		return Classic(), true
	case "mafia150":
		return Mafia150(), true
	}
	return Setup{}, false
}

// Validate reports the first thing that makes the setup unplayable, in words
// a referee understands.
func (s Setup) Validate() error {
	switch {
	case s.Players < 3:
		return phrase.Errorf("a game needs at least 3 players, not %d", s.Players)
	case s.Players > 200:
		return phrase.Errorf("a game takes at most 200 players, not %d", s.Players)
	case s.Mafia < 1:
		return phrase.Errorf("a game needs at least one Mafioso (a custom setup has only the roles it names: add mafia=N)")
	case s.Inspectors < 0 || s.Doctors < 0 || s.Vigilantes < 0:
		return phrase.Errorf("role counts cannot be negative")
	case s.Townspeople() < 0:
		return phrase.Errorf("%d Mafia and special roles do not fit in %d players",
			s.Players-s.Townspeople(), s.Players)
	case s.Mafia > s.Players-s.Mafia:
		// W1 at the start: the Mafia win when they outnumber everyone else.
		return phrase.Errorf("%d Mafia of %d players outnumber the other %d and would win at the start; at most %d Mafia fit in %d players",
			s.Mafia, s.Players, s.Players-s.Mafia, s.Players/2, s.Players)
	case s.Mafia == 1 && s.Inspectors > 0 && s.InspectorKnowsMafioso:
		// S1: start-of-game knowledge must not decide the game.
		return phrase.Errorf("with one Mafioso, an Inspector told a Mafioso at the start would know the whole Mafia before Day 1; add Mafia or set inspector_knows_mafioso=false")
	case s.InspectorResult != Alignment && s.InspectorResult != ExactRole:
		return phrase.Errorf("inspector_result must be alignment or role, not %q", s.InspectorResult)
	case s.VigilanteShots < 0:
		return phrase.Errorf("vigilante_shots cannot be negative")
	case s.DoctorSaves < Unlimited:
		return phrase.Errorf("doctor_saves must be a count or unlimited")
	case s.DayLength < time.Hour || s.RunoffLength < time.Hour || s.ExtraLength < time.Hour:
		return phrase.Errorf("rounds must last at least an hour")
	case s.TieExtension < time.Hour:
		return phrase.Errorf("tie_extension must be at least an hour")
	case s.NightStep < time.Hour || s.NightLength < s.NightStep:
		return phrase.Errorf("night_step must be at least an hour and night_length at least one step")
	case s.ReminderBefore < 0 || s.DigestInterval < 0:
		return phrase.Errorf("reminder and digest intervals cannot be negative")
	case s.MailGrace != 0 && (s.MailGrace < time.Minute || s.MailGrace > 24*time.Hour):
		return phrase.Errorf("mail_grace must be between 1m and 24h")
	case s.HeldMailGrace > 0 && (s.HeldMailGrace < time.Minute || s.HeldMailGrace > 24*time.Hour):
		return phrase.Errorf("held_mail_grace must be between 1m and 24h, or none")
	}
	if _, err := loadZone(s.Zone); err != nil {
		return phrase.Errorf("unknown time zone %q", s.Zone)
	}
	if s.WeekendZone != "" {
		if _, err := loadZone(s.WeekendZone); err != nil {
			return phrase.Errorf("unknown time zone %q for weekend_zone (write a place of the zone database, such as Europe/Berlin, or UTC)", s.WeekendZone)
		}
	}
	return nil
}

// setupKeys lists the keys SETUP understands, for its error messages.
var setupKeys = []string{"players", "mafia", "inspectors", "doctors", "vigilantes",
	"inspector_result", "inspector_knows_mafioso", "vigilante_shots", "doctor_saves",
	"day_length", "runoff_length", "extra_length", "tie_extension", "night_step",
	"night_length", "reminder_before", "digest_interval", "zone", "weekend_zone", "weekend", "mail_grace",
	"held_mail_grace", "post_game_talk", "calendar", "language"}

// SetupKeys returns the keys SETUP understands, as its error messages list
// them, for the referee's guide and its test.
func SetupKeys() []string { return append([]string(nil), setupKeys...) }

// ParseSetup reads the argument of the referee's SETUP command: an optional
// built-in name followed by key=value pairs, e.g.
// "classic", "mafia150 digest_interval=2h" or "players=9 mafia=2 doctors=1".
// Pairs change the named setup, or the current one when no name is given.
func ParseSetup(current Setup, args string) (Setup, error) {
	s := current
	fields := strings.Fields(args)
	if len(fields) == 0 {
		return s, phrase.Errorf("SETUP needs a setup name (classic, mafia150) or key=value pairs")
	}
	builtin := false
	if b, ok := BuiltinSetup(fields[0]); ok {
		s = b
		fields = fields[1:]
		builtin = true
	}
	// S1: a custom setup has exactly the roles it names. Pairs that name
	// any role count, without a built-in setup before them, start from no
	// roles at all, so that no Inspector is kept from the setup before.
	if !builtin && namesRoles(fields) {
		s.Mafia, s.Inspectors, s.Doctors, s.Vigilantes = 0, 0, 0, 0
	}
	custom := false
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			return s, phrase.Errorf("%q is not a setup name or key=value (keys: %s)", f, strings.Join(setupKeys, ", "))
		}
		key = strings.ToLower(key)
		var err error
		intv := func(p *int) {
			var n int
			n, err = strconv.Atoi(val)
			*p = n
		}
		durv := func(p *time.Duration) {
			var d time.Duration
			d, err = ParseDuration(val)
			*p = d
		}
		switch key {
		case "players":
			intv(&s.Players)
		case "mafia":
			intv(&s.Mafia)
		case "inspectors", "inspector":
			intv(&s.Inspectors)
		case "doctors", "doctor":
			intv(&s.Doctors)
		case "vigilantes", "vigilante":
			intv(&s.Vigilantes)
		case "inspector_result":
			s.InspectorResult = InspectorResult(strings.ToLower(val))
		case "inspector_knows_mafioso":
			s.InspectorKnowsMafioso, err = strconv.ParseBool(val)
		case "vigilante_shots":
			intv(&s.VigilanteShots)
		case "doctor_saves":
			if strings.EqualFold(val, "unlimited") {
				s.DoctorSaves = Unlimited
			} else {
				intv(&s.DoctorSaves)
			}
		case "day_length":
			durv(&s.DayLength)
		case "runoff_length":
			durv(&s.RunoffLength)
		case "extra_length":
			durv(&s.ExtraLength)
		case "tie_extension":
			durv(&s.TieExtension)
		case "night_step":
			durv(&s.NightStep)
		case "night_length":
			durv(&s.NightLength)
		case "reminder_before":
			durv(&s.ReminderBefore)
		case "digest_interval":
			durv(&s.DigestInterval)
		case "zone":
			s.Zone = val
		case "weekend_zone":
			s.WeekendZone = val
		case "weekend":
			switch strings.ToLower(val) {
			case "on":
				s.NoWeekend = false
			case "off":
				s.NoWeekend = true
			default:
				err = phrase.Errorf("weekend is on or off")
			}
		case "mail_grace":
			durv(&s.MailGrace)
		case "held_mail_grace":
			if strings.EqualFold(val, "none") || val == "0" {
				s.HeldMailGrace = -1
			} else {
				durv(&s.HeldMailGrace)
			}
		case "post_game_talk":
			if strings.EqualFold(val, "none") || val == "0" {
				s.PostGameTalk = -1
			} else {
				durv(&s.PostGameTalk)
			}
		case "language":
			tag, ok := lang.Match(val)
			if !ok {
				return s, phrase.Errorf("%q is not a language of this host (languages: %s)", val, strings.Join(lang.Tags(), ", "))
			}
			s.Language = tag
		case "calendar":
			switch strings.ToLower(val) {
			case "on":
				s.NoCalendar = false
			case "off":
				s.NoCalendar = true
			default:
				err = phrase.Errorf("calendar is on or off")
			}
		default:
			return s, phrase.Errorf("unknown setup key %q (keys: %s)", key, strings.Join(setupKeys, ", "))
		}
		if err != nil {
			return s, phrase.Errorf("bad value for %s: %q", key, val)
		}
		custom = true
	}
	if custom {
		s.Name = "custom"
	}
	return s, s.Validate()
}

// roleKeys are the SETUP keys that count a role.
var roleKeys = map[string]bool{"mafia": true, "inspectors": true, "inspector": true,
	"doctors": true, "doctor": true, "vigilantes": true, "vigilante": true}

func namesRoles(fields []string) bool {
	for _, f := range fields {
		if key, _, ok := strings.Cut(f, "="); ok && roleKeys[strings.ToLower(key)] {
			return true
		}
	}
	return false
}

// ParseDuration reads a duration as referees write it: "12h", "90m", "1d",
// "1d12h", or anything time.ParseDuration takes.
func ParseDuration(v string) (time.Duration, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	var days time.Duration
	if i := strings.IndexByte(v, 'd'); i > 0 {
		n, err := strconv.Atoi(v[:i])
		if err != nil {
			return 0, phrase.Errorf("bad duration %q", v)
		}
		days = time.Duration(n) * 24 * time.Hour
		v = v[i+1:]
		if v == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, phrase.Errorf("bad duration %q (write e.g. 12h, 90m or 1d)", v)
	}
	return days + d, nil
}

// roleCounts lists each role with its count, in draw order.
func (s Setup) roleCounts() []struct {
	Role  Role
	Count int
} {
	return []struct {
		Role  Role
		Count int
	}{
		{Inspector, s.Inspectors}, {Mafia, s.Mafia}, {Doctor, s.Doctors},
		{Vigilante, s.Vigilantes}, {Townsperson, s.Townspeople()},
	}
}

// Summary is a one-line description of the setup, such as
// "11 players: 3 Mafia, 1 Inspector, 7 Townspeople".
func (s Setup) Summary() string {
	return s.SummaryIn(func(n int, one, other string) string {
		if n == 1 {
			return fmt.Sprintf(one, n)
		}
		return fmt.Sprintf(other, n)
	}, func(format string) string { return format })
}

// SummaryIn is Summary in a language: count writes a count with the
// language's form of one of the English pairs ("%d Inspector", "%d
// Inspectors"), and word gives the language's wording of an English
// format.
func (s Setup) SummaryIn(count func(n int, one, other string) string, word func(format string) string) string {
	var parts []string
	counts := s.roleCounts()
	// Shown Mafia first, as players think of a setup.
	counts[0], counts[1] = counts[1], counts[0]
	forms := map[Role][2]string{
		Mafia:       {lang.Key("%d Mafia"), lang.Key("%d Mafia")},
		Inspector:   {lang.Key("%d Inspector"), lang.Key("%d Inspectors")},
		Doctor:      {lang.Key("%d Doctor"), lang.Key("%d Doctors")},
		Vigilante:   {lang.Key("%d Vigilante"), lang.Key("%d Vigilantes")},
		Townsperson: {lang.Key("%d Townsperson"), lang.Key("%d Townspeople")},
	}
	for _, rc := range counts {
		if rc.Count == 0 {
			continue
		}
		f := forms[rc.Role]
		parts = append(parts, count(rc.Count, f[0], f[1]))
	}
	out := fmt.Sprintf(word(lang.Key("%d players: %s")), s.Players, strings.Join(parts, ", "))
	// D7: the window in force, always, so that a referee who never read the
	// rules learns from the summary alone when a round cannot close.
	if zone, on := s.WeekendWindow(); on {
		out = fmt.Sprintf(word(lang.Key("%s; no day round closes from Friday 17:00 to Monday 07:00 %s")), out, PlaceTime(zone, word))
	} else {
		out = fmt.Sprintf(word(lang.Key("%s; day rounds close on weekends too")), out)
	}
	if s.Language != "" {
		out = fmt.Sprintf(word(lang.Key("%s; in %s")), out, word(lang.Get(s.Language).EnglishName()))
	}
	return out
}
