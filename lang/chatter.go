package lang

import (
	"io/fs"
	"strings"
)

// Chatter is what a demo bot writes in the thread after its vote, in the
// language: lines of chatter.txt, each with one %s for the player voted
// for. A demo game shows a language's players what a thread of their own
// looks like, so the talk is the language's, not a translation of one
// list. A language without the file talks as English does.
func (l *Language) Chatter() []string {
	b, err := fs.ReadFile(l.files, "chatter.txt")
	if err != nil {
		if l.Tag != Default {
			return Get(Default).Chatter()
		}
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}
