// Package lang holds the languages the host writes and reads, one folder
// each: the folder of a language holds pages.json (its wording of every
// phrase the message templates of package templates mark, keyed by the
// English wording; the templates themselves are written once, for every
// language), messages*.json (the phrases
// the Go code builds, keyed by their English wording, and the layout of a
// date), verbs.json (the language's own command verbs, beside the English
// ones that always work), rules.md (the rules as players read them, in
// plain words: HELP RULES mails them; docs/rules.md is the referee's
// statement of the same rules, with their IDs) and chatter.json (what the
// demo's bots say in the thread).
//
// A fifth language is a fifth folder and one line in registry below; no
// template and no code that builds a message changes. The tests of this
// package and of package templates fail when a language lacks a file, a
// phrase or a placeholder that English has.
//
// Plural forms follow CLDR's rules through golang.org/x/text/feature/plural,
// and the names of weekdays and months come from CLDR through
// github.com/go-playground/locales: Go's time package knows only English
// names, and a table of our own would be a partial copy of CLDR.
package lang

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-playground/locales"
	"github.com/go-playground/locales/de"
	"github.com/go-playground/locales/en"
	"github.com/go-playground/locales/es"
	"github.com/go-playground/locales/fr"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

//go:embed */*.json */rules.md
var files embed.FS

// registry lists the languages, English first: it is the default, the
// language every other one is checked against, and the one a missing
// phrase falls back to.
var registry = []struct {
	tag    string
	name   string // in the language itself, as LANGUAGE lists it
	locale locales.Translator
}{
	{"en", "English", en.New()},
	{"de", "Deutsch", de.New()},
	{"fr", "Français", fr.New()},
	{"es", "Español", es.New()},
}

// Default is the language of a host, a game or a player that chose none.
const Default = "en"

// Language is one language: its files, its phrases and its verbs.
type Language struct {
	Tag  string
	Name string

	tag      language.Tag
	locale   locales.Translator
	files    fs.FS
	messages map[string]string
	pages    map[string]string
	verbs    map[string]string
}

var (
	byTag   = map[string]*Language{}
	tags    []string
	matcher language.Matcher
)

func init() {
	var ts []language.Tag
	for _, r := range registry {
		sub, err := fs.Sub(files, r.tag)
		if err != nil {
			panic(fmt.Errorf("lang %s: %w", r.tag, err))
		}
		l, err := Load(r.tag, r.name, r.locale, sub)
		if err != nil {
			// The files are part of the binary; a broken one is a build
			// error that this package's tests report first.
			panic(err)
		}
		byTag[r.tag] = l
		tags = append(tags, r.tag)
		ts = append(ts, l.tag)
	}
	matcher = language.NewMatcher(ts)
}

// Load reads a language from its folder. The registered languages are
// loaded from this package's own folders; Load is for a language that is
// not one of them yet, such as a test's pseudo-language.
func Load(tag, name string, loc locales.Translator, sub fs.FS) (*Language, error) {
	t, err := language.Parse(tag)
	if err != nil {
		return nil, fmt.Errorf("lang %s: %w", tag, err)
	}
	l := &Language{Tag: tag, Name: name, tag: t, locale: loc, files: sub}
	// The phrases may be split over several files (messages.json,
	// messages-refusals.json, ...); a phrase worded twice is an error.
	l.messages = map[string]string{}
	names, err := fs.Glob(sub, "messages*.json")
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("lang %s: no messages.json", tag)
	}
	for _, n := range names {
		m, err := readMap(sub, n)
		if err != nil {
			return nil, fmt.Errorf("lang %s: %w", tag, err)
		}
		for k, v := range m {
			// A phrase built with phrase.Errorf has its %w as %v.
			k, v = strings.ReplaceAll(k, "%w", "%v"), strings.ReplaceAll(v, "%w", "%v")
			if _, dup := l.messages[k]; dup {
				return nil, fmt.Errorf("lang %s: %s words %q again", tag, n, k)
			}
			l.messages[k] = v
		}
	}
	// English has no pages.json: its wording of a page's phrases is the
	// English the templates are written in.
	l.pages = map[string]string{}
	if _, err := fs.Stat(sub, "pages.json"); err == nil {
		if l.pages, err = readMap(sub, "pages.json"); err != nil {
			return nil, fmt.Errorf("lang %s: %w", tag, err)
		}
	}
	verbs, err := readMap(sub, "verbs.json")
	if err != nil {
		return nil, fmt.Errorf("lang %s: %w", tag, err)
	}
	l.verbs = map[string]string{}
	for k, v := range verbs {
		l.verbs[strings.ToUpper(k)] = strings.ToUpper(v)
	}
	return l, nil
}

func readMap(fsys fs.FS, name string) (map[string]string, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// Tags lists the languages' tags, English first.
func Tags() []string { return append([]string(nil), tags...) }

// All lists the languages, English first.
func All() []*Language {
	out := make([]*Language, 0, len(tags))
	for _, t := range tags {
		out = append(out, byTag[t])
	}
	return out
}

// Get is the language of tag, or English for a tag that names none ("" as
// well): mail always goes out in some language.
func Get(tag string) *Language {
	if l, ok := byTag[tag]; ok {
		return l
	}
	return byTag[Default]
}

// Known reports whether tag names a language exactly ("de").
func Known(tag string) bool {
	_, ok := byTag[tag]
	return ok
}

// Match reads a language as people name it: a tag ("de", "de-AT",
// "DE"), or the language's own name or its English one ("Deutsch",
// "german"). It reports false for anything else, and for a language the
// host does not speak.
func Match(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	for _, l := range All() {
		if strings.EqualFold(s, l.Tag) || strings.EqualFold(s, l.Name) ||
			strings.EqualFold(s, englishName(l.tag)) {
			return l.Tag, true
		}
	}
	t, err := language.Parse(s)
	if err != nil {
		return "", false
	}
	_, i, conf := matcher.Match(t)
	// The matcher falls back on the first language, sometimes with high
	// confidence ("tlh" gives English): only the same language counts.
	want, _ := t.Base()
	got, _ := byTag[tags[i]].tag.Base()
	if conf < language.High || want != got {
		return "", false
	}
	return tags[i], true
}

func englishName(t language.Tag) string {
	switch b, _ := t.Base(); b.String() {
	case "en":
		return Key("English")
	case "de":
		return Key("German")
	case "fr":
		return Key("French")
	case "es":
		return Key("Spanish")
	}
	return ""
}

// EnglishName is the language's name in English ("German"): the key of
// its name in every language's phrases ("Deutsch", "allemand").
func (l *Language) EnglishName() string { return englishName(l.tag) }

// Rules is the rules as players read them, in Markdown.
func (l *Language) Rules() string {
	b, err := fs.ReadFile(l.files, "rules.md")
	if err != nil {
		return ""
	}
	return string(b)
}

// Phrase is the language's wording of an English phrase, or the phrase
// itself when the language has none (English has none: its phrases are
// their own keys).
func (l *Language) Phrase(english string) string {
	if l != nil {
		if s, ok := l.messages[english]; ok {
			return s
		}
	}
	return english
}

// Page is the language's wording of one phrase of the message templates,
// by its key (see package templates), and whether it has one. English has
// none: its wording is in the key.
func (l *Language) Page(key string) (string, bool) {
	s, ok := l.pages[key]
	return s, ok
}

// PageKeys lists the keys of the template phrases the language words.
func (l *Language) PageKeys() []string { return slices.Sorted(maps.Keys(l.pages)) }

// Has reports whether the language words an English phrase itself (the
// wording may be the English one: "%d min" reads the same in German).
func (l *Language) Has(english string) bool {
	_, ok := l.messages[english]
	return ok
}

// Sprintf formats an English format string in the language: the
// language's wording of format, with args in the places it puts them
// (explicit argument indexes, %[2]s, let a translation reorder them).
func (l *Language) Sprintf(format string, args ...any) string {
	return fmt.Sprintf(l.Phrase(format), args...)
}

// Plural picks the form of a count's noun by the language's CLDR plural
// rule: one when the rule says "one", other otherwise (French's "many",
// for millions, reads like its "other").
func (l *Language) Plural(n int, one, other string) string {
	if l.One(n) {
		return one
	}
	return other
}

// One reports whether n takes the singular in the language: 1 in
// English, German and Spanish, 0 and 1 in French.
func (l *Language) One(n int) bool {
	abs := n
	if abs < 0 {
		abs = -abs
	}
	return plural.Cardinal.MatchPlural(l.tag, abs, 0, 0, 0, 0) == plural.One
}

// Count writes a count with its noun, formatted by the language's phrases
// for the two English forms ("%d vote", "%d votes").
func (l *Language) Count(n int, one, other string) string {
	if l.One(n) {
		return l.Sprintf(one, n)
	}
	return l.Sprintf(other, n)
}

// Weekday is the abbreviated name of a weekday ("Thu", "Do.", "jeu.").
func (l *Language) Weekday(d time.Weekday) string { return l.locale.WeekdayAbbreviated(d) }

// Month is the abbreviated name of a month ("Dec", "Dez.", "déc.").
func (l *Language) Month(m time.Month) string { return l.locale.MonthAbbreviated(m) }

// The layouts of a time in messages.json: "@datetime" with the year,
// "@datetime-short" without it, "@weekday-time" for the reader's own zone.
// Their fields are {weekday}, {day}, {month}, {year}, {time} (24-hour
// clock) and {zone}.
const (
	LayoutDateTime = "@datetime"
	LayoutShort    = "@datetime-short"
	LayoutWeekday  = "@weekday-time"
)

// Time writes t (already in the zone to show) by one of the language's
// layouts.
func (l *Language) Time(layout string, t time.Time) string {
	f := l.Phrase(layout)
	if f == layout {
		f = Get(Default).Phrase(layout)
	}
	// Every message shows times, most of them several: the fields are
	// filled in by one pass over the layout, each worked out only where it
	// appears, rather than by a strings.Replacer built for every call.
	var b strings.Builder
	b.Grow(len(f) + 16)
	for {
		i := strings.IndexByte(f, '{')
		if i < 0 {
			b.WriteString(f)
			return b.String()
		}
		b.WriteString(f[:i])
		f = f[i:]
		field, _, ok := strings.Cut(f[1:], "}")
		if !ok {
			b.WriteString(f)
			return b.String()
		}
		switch field {
		case "weekday":
			b.WriteString(l.Weekday(t.Weekday()))
		case "day":
			b.WriteString(strconv.Itoa(t.Day()))
		case "month":
			b.WriteString(l.Month(t.Month()))
		case "year":
			b.WriteString(strconv.Itoa(t.Year()))
		case "time":
			var buf [8]byte
			b.Write(t.AppendFormat(buf[:0], "15:04"))
		case "zone":
			b.WriteString(l.Phrase(t.Format("MST")))
		default:
			// Not a field: the brace is text.
			b.WriteByte('{')
			f = f[1:]
			continue
		}
		f = f[len(field)+2:]
	}
}

// Verb is the English verb a word (or two) of the language stands for,
// upper case, and whether it is one. English verbs are not listed: they
// are the grammar's own.
func (l *Language) Verb(word string) (string, bool) {
	v, ok := l.verbs[strings.ToUpper(word)]
	return v, ok
}

// Verbs lists the language's own verbs and the English verb each stands
// for, sorted by the language's verb.
func (l *Language) Verbs() [][2]string {
	var out [][2]string
	for k, v := range l.verbs {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Phrases lists the English phrases the language words its own way.
func (l *Language) Phrases() []string { return slices.Sorted(maps.Keys(l.messages)) }

// Error words err in the language: a *phrase.Error (an engine refusal, a
// grammar error) by the language's phrases, any other error as it is.
func (l *Language) Error(err error) string {
	if err == nil {
		return ""
	}
	var p *phrase.Error
	if errors.As(err, &p) && p.Error() == err.Error() {
		return p.Sprint(l.Phrase)
	}
	return err.Error()
}

// Key marks an English phrase that is worded later, where the reader's
// language is known (a cause of death a template words with "word"): it
// returns s unchanged, and tells the test that checks every language's
// phrases that s is one.
func Key(s string) string { return s }
