package engine

import (
	"strings"

	"github.com/mafiamail/mafiamail/lang"
)

// language sets or shows the language a player's own mail is written in
// (LANGUAGE). Like ZONE it changes only the player's own copies: everyone
// else's mail reads as before, and the thread stays one conversation.
func (t *step) language(c Command) error {
	s := t.s
	if c.Channel != Private {
		return refuse(NotAllowed, "LANGUAGE works in your private channel: reply to your role mail")
	}
	p := s.Player(c.By.Slot)
	text := strings.TrimSpace(c.Text)
	if text == "" {
		t.emit(Event{Type: EvLanguageShown, To: toPlayer(p.Slot), Slot: p.Slot, Text: s.LanguageOf(p)})
		return nil
	}
	tag, ok := lang.Match(text)
	if !ok {
		return refuse(BadArgument, "%q is not a language of this host; write LANGUAGE and one of %s", text, strings.Join(lang.Tags(), ", "))
	}
	if tag == s.GameLanguage() {
		tag = "" // the game's own: the player follows the game's from now on
	}
	t.emit(Event{Type: EvLanguageSet, To: toPlayer(p.Slot), Slot: p.Slot, Text: tag})
	return nil
}

// GameLanguage is the language of the game's mail to everyone who chose
// none: the setup's (the host's default when the game was created, unless
// the referee set another).
func (s *State) GameLanguage() string {
	if s.Setup.Language != "" {
		return s.Setup.Language
	}
	return lang.Default
}

// LanguageOf is the language of a player's own mail: theirs, or the
// game's (p nil: the game's, for the referee, observers and the sign-up).
func (s *State) LanguageOf(p *Player) string {
	if p != nil && p.Language != "" {
		return p.Language
	}
	return s.GameLanguage()
}
