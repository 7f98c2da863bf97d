// Package docs holds the project's documents, and gives the binary the one
// part of them it sends: the rules as players read them, from rules.md
// itself, so that the mail and the document are one text.
package docs

import (
	_ "embed"
	"strings"
)

//go:embed rules.md
var rules string

// The markers around the players' part of rules.md.
const (
	playersBegin = "<!-- players: begin -->"
	playersEnd   = "<!-- players: end -->"
)

// PlayersRules is the players' part of rules.md, as Markdown: the text
// between its two markers, without them.
func PlayersRules() string {
	_, rest, ok := strings.Cut(rules, playersBegin)
	if !ok {
		return ""
	}
	part, _, ok := strings.Cut(rest, playersEnd)
	if !ok {
		return ""
	}
	return strings.TrimSpace(part) + "\n"
}
