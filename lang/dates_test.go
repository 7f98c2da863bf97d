package lang

import (
	"strings"
	"testing"
	"time"
)

// TestEveryWeekdayAndMonthInEveryLanguage: the names a date is written
// with are CLDR's for each language, for every weekday and every month,
// and a full date puts them where the language's layout says.
func TestEveryWeekdayAndMonthInEveryLanguage(t *testing.T) {
	want := map[string]struct{ days, months []string }{
		"en": {[]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"},
			[]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}},
		"de": {[]string{"So.", "Mo.", "Di.", "Mi.", "Do.", "Fr.", "Sa."},
			[]string{"Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."}},
		"fr": {[]string{"dim.", "lun.", "mar.", "mer.", "jeu.", "ven.", "sam."},
			[]string{"janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."}},
		"es": {[]string{"dom.", "lun.", "mar.", "mié.", "jue.", "vie.", "sáb."},
			[]string{"ene.", "feb.", "mar.", "abr.", "may.", "jun.", "jul.", "ago.", "sept.", "oct.", "nov.", "dic."}},
	}
	for _, l := range All() {
		w, ok := want[l.Tag]
		if !ok {
			t.Errorf("no names to expect for %s", l.Tag)
			continue
		}
		for d := time.Sunday; d <= time.Saturday; d++ {
			if got := l.Weekday(d); got != w.days[d] {
				t.Errorf("%s %v: %q, want %q", l.Tag, d, got, w.days[d])
			}
			// 2026-11-29 is a Sunday.
			at := time.Date(2026, 11, 29+int(d), 21, 47, 0, 0, time.UTC)
			if s := l.Time(LayoutDateTime, at); !strings.Contains(s, w.days[d]) || !strings.Contains(s, "21:47") {
				t.Errorf("%s: %v is written %q", l.Tag, at, s)
			}
		}
		for m := time.January; m <= time.December; m++ {
			if got := l.Month(m); got != w.months[m-1] {
				t.Errorf("%s %v: %q, want %q", l.Tag, m, got, w.months[m-1])
			}
			at := time.Date(2026, m, 8, 9, 5, 0, 0, time.UTC)
			if s := l.Time(LayoutDateTime, at); !strings.Contains(s, w.months[m-1]) || !strings.Contains(s, "2026") || !strings.Contains(s, "09:05") {
				t.Errorf("%s: %v is written %q", l.Tag, at, s)
			}
			if s := l.Time(LayoutShort, at); strings.Contains(s, "2026") || !strings.Contains(s, w.months[m-1]) {
				t.Errorf("%s: %v without its year is written %q", l.Tag, at, s)
			}
		}
	}
	// A whole date, as each language's readers write it.
	at := time.Date(2026, 12, 3, 22, 0, 0, 0, time.FixedZone("EST", -5*3600))
	for tag, s := range map[string]string{
		"en": "Thu 3 Dec 2026 22:00 EST",
		"de": "Do. 3. Dez. 2026, 22:00 EST",
		"fr": "jeu. 3 déc. 2026 à 22:00 EST",
		"es": "jue. 3 dic. 2026, 22:00 EST",
	} {
		if got := Get(tag).Time(LayoutDateTime, at); got != s {
			t.Errorf("%s: %q, want %q", tag, got, s)
		}
	}
}

// TestPluralsFollowCLDR: one form for one in every language, and for
// zero in French alone.
func TestPluralsFollowCLDR(t *testing.T) {
	for _, c := range []struct {
		tag string
		n   int
		one bool
	}{
		{"en", 0, false}, {"en", 1, true}, {"en", 2, false},
		{"de", 0, false}, {"de", 1, true}, {"de", 2, false},
		{"fr", 0, true}, {"fr", 1, true}, {"fr", 2, false}, {"fr", 1000000, false},
		{"es", 0, false}, {"es", 1, true}, {"es", 2, false},
	} {
		if got := Get(c.tag).One(c.n); got != c.one {
			t.Errorf("%s: One(%d) = %v", c.tag, c.n, got)
		}
	}
	if got := Get("de").Plural(2, "Stimme", "Stimmen"); got != "Stimmen" {
		t.Errorf("de: %q", got)
	}
}

// TestMatchReadsLanguagesAsPeopleNameThem: tags, regional tags, and the
// languages' own and English names; nothing else.
func TestMatchReadsLanguagesAsPeopleNameThem(t *testing.T) {
	for in, want := range map[string]string{
		"de": "de", "DE": "de", "de-AT": "de", "Deutsch": "de", "german": "de",
		"fr-CA": "fr", "Français": "fr", "french": "fr", "es-MX": "es", "español": "es", "en": "en", "en-GB": "en",
	} {
		if got, ok := Match(in); !ok || got != want {
			t.Errorf("Match(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "it", "tlh", "klingon", "Deutsch bitte"} {
		if got, ok := Match(in); ok {
			t.Errorf("Match(%q) = %q, want none", in, got)
		}
	}
}
