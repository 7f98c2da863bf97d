package reply

import (
	"strings"
	"testing"
)

// Every language of the table can be read in each of its parts: an
// attribution, a header block (From, a date, To, Subject), the original
// and forward separators and a mobile signature; and every attribution
// ends with its colon, which is what a line is first tested for.
func TestPatternTable(t *testing.T) {
	have := map[string]map[string]bool{}
	for _, p := range tablePatterns() {
		if have[p.Lang] == nil {
			have[p.Lang] = map[string]bool{}
		}
		have[p.Lang][p.Kind] = true
		if p.Kind == kindAttribution && !strings.HasSuffix(matchText(p.Text), ":") {
			t.Errorf("%s %s: attribution %q does not end with a colon", p.Lang, p.Client, p.Text)
		}
	}
	for lang, kinds := range have {
		for _, k := range []string{kindAttribution, "from", "date", "to", "subject", kindOriginal, kindForward, kindMobile} {
			if !kinds[k] {
				t.Errorf("language %s has no %s pattern", lang, k)
			}
		}
	}
	if len(have) < 21 {
		t.Errorf("%d languages, want the 21 the package claims", len(have))
	}
}

func TestPatternTableErrors(t *testing.T) {
	for _, src := range []string{
		"en | attribution | Gmail",                             // a field missing
		"en | attribution |  | On … wrote:",                    // no client
		"en | wrote | Gmail | On … wrote:",                     // an unknown kind
		"en | from | Outlook | From\nde | to | Outlook | From", // one name, two kinds
		"en | original | Outlook | Original Message\nen | forward | Outlook | Original Message",
	} {
		if _, err := load(src); err == nil {
			t.Errorf("load(%q) took it", src)
		}
	}
	tb, err := load("# a comment\n\nen | attribution | Gmail | On … wrote:\n")
	if err != nil || len(tb.attributions) != 1 {
		t.Fatalf("load: %v, %+v", err, tb)
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		want          bool
	}{
		{"On … wrote:", "on mon, 3 mar 2025 x wrote:", true},
		{"On … wrote:", "on wrote:", false}, // "…" is at least one character
		{"Am … schrieb …:", "am 3. märz schrieb x <x@y>:", true},
		{"#-#-# … <…@…>:", "2014-03-20 8:48 gmt+01:00 x <x@y>:", true},
		{"#-#-# … <…@…>:", "2014-03 8:48 x <x@y>:", false},
		{"#年#月#日… <…@…>:", "2025年3月3日(月) 10:15 x <x@y>:", true},
		{"…写道:", "x <x@y> 于2025年3月3日周一 10:15写道:", true},
		{"Sent from my …", "sent from my iphone", true},
		{"Sent from my …", "sent from my", false},
	} {
		g := compileGlob(pattern{Text: c.pattern}, matchText(c.pattern))
		if got := g.match(matchText(c.text)); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v", c.pattern, c.text, got, c.want)
		}
	}
}
