// Package docs holds the project's documents. It has no code: its tests
// hold the documents to the code (every setup key, configuration key and
// command they list, every relative link they make). The rules as players
// read them, which the binary mails, are lang/en/rules.md and its
// translations, embedded by package lang.
package docs
