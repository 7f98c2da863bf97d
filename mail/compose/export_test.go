package compose

// EncodeFlowed encodes text as format=flowed as the composer does, for the
// tests of package compose_test.
func EncodeFlowed(text string) (string, bool) {
	f := plainFlow.Encode(text)
	return f.Text, f.DelSp
}

// LayOutAlone is a copy of c that lays out every copy of a batch on its
// own, sharing nothing: what the shared layout must come to.
func LayOutAlone(c *Composer) *Composer {
	a := *c
	a.alone = true
	return &a
}

// NightLines is nightLines, for the tests of package compose_test.
var NightLines = nightLines
