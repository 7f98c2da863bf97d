package templates

// The commands players see, by channel and role. They live here, with the
// rest of the wording; compose only picks the list that fits the reader.

// ThreadCommands work in the town thread (docs/design.md "Commands").
var ThreadCommands = []Command{
	{"VOTE Name", "vote for a player; a new vote replaces the old one"},
	{"VOTE NULL", "a placeholder vote; still null at the close, it counts as a missed vote"},
	{"UNVOTE", "withdraw your vote"},
	{"LOCK", "lock your vote; the round closes early once everyone not in jeopardy has locked"},
	{"UNLOCK", "unlock it"},
	{"EXTEND", "ask the referee for more time"},
	{"TALLY", "get the official tally privately"},
	{"HELP", "this list, privately"},
	{"HELP RULES", "the rules of the game, privately"},
}

// roleCommands are each role's night commands, for its private channel.
var roleCommands = map[string][]Command{
	"Mafia": {
		{"KILL Name", "name tonight's victim; any living Mafioso may, and the latest one stands"},
		{"NO KILL", "no victim tonight (the town then votes an extra round)"},
	},
	"Inspector": {
		{"INSPECT Name", "inspect a player tonight; the answer comes at dawn"},
	},
	"Doctor": {
		{"PROTECT Name", "protect a player tonight, yourself allowed, never the same player two nights running"},
	},
	"Vigilante": {
		{"SHOOT Name", "shoot a player, by night or by day"},
		{"PASS", "no shot tonight"},
	},
}

// privateCommands work in every player's private channel.
var privateCommands = []Command{
	{"STATUS", "your own position: role, vote, tonight's action"},
	{"TALLY", "the official tally"},
	{"EXTEND", "ask the referee for more time"},
	{"MAIL DIGEST", "take the town thread gathered every few hours, fewer mails (MAIL EACH: every post at once)"},
	{"CALENDAR OFF", "no calendar event with each vote's deadline (CALENDAR ON: have them again)"},
	{"ZONE Europe/Berlin", "show every time in your mail in your own zone too (ZONE alone: the one you have)"},
	{"LANGUAGE de", "your mail in another language: en, de, fr or es (LANGUAGE alone: the one you have)"},
	{"HELP", "your commands"},
	{"HELP RULES", "the rules of the game"},
}

// DeadCommands are what a dead player can still ask for.
var DeadCommands = []Command{
	{"STATUS", "your own position"},
	{"HELP", "this list"},
	{"HELP RULES", "the rules of the game"},
}

// MafiaCommands work on the mafia list, beside discussion.
var MafiaCommands = []Command{
	{"KILL Name", "name tonight's victim; every living Mafioso is told"},
	{"NO KILL", "no victim tonight"},
}

// RefereeCommands work in the referee's channel (F1, F2).
var RefereeCommands = []Command{
	{"ADD Name address", "sign a player up"},
	{"SETUP classic", "choose a setup (or mafia150, or key=value pairs) before the start"},
	{"START", "draw the roles and open Day 1"},
	{"CLOSE", "close the running round, or end the night, now"},
	{"EXTEND 12h", "extend the running round or night"},
	{"DEADLINE 2026-12-04 18:00", "set the deadline, in the game's zone"},
	{"GRANT 12h", "grant the waiting extension requests"},
	{"DENY", "deny them"},
	{"WEEKEND CLOSE", "let this round close on the weekend (D7)"},
	{"REPLACE Name WITH address", "give a seat to a substitute"},
	{"MODKILL Name", "remove a player from the game"},
	{"SUSPEND address", "suspend an address from its next game"},
	{"RELAY n", "post held post n in the thread"},
	{"REJECT n", "reject held post n (REJECT n SUSPEND also suspends its author)"},
	{"ADMIT address", "let an observer read the thread"},
	{"PAUSE", "stop the clock"},
	{"RESUME", "start it again; deadlines move by the pause"},
	{"ANNOUNCE", "post the rest of the message as an announcement"},
	{"STATUS", "every role, tonight's actions, saves and shots left"},
	{"TALLY", "the official tally"},
	{"END", "end the game and reveal every role"},
	{"HELP RULES", "the rules as players get them"},
}

// ObserverCommands work for observers, in any channel.
var ObserverCommands = []Command{
	{"TALLY", "the official tally"},
	{"HELP", "this list"},
	{"HELP RULES", "the rules of the game"},
}

// SignupCommands work at a game's sign-up address.
var SignupCommands = []Command{
	{"JOIN Name", "sign up under the name you want to play as"},
	{"HELP", "how to play"},
	{"HELP RULES", "the rules of the game"},
}

// RenameCommand works in a player's private channel until the game starts.
var RenameCommand = Command{"JOIN Name", "before the start: play under another name"}

// RoleCommands returns a role's night commands (none for a Townsperson).
func RoleCommands(role string) []Command { return roleCommands[role] }

// PrivateCommands returns the commands of a player's private channel.
func PrivateCommands(role string) []Command {
	return append(append([]Command(nil), roleCommands[role]...), privateCommands...)
}

// Situation is where a player stands in one of their conversations, for
// the commands a footer suggests.
type Situation struct {
	Channel    Channel
	Phase      string // "signup", "day", "night", "ended"
	Paused     bool
	Alive      bool
	Role       string
	Voted      bool // a vote, null or not, stands
	Locked     bool
	OwesAction bool // tonight's action is still missing
	Shots      bool // a Vigilante with shots left
}

// Suggest returns the one or two commands that make sense for a player at
// this moment in this conversation: never VOTE or LOCK for the dead, never
// a night action by day (but the Vigilante's SHOOT), nothing once the game
// is over.
func Suggest(s Situation) []Command {
	pick := func(list []Command, syntax ...string) []Command {
		var out []Command
		for _, want := range syntax {
			for _, c := range list {
				if c.Syntax == want {
					out = append(out, c)
				}
			}
		}
		return out
	}
	switch {
	case s.Phase == "ended":
		return nil
	case s.Phase == "signup" && s.Channel == Private && s.Role == "":
		// Signed up, roles not yet drawn: the name can still change.
		return []Command{RenameCommand}
	case s.Phase == "signup" || s.Paused || !s.Alive:
		if s.Channel == Thread || s.Channel == Mafia {
			return nil
		}
		return pick(privateCommands, "STATUS")
	}
	night := s.Phase == "night"
	switch s.Channel {
	case Thread:
		switch {
		case night:
			return nil // the footer leads to the private channel
		case !s.Voted:
			return pick(ThreadCommands, "VOTE Name", "TALLY")
		case !s.Locked:
			return pick(ThreadCommands, "LOCK", "TALLY")
		}
		return pick(ThreadCommands, "UNLOCK", "TALLY")
	case Mafia:
		if night {
			return MafiaCommands
		}
		return nil
	}
	role := roleCommands[s.Role]
	switch {
	case night && s.OwesAction && len(role) > 0:
		if len(role) > 2 {
			role = role[:2]
		}
		return role
	case !night && s.Role == "Vigilante" && s.Shots:
		return append(pick(role, "SHOOT Name"), pick(privateCommands, "STATUS")...)
	case night:
		return pick(privateCommands, "STATUS")
	}
	return pick(privateCommands, "STATUS", "TALLY")
}
