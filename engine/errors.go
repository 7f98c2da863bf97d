package engine

import (
	"strings"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

// Reason classifies a refusal, for the mail layer and for tests.
type Reason string

// Why a command can be refused.
const (
	UnknownName    Reason = "unknown_name"
	AmbiguousName  Reason = "ambiguous_name"
	WrongPhase     Reason = "wrong_phase"
	NotYourRole    Reason = "not_your_role"
	Dead           Reason = "dead"
	NotAllowed     Reason = "not_allowed"
	BadTarget      Reason = "bad_target"
	SameProtect    Reason = "same_protect"
	NoShotsLeft    Reason = "no_shots_left"
	ConsecutiveVig Reason = "consecutive_shot"
	AlreadyShot    Reason = "already_shot"
	SameShot       Reason = "same_shot"
	NotInGame      Reason = "not_in_game"
	Suspended      Reason = "suspended"
	BadArgument    Reason = "bad_argument"
	Duplicate      Reason = "duplicate"
	GameFull       Reason = "game_full"
	PausedGame     Reason = "paused"
	GameOver       Reason = "game_over"
	BadSetup       Reason = "bad_setup"
	NoSuchPost     Reason = "no_such_post"
	NotYourName    Reason = "not_your_name"
)

// Refusal is a refused command: a reason code and a sentence for the sender.
type Refusal struct {
	Reason Reason
	// Message is the sentence in English, for logs and tests; Phrase is
	// the same sentence as its format and arguments, which the mail
	// words in its reader's language.
	Message string
	Phrase  *phrase.Error
	// Candidates lists the names that might have been meant, for an
	// unknown or ambiguous name.
	Candidates []string
}

func (r *Refusal) Error() string {
	if len(r.Candidates) == 0 {
		return r.Message
	}
	return r.Message + " (did you mean: " + strings.Join(r.Candidates, ", ") + "?)"
}

func refuse(reason Reason, format string, args ...any) *Refusal {
	p := phrase.Errorf(format, args...)
	return &Refusal{Reason: reason, Message: p.Error(), Phrase: p}
}

// refuseErr is a refusal whose sentence is err's (a setup's or a time's
// that cannot be read).
func refuseErr(reason Reason, err error) *Refusal {
	p := phrase.Errorf("%v", err)
	return &Refusal{Reason: reason, Message: p.Error(), Phrase: p}
}
