package engine

import (
	"sort"
	"time"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

// Tally is the official tally (D15), with names, ready to show.
type Tally struct {
	Game       string    `json:"game"`
	Day        int       `json:"day"`
	Round      RoundKind `json:"round"`
	At         time.Time `json:"at"`
	Deadline   time.Time `json:"deadline"`
	Candidates []string  `json:"candidates,omitempty"`
	// Counts lists the players with votes on them, most first.
	Counts []TallyCount `json:"counts"`
	// Votes is every living player's current vote, in seat order.
	Votes    []TallyVote `json:"votes"`
	NotVoted []string    `json:"not_voted"`
	Notes    []string    `json:"notes,omitempty"`
	// NotePhrases are the notes as phrases, for the mail to word in its
	// reader's language (a tally in an older log has Notes alone).
	NotePhrases []*phrase.Error `json:"note_phrases,omitempty"`
	// ToLock are the living players who still have to lock a vote for the
	// round to close early (D5): those with no votes on them who have not
	// locked. Empty when no early close is possible that way (three
	// players left, or a tie extension whose tie still stands) or when
	// the round is ready to close.
	ToLock []string `json:"to_lock,omitempty"`
	// LastThree: three players are left, and two locks on one player close
	// the round early (D5).
	LastThree bool `json:"last_three,omitempty"`
}

// TallyCount is one player with votes on them.
type TallyCount struct {
	Name   string   `json:"name"`
	Votes  int      `json:"votes"`
	Voters []string `json:"voters"`
}

// TallyVote is one living player's vote.
type TallyVote struct {
	Name   string `json:"name"`
	Target string `json:"target,omitempty"`
	Null   bool   `json:"null,omitempty"`
	Locked bool   `json:"locked,omitempty"`
	// Cleared names the player whose death cleared this vote (D14): the
	// vote counts as cast at the close unless its voter votes again.
	Cleared string `json:"cleared,omitempty"`
}

// Left is the time from the tally's moment to its deadline.
func (t *Tally) Left() time.Duration { return t.Deadline.Sub(t.At) }

// Tally builds the official tally at now.
func (s *State) Tally(now time.Time) *Tally {
	t := &Tally{Game: s.Game, Day: s.Day, Round: s.Round, At: now.UTC(), Deadline: s.ClosesAt()}
	on := s.votesOn()
	for slot, voters := range on {
		c := TallyCount{Name: s.name(slot), Votes: len(voters)}
		for _, v := range voters {
			c.Voters = append(c.Voters, s.name(v))
		}
		t.Counts = append(t.Counts, c)
	}
	sort.Slice(t.Counts, func(i, j int) bool {
		if t.Counts[i].Votes != t.Counts[j].Votes {
			return t.Counts[i].Votes > t.Counts[j].Votes
		}
		return t.Counts[i].Name < t.Counts[j].Name
	})
	for _, p := range s.Players {
		if !p.Alive {
			continue
		}
		v := TallyVote{Name: p.Name, Locked: p.Locked}
		switch {
		case p.Vote == NullVote:
			v.Null = true
		case p.Vote > 0:
			v.Target = s.name(p.Vote)
		case p.Cleared > 0:
			v.Cleared = s.name(p.Cleared)
		}
		t.Votes = append(t.Votes, v)
		if p.Vote <= 0 && v.Cleared == "" {
			t.NotVoted = append(t.NotVoted, p.Name)
		}
	}
	for _, c := range s.Candidates {
		t.Candidates = append(t.Candidates, s.name(c))
	}
	for _, n := range s.tallyNotes() {
		t.Notes = append(t.Notes, n.Error())
		t.NotePhrases = append(t.NotePhrases, n)
	}
	if s.Phase == DayPhase && !s.Paused && !s.earlyCloseDue() && !(s.TieExtended && s.tiedAmongCandidates()) {
		if len(s.Living()) == 3 {
			t.LastThree = true
		} else {
			for _, slot := range s.Living() {
				if p := s.Player(slot); len(on[slot]) == 0 && !p.Locked {
					t.ToLock = append(t.ToLock, p.Name)
				}
			}
		}
	}
	return t
}

func (s *State) tallyNotes() []*phrase.Error {
	var notes []*phrase.Error
	add := func(p *phrase.Error) { notes = append(notes, p) }
	switch {
	case s.Round == Runoff:
		add(phrase.Errorf("Runoff: only the tied players can be voted for; votes on them carried over."))
	case s.Extra:
		add(phrase.Errorf("Extra round: the Mafia named no victim last night, so the town votes again."))
	}
	if s.TieExtended {
		add(phrase.Errorf("The runoff closed tied and was extended once, with every lock reset; it closes early only once a vote breaks the tie, and if it is tied again at the deadline, no one is eliminated today."))
	}
	if s.Deadline != s.closeAt() {
		zone, _ := s.Setup.WeekendWindow()
		local := phrase.Errorf("%s time", ZonePlace(zone))
		add(phrase.Errorf("The deadline falls in the weekend, when no day round closes (Friday 17:00 to Monday 07:00 %s), so the round is held to Monday 07:00 %s.", local, local))
	}
	if s.WeekendClose {
		add(phrase.Errorf("The referee announced that this round may close on the weekend if every living player has voted."))
	}
	switch n := len(s.Asked); {
	case n == 1:
		add(phrase.Errorf("1 extension request is with the referee."))
	case n > 1:
		add(phrase.Errorf("%d extension requests are with the referee.", n))
	}
	for _, p := range s.Players {
		switch {
		case !p.Alive || p.Missed == 0:
		case p.Missed == 1:
			add(phrase.Errorf("%s has missed 1 vote; a second missed vote removes a player.", p.Name))
		default:
			add(phrase.Errorf("%s has missed %d votes; a second missed vote removes a player.", p.Name, p.Missed))
		}
	}
	if s.Paused {
		add(phrase.Errorf("The game is paused; the clock resumes when the referee says so."))
	}
	return notes
}

// Status is a private status: a player's own (STATUS) or the referee's
// whole view (F2).
type Status struct {
	Game      string       `json:"game"`
	Phase     Phase        `json:"phase"`
	Day       int          `json:"day"`
	Round     RoundKind    `json:"round,omitempty"`
	Deadline  time.Time    `json:"deadline,omitempty"`
	Paused    bool         `json:"paused,omitempty"`
	Setup     string       `json:"setup"`
	Players   []PlayerLine `json:"players"`
	Mafiosi   []string     `json:"mafiosi,omitempty"`
	Actions   []string     `json:"actions,omitempty"`
	HeldPosts int          `json:"held_posts,omitempty"`
}

// PlayerLine is one player in a status.
type PlayerLine struct {
	Slot          int    `json:"slot"`
	Name          string `json:"name"`
	Role          Role   `json:"role,omitempty"`
	Alive         bool   `json:"alive"`
	Cause         Cause  `json:"cause,omitempty"`
	Missed        int    `json:"missed,omitempty"`
	Vote          string `json:"vote,omitempty"`
	Locked        bool   `json:"locked,omitempty"`
	Saves         int    `json:"saves,omitempty"`
	LastProtected string `json:"last_protected,omitempty"`
	Shots         int    `json:"shots,omitempty"`
}
