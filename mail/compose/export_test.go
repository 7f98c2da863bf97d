package compose

// EncodeFlowed is encodeFlowed for the tests of package compose_test.
func EncodeFlowed(text string) (string, bool) {
	f := encodeFlowed(text)
	return f.text, f.delSp
}
