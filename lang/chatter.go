package lang

import (
	"encoding/json"
	"io/fs"
)

// Chatter is what a demo bot writes in the thread after its vote, in the
// language: the lines of chatter.json (a JSON array), each with one %s for the player voted
// for. A demo game shows a language's players what a thread of their own
// looks like, so the talk is the language's, not a translation of one
// list. A language without the file talks as English does.
func (l *Language) Chatter() []string {
	b, err := fs.ReadFile(l.files, "chatter.json")
	var out []string
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil || len(out) == 0 {
		if l.Tag != Default {
			return Get(Default).Chatter()
		}
		return nil
	}
	return out
}
